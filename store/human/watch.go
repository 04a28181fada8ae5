package human

import (
	"fmt"
	"strconv"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// WatchLine is the one sentence every surface says of a watch (issue 37):
// "Billing on RPT-SQL01: last restore 3.1× slower than usual
// (2026-12-01 04:10 UTC) — watching". The ratio is of durations where both are known,
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
	how := "last restore " + Change(1/d) + " than usual"
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
	if !(r >= 1) {
		if r > 0 {
			return strconv.FormatFloat(r, 'f', 2, 64) + "×"
		}
		return "?×"
	}
	f, _ := factor(r)
	return f + "×"
}

// Stamp is an instant as every surface gives it: "2026-12-01 04:10 UTC"
// (Date's style, to the minute, the zone named).
func Stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }
