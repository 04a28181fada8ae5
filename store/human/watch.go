package human

import (
	"fmt"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// WatchLine is the one sentence every surface says of a watch (issue 37):
// "Billing on RPT-SQL01: last restore 3.1× its usual time (1 Dec 2026
// 04:10 UTC) — watching". The ratio is of durations where both are known,
// else of throughput; a faster restore says "faster than usual".
func WatchLine(w *store.Watch) string {
	what := fmt.Sprintf("%s on %s", Printable(w.Database), Printable(w.Instance))
	if w.Kind != store.KindFull {
		what = fmt.Sprintf("%s (%s restores) on %s", Printable(w.Database), w.Kind, Printable(w.Instance))
	}
	d := w.DurationRatio
	if !(d > 0) && w.Ratio > 0 {
		d = 1 / w.Ratio
	}
	how := fmt.Sprintf("last restore %s its usual time", Times(d))
	if w.Direction == "improvement" && d > 0 {
		how = fmt.Sprintf("last restore %s faster than usual", Times(1/d))
	}
	state := "watching"
	switch w.State {
	case store.WatchClosed:
		state = "back to usual"
	case store.WatchConfirmed:
		state = "confirmed by the next restore"
	}
	return fmt.Sprintf("%s: %s (%s) — %s", what, how, Stamp(w.OpenedAt), state)
}

// Times words a ratio as people read one: "3.1×" (two significant digits
// below 10, whole numbers above).
func Times(r float64) string {
	switch {
	case !(r > 0):
		return "?×"
	case r < 10:
		return fmt.Sprintf("%.1f×", r)
	}
	return fmt.Sprintf("%.0f×", r)
}

// Stamp is an instant as the watch lines and alerts give it: "1 Dec 2026
// 04:10 UTC".
func Stamp(t time.Time) string { return t.UTC().Format("2 Jan 2006 15:04 UTC") }
