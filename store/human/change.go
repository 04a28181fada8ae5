package human

import (
	"math"
	"strconv"
	"time"
)

// Change words a speed ratio (after ÷ before, of throughput) the one way
// people read it on every surface (issue 38): "3.4× slower", "2.1×
// faster", "no faster or slower" within rounding. The factor is always at
// least 1, so a slowdown is never "0.29×" on one page and "3.4×" on
// another; JSON keeps the raw ratio. An unknown ratio is "of unknown
// speed".
func Change(ratio float64) string {
	f, dir := factor(ratio)
	switch {
	case dir == "":
		return "of unknown speed"
	case f == "1.0":
		return "no faster or slower"
	}
	return f + "× " + dir
}

// ChangeRange words a ratio's interval in Change's direction: "3.2–3.6×
// slower" for a slowdown whose ratio lies in 0.28–0.31, "1.01–1.04×
// slower" where both ends round to one figure. An interval that
// straddles 1 is "between 1.2× slower and 1.1× faster".
func ChangeRange(lo, hi float64) string {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return "unknown"
	}
	flo, dlo := factor(lo)
	fhi, dhi := factor(hi)
	if flo == fhi && dlo == dhi && lo != hi && math.Max(1/lo, hi) < 9.95 {
		// A narrow interval near one figure keeps a second decimal, so
		// it never reads "1.0–1.0× slower".
		flo, fhi = fine(lo), fine(hi)
	}
	switch {
	case dlo == dhi && dlo == "slower":
		return fhi + "–" + flo + "× slower"
	case dlo == dhi:
		return flo + "–" + fhi + "× faster"
	}
	return "between " + Change(lo) + " and " + Change(hi)
}

// ChangeFactor is the number Change states, rounded as it states it: 3.4
// for a ratio of 0.2919, 2.1 for 2.06; 0 when unknown. What a surface
// compares with another's words.
func ChangeFactor(ratio float64) float64 {
	f, _ := factor(ratio)
	v, _ := strconv.ParseFloat(f, 64)
	return v
}

// factor is the ratio as a factor of at least 1, rounded the one way the
// product rounds it (one decimal below 10, whole above), and its direction.
// fine is a ratio's factor to two decimals, for ChangeRange.
func fine(ratio float64) string {
	if ratio < 1 {
		ratio = 1 / ratio
	}
	return strconv.FormatFloat(ratio, 'f', 2, 64)
}

func factor(ratio float64) (string, string) {
	if !(ratio > 0) || math.IsInf(ratio, 0) {
		return "", ""
	}
	dir, f := "faster", ratio
	if ratio < 1 {
		dir, f = "slower", 1/ratio
	}
	if f >= 9.95 {
		return strconv.FormatFloat(math.Round(f), 'f', 0, 64), dir
	}
	return strconv.FormatFloat(f, 'f', 1, 64), dir
}

// Date is a day as every surface writes it: "2026-10-16" (ISO 8601, UTC),
// never "16 Oct 2026" on one page and "2026-10-16" on the next.
func Date(t time.Time) string { return t.UTC().Format("2006-01-02") }

// Percent is a share of a restore's progress, whole: "55 %".
func Percent(p float64) string {
	if math.IsNaN(p) || math.IsInf(p, 0) {
		return "? %"
	}
	return strconv.FormatFloat(math.Round(p), 'f', 0, 64) + " %"
}

// Progress is how far a restore in flight has come, to a tenth of a
// percent as sys.dm_exec_requests reports it and every surface shows it
// (/live, the plan's in-flight sentence): "65.6 %", "66 %" when whole.
func Progress(p float64) string {
	if math.IsNaN(p) || math.IsInf(p, 0) {
		return "? %"
	}
	return strconv.FormatFloat(math.Round(p*10)/10, 'f', -1, 64) + " %"
}

// P states a p-value in a sentence, rounded the one way every surface
// rounds it: "p < 0.0001", "p = 0.0059", "p = 0.03".
func P(p float64) string {
	switch {
	case math.IsNaN(p) || p < 0:
		return "p unknown"
	case p < 0.0001:
		return "p < 0.0001"
	case p < 0.01:
		return "p = " + strconv.FormatFloat(p, 'f', 4, 64)
	}
	return "p = " + strconv.FormatFloat(p, 'f', 2, 64)
}
