// Package human writes measures and names the way a reader expects them:
// one duration format ("2.6 s", "16 min", "9 h 46 min", "3 d 4 h"), one
// throughput format, human tick steps for duration axes, the factor names
// of the analysis in words, and how a typed instance or database name
// matches (by case and prefix) with the closest names to suggest when it
// does not. The command line and the web both call it, so a restore reads,
// and a filter matches, the same everywhere.
package human

import (
	"math"
	"strconv"
	"strings"
)

// Duration writes a duration given in seconds with at most two units, the
// larger first, rounded to the nearest value of the smaller unit shown:
//
//	0                 "0 s"
//	(0, 0.005)        "< 0.01 s"   (a real, if tiny, duration never reads 0)
//	below 1 s         "0.45 s"     (two decimals)
//	below 10 s        "2.6 s", "3 s" (one decimal, a trailing ".0" dropped)
//	below 1 min       "45 s"
//	below 10 min      "2 min 5 s", "2 min"
//	below 1 h         "16 min"     (whole minutes)
//	below 1 d         "9 h 46 min", "9 h"
//	from 1 d          "3 d 4 h", "3 d", "1,204 d 7 h" (whole hours)
//
// Each tier is chosen on the value rounded for it, so rounding carries into
// the next unit instead of printing "60 s" or "60 min": 59.95 s is "1 min",
// 3599.5 s is "1 h". Negative, NaN and infinite values are "unknown": a
// duration below zero can only be bad data. Values beyond 2^53 s (where
// whole seconds stop being exact) are written in days with three
// significant digits ("1.16e+295 d").
func Duration(seconds float64) string {
	v := seconds
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0) || v < 0:
		return "unknown"
	case v == 0:
		return "0 s"
	case v >= 1<<53:
		return strconv.FormatFloat(v/86400, 'g', 3, 64) + " d"
	}
	if r := math.Round(v*100) / 100; r < 1 {
		if r == 0 {
			return "< 0.01 s"
		}
		return strconv.FormatFloat(r, 'f', 2, 64) + " s"
	}
	if r := math.Round(v*10) / 10; r < 10 {
		return strings.TrimSuffix(strconv.FormatFloat(r, 'f', 1, 64), ".0") + " s"
	}
	if s := int64(math.Round(v)); s < 60 {
		return itoa(s) + " s"
	} else if s < 600 {
		return two(s/60, "min", s%60, "s")
	}
	if m := int64(math.Round(v / 60)); m < 60 {
		return itoa(m) + " min"
	} else if m < 24*60 {
		return two(m/60, "h", m%60, "min")
	}
	h := int64(math.Round(v / 3600))
	return two(h/24, "d", h%24, "h")
}

// two writes "a ua b ub", leaving out a zero second unit.
func two(a int64, ua string, b int64, ub string) string {
	s := itoa(a) + " " + ua
	if b != 0 {
		s += " " + itoa(b) + " " + ub
	}
	return s
}

// itoa writes an integer with thousands separated by commas.
func itoa(n int64) string {
	return group(strconv.FormatInt(n, 10))
}

// Count writes a count with its thousands separated by commas ("1,234",
// "-5"), as every count beside a Duration or MiBps reads.
func Count(n int64) string {
	if n < 0 {
		return "-" + group(strconv.FormatInt(n, 10)[1:])
	}
	return itoa(n)
}

// group inserts commas into a string of digits ("1234567" → "1,234,567").
func group(digits string) string {
	if len(digits) <= 3 {
		return digits
	}
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// MiBps writes a throughput in MiB/s with the precision its magnitude
// deserves: "0.35 MiB/s", "4.2 MiB/s", "215 MiB/s", "1,234 MiB/s". It never
// switches to GiB/s, so the values of one table compare at a glance; like
// Duration it rounds first and picks the precision on the rounded value
// (9.96 is "10 MiB/s", not "10.0 MiB/s"). A positive rate below 0.005 is
// "< 0.01 MiB/s"; negative, NaN and infinite values are "unknown".
func MiBps(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0) || v < 0:
		return "unknown"
	case v == 0:
		return "0 MiB/s"
	case v >= 1e15:
		return strconv.FormatFloat(v, 'g', 3, 64) + " MiB/s"
	}
	if r := math.Round(v*100) / 100; r < 1 {
		if r == 0 {
			return "< 0.01 MiB/s"
		}
		return strconv.FormatFloat(r, 'f', 2, 64) + " MiB/s"
	}
	if r := math.Round(v*10) / 10; r < 10 {
		return strconv.FormatFloat(r, 'f', 1, 64) + " MiB/s"
	}
	return itoa(int64(math.Round(v))) + " MiB/s"
}
