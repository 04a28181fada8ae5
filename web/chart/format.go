package chart

import (
	"github.com/restorewatch/restorewatch/store/human"

	"math"
	"strconv"
	"strings"
)

// FormatDuration formats a duration in seconds in the one format the
// product uses everywhere, CLI included (store/human): "2.6 s", "16 min",
// "9 h 46 min", "3 d 4 h", never a clock reading like "16:00" that could be
// minutes or hours. Negative, NaN and infinite values return "unknown".
func FormatDuration(seconds float64) string { return human.Duration(seconds) }

// FormatMiBps formats a throughput in MiB/s the one way the product does
// everywhere (store/human.MiBps, issue 41): "0.35 MiB/s", "4.2 MiB/s",
// "215 MiB/s", "1,235 MiB/s", "10 MiB/s" for 9.96 (never "10.0"). It stays
// in MiB/s (never switching to GiB/s) so values in one table compare at a
// glance. Negative, NaN and infinite values return "unknown".
func FormatMiBps(v float64) string { return human.MiBps(v) }

// trimZero drops a trailing ".0" ("3.0" → "3").
func trimZero(s string) string {
	s = strings.TrimSuffix(s, ".0")
	if s == "-0" {
		return "0"
	}
	return s
}

// groupThousands inserts commas into the integer part of a decimal string.
func groupThousands(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac := s, ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		intPart, frac = s[:i], s[i:]
	}
	if len(intPart) <= 3 {
		return sign + s
	}
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return sign + b.String() + frac
}

// formatTick formats an axis tick value with as many decimals as the tick
// step needs, so ticks 0.5, 1, 1.5 read "0.5", "1.0", "1.5" consistently.
// Millions and more use an SI suffix to keep the axis narrow.
func formatTick(v, step float64) string {
	if !finite(v) {
		return ""
	}
	a := math.Abs(v)
	switch {
	case a >= 1e15:
		return strconv.FormatFloat(v, 'g', 3, 64)
	case a >= 1e12:
		return strconv.FormatFloat(v/1e12, 'g', 4, 64) + "T"
	case a >= 1e9:
		return strconv.FormatFloat(v/1e9, 'g', 4, 64) + "G"
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 4, 64) + "M"
	}
	dec := 0
	if step > 0 && step < 1 {
		dec = int(math.Ceil(-math.Log10(step) - 1e-9))
		if dec > 12 {
			dec = 12
		}
	}
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Trim(s, "-0.") == "" {
		s = strings.TrimPrefix(s, "-")
	}
	return groupThousands(s)
}

// formatLogTick formats a log-axis tick (1, 2, 5 × 10^k) without a step.
func formatLogTick(v float64) string {
	if v >= 1e-4 && v < 1 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	if v < 1e-4 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return formatTick(v, 1)
}

// formatValue formats a data value for tooltips with about three
// significant digits, which is all a dashboard reader can use.
func formatValue(v float64) string {
	a := math.Abs(v)
	switch {
	case !finite(v):
		return "n/a"
	case a >= 1e6 || (a < 0.001 && a != 0):
		return strconv.FormatFloat(v, 'g', 3, 64)
	case a >= 100:
		return groupThousands(strconv.FormatFloat(v, 'f', 0, 64))
	case a >= 10:
		return trimZero(strconv.FormatFloat(v, 'f', 1, 64))
	default:
		s := strconv.FormatFloat(v, 'f', 3, 64)
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		if s == "-0" {
			s = "0"
		}
		return s
	}
}

// withUnit appends a unit to a formatted value when there is one.
func withUnit(s, unit string) string {
	if unit == "" {
		return s
	}
	return s + " " + unit
}
