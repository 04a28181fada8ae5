package chart_test

import (
	"math"
	"testing"

	"github.com/restorewatch/restorewatch/web/chart"
)

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0 s"},
		{0.4, "0.4 s"},
		{1.25, "1.2 s"}, // %.1f rounds half to even on the binary value
		{9.94, "9.9 s"},
		{9.96, "10 s"},
		{45, "45 s"},
		{59.4, "59 s"},
		{59.6, "1:00"}, // rounding must carry into minutes, not print "60 s"
		{725, "12:05"},
		{3599, "59:59"},
		{3600, "1:00:00"},
		{11045, "3:04:05"},
		{86399, "23:59:59"},
		{86399.6, "1 d 00:00:00"},
		{86400, "1 d 00:00:00"},
		{93784, "1 d 02:03:04"},
		{10 * 86400, "10 d 00:00:00"},
		{400 * 86400, "400 d 00:00:00"},
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
		{1234.5, "1,234 MiB/s"},
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
