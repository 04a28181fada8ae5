package view

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store/human"
	"github.com/restorewatch/restorewatch/web/chart"
)

// Formatting shared by the pages, so one quantity reads the same everywhere:
// throughput always in MiB/s, durations as 3:04:05 or "1 d 02:03:04", sizes
// in binary units, times in UTC with the zone written out.

// Unknown is what a missing measure shows.
const Unknown = "—"

// Int formats n with thousands separators.
func Int(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// MiBps formats a throughput; zero, negative or non-finite is unknown.
func MiBps(v float64) string {
	if !(v > 0) || math.IsInf(v, 0) {
		return Unknown
	}
	return chart.FormatMiBps(v)
}

// MiBpsPtr formats an optional throughput.
func MiBpsPtr(v *float64) string {
	if v == nil {
		return Unknown
	}
	return MiBps(*v)
}

// Duration formats seconds; zero, negative or non-finite is unknown (a
// zero-second restore is a measuring failure, never "0 s").
func Duration(s float64) string {
	if !(s > 0) || math.IsInf(s, 0) {
		return Unknown
	}
	return chart.FormatDuration(s)
}

// DurationPtr formats optional seconds.
func DurationPtr(s *float64) string {
	if s == nil {
		return Unknown
	}
	return Duration(*s)
}

// Hours formats a number of hours for "hours lost" figures (human.Hours,
// as the command line writes them).
func Hours(h float64) string { return human.Hours(h) }

// Bytes formats a size in binary units.
func Bytes(n int64) string {
	if n <= 0 {
		return Unknown
	}
	return human.Bytes(n)
}

// BytesPtr formats an optional size.
func BytesPtr(n *int64) string {
	if n == nil {
		return Unknown
	}
	return Bytes(*n)
}

// Ratio formats a speed ratio such as 0.31×.
func Ratio(r float64) string {
	if !(r > 0) || math.IsInf(r, 0) {
		return Unknown
	}
	if r < 10 {
		return fmt.Sprintf("%.2f×", r)
	}
	return fmt.Sprintf("%.0f×", r)
}

// Usual words a speed relative to a series' usual speed the way every
// change is worded (issue 38): "as usual", "1.2× slower than usual",
// "1.1× faster than usual"; never a bare "0.83×".
func Usual(r float64) string {
	switch c := human.Change(r); c {
	case "of unknown speed":
		return Unknown
	case "no faster or slower":
		return "as usual"
	default:
		return c + " than usual"
	}
}

// Interval formats a 95 % interval "0.25–0.38×"; unknown when not finite.
func Interval(lo, hi float64) string {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return Unknown
	}
	return fmt.Sprintf("%.2f–%.2f×", lo, hi)
}

// PValue formats a p-value the way the report explains it.
func PValue(p float64) string {
	switch {
	case math.IsNaN(p) || p < 0:
		return Unknown
	case p < 0.0001:
		return "< 0.0001"
	case p < 0.01:
		return fmt.Sprintf("%.4f", p)
	}
	return fmt.Sprintf("%.2f", p)
}

// PText states a p-value in a sentence: "p < 0.0001", "p = 0.03".
func PText(p float64) string { return human.P(p) }

// TimeSec formats an instant in UTC to the second, for one restore's page.
func TimeSec(t *time.Time) string {
	if t == nil || t.IsZero() {
		return Unknown
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// Time formats an instant in UTC.
func Time(t time.Time) string {
	if t.IsZero() {
		return Unknown
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// TimePtr formats an optional instant.
func TimePtr(t *time.Time) string {
	if t == nil {
		return Unknown
	}
	return Time(*t)
}

// Local formats an instance's wall-clock reading, which has no zone.
func Local(t *time.Time) string {
	if t == nil || t.IsZero() {
		return Unknown
	}
	return t.Format("2006-01-02 15:04:05.000") + " (instance local)"
}

// Date formats a day.
func Date(t time.Time) string {
	if t.IsZero() {
		return Unknown
	}
	return t.UTC().Format("2006-01-02")
}

// Bool formats an optional flag with the words that fit it.
func Bool(b *bool, yes, no string) string {
	switch {
	case b == nil:
		return Unknown
	case *b:
		return yes
	}
	return no
}

// IntPtr formats an optional count.
func IntPtr(n *int64) string {
	if n == nil {
		return Unknown
	}
	return Int(*n)
}

// Plural returns "1 restore" or "3 restores".
func Plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Int(n) + " " + many
}

// Change writes a relative change in whole percent with its sign ("+12 %",
// "-3 %"), and "0 %" for anything that rounds to nothing: never "-0 %".
func Change(pct float64) string { return chart.SignedPercent(pct) }
