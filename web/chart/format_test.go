package chart_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/web/chart"
)

// TestFormatDuration holds the charts to the one duration format of pages,
// reports and the CLI (issue 15 item 4): units in words, never a clock.
func TestFormatDuration(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0 s"},
		{0.4, "0.40 s"},
		{1.25, "1.3 s"},
		{9.94, "9.9 s"},
		{9.96, "10 s"},
		{45, "45 s"},
		{59.4, "59 s"},
		{59.6, "1 min"}, // rounding must carry into minutes, not print "60 s"
		{725, "12 min"},
		{3599, "1 h"},
		{3600, "1 h"},
		{11045, "3 h 4 min"},
		{86399, "1 d"},
		{35160, "9 h 46 min"},
		{960, "16 min"}, // never "16:00", minutes or hours?,
		{93784, "1 d 2 h"},
		{10 * 86400, "10 d"},
		{400 * 86400, "400 d"},
		{-1, "unknown"},
		{math.Copysign(0, -1), "0 s"},
		{math.NaN(), "unknown"},
		{math.Inf(1), "unknown"},
		{math.Inf(-1), "unknown"},
		{1e300, "1.16e+295 d"},
	}
	for _, tt := range tests {
		if got := chart.FormatDuration(tt.in); got != tt.want {
			t.Errorf("FormatDuration(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFormatMiBps(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0 MiB/s"},
		{0.354, "0.35 MiB/s"},
		{4.22, "4.2 MiB/s"},
		{215.4, "215 MiB/s"},
		{1234.5, "1,235 MiB/s"},
		{9.96, "10 MiB/s"}, // human.MiBps: the dashboard once said "10.0 MiB/s" here and "10 MiB/s" there
		{1234567, "1,234,567 MiB/s"},
		{-3, "unknown"},
		{math.NaN(), "unknown"},
		{math.Inf(1), "unknown"},
	}
	for _, tt := range tests {
		if got := chart.FormatMiBps(tt.in); got != tt.want {
			t.Errorf("FormatMiBps(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSafeURL(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"/restores/42", "/restores/42", true},
		{"restores?id=1&db=x", "restores?id=1&db=x", true},
		{"#detail", "#detail", true},
		{"  https://example.test/a  ", "https://example.test/a", true},
		{"HTTP://example.test", "HTTP://example.test", true},
		{"//cdn.example.test/x", "//cdn.example.test/x", true},
		{"/path/with:colon", "/path/with:colon", true},
		{"", "", false},
		{"javascript:alert(1)", "", false},
		{" JaVaScRiPt:alert(1)", "", false},
		{"java\tscript:alert(1)", "", false},
		{"java\nscript:alert(1)", "", false},
		{"data:text/html,<script>", "", false},
		{"vbscript:msgbox", "", false},
		{"mailto:dba@example.test", "", false},
		{"\x01javascript:alert(1)", "", false},
		{"\u200bjavascript:alert(1)", "", false},
	}
	for _, tt := range tests {
		got, ok := chart.SafeURL(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("SafeURL(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestDurationAxisTicksOnHumanSteps: a duration axis (YFormat
// FormatDuration) from 500 s to 7,000 s is ticked every 30 min, not at
// 1-2-5 multiples of seconds that read "33 min 20 s" (issue 15 item 4).
func TestDurationAxisTicksOnHumanSteps(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 3, d, 2, 0, 0, 0, time.UTC) }
	c := chart.TimeScatter{Frame: chart.Frame{Title: "Duration", ID: "d"}, YFormat: chart.FormatDuration, YFromZero: true,
		Series: []chart.Series{{Name: "a", Points: []chart.Point{{T: day(1), V: 500}, {T: day(2), V: 7000}}}}}
	svg := c.SVG()
	for _, want := range []string{">0 s<", ">30 min<", ">1 h<", ">1 h 30 min<", ">2 h<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the duration axis lacks the tick %s", want)
		}
	}
	if strings.Contains(svg, ">33 min 20 s<") {
		t.Error("the duration axis is ticked at 1-2-5 multiples of seconds")
	}
}
