package human_test

import (
	"math"
	"testing"

	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/human"
)

func TestDuration(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0 s"},
		{math.Copysign(0, -1), "0 s"},
		{0.004, "< 0.01 s"},
		{0.005, "0.01 s"},
		{0.45, "0.45 s"},
		{0.994, "0.99 s"},
		{0.996, "1 s"}, // carries into the one-decimal tier, not "1.00 s"
		{2.6, "2.6 s"},
		{3, "3 s"},
		{9.94, "9.9 s"},
		{9.96, "10 s"}, // not "10.0 s"
		{45, "45 s"},
		{59.4, "59 s"},
		{59.95, "1 min"}, // not "60 s"
		{60, "1 min"},
		{125, "2 min 5 s"},
		{599.4, "9 min 59 s"},
		{599.6, "10 min"}, // not "9 min 60 s"
		{960, "16 min"},
		{989, "16 min"},
		{991, "17 min"},
		{3569, "59 min"},
		{3599.5, "1 h"}, // not "60 min"
		{3600, "1 h"},
		{35160, "9 h 46 min"},
		{86369, "23 h 59 min"},
		{86399, "1 d"}, // not "23 h 60 min" nor "24 h"
		{86400, "1 d"},
		{3*86400 + 4*3600, "3 d 4 h"},
		{3*86400 + 4*3600 + 1799, "3 d 4 h"},
		{3*86400 + 4*3600 + 1800, "3 d 5 h"},
		{1204*86400 + 7*3600, "1,204 d 7 h"},
		{1e15, "11,574,074,074 d 2 h"},
		{1e300, "1.16e+295 d"},
		{-1, "unknown"},
		{math.NaN(), "unknown"},
		{math.Inf(1), "unknown"},
		{math.Inf(-1), "unknown"},
	}
	for _, tt := range tests {
		if got := human.Duration(tt.in); got != tt.want {
			t.Errorf("Duration(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMiBps(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0 MiB/s"},
		{0.001, "< 0.01 MiB/s"},
		{0.354, "0.35 MiB/s"},
		{0.999, "1.0 MiB/s"},
		{4.22, "4.2 MiB/s"},
		{9.96, "10 MiB/s"},
		{215.4, "215 MiB/s"},
		{1234.5, "1,235 MiB/s"},
		{1234567, "1,234,567 MiB/s"},
		{2e15, "2e+15 MiB/s"},
		{-3, "unknown"},
		{math.NaN(), "unknown"},
		{math.Inf(1), "unknown"},
	}
	for _, tt := range tests {
		if got := human.MiBps(tt.in); got != tt.want {
			t.Errorf("MiBps(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTickStep(t *testing.T) {
	const min, h, d = 60.0, 3600.0, 86400.0
	tests := []struct {
		span     float64
		maxTicks int
		want     float64
	}{
		{10, 11, 1},
		{10, 6, 2},
		{10, 3, 5},
		{45, 5, 15},
		{16 * min, 5, 5 * min},   // 16 min / 4 = 4 min → 5 min
		{16 * min, 9, 2 * min},   // 2 min
		{50 * min, 6, 10 * min},  // exactly 5 intervals
		{50 * min, 5, 15 * min},  // 12.5 min → 15 min
		{9*h + 46*min, 6, 2 * h}, // 1 h 57 min → 2 h
		{9*h + 46*min, 5, 3 * h}, // 2 h 26 min → 3 h (never 2.5 h)
		{20 * h, 5, 6 * h},       // 5 h → 6 h
		{40 * h, 5, 12 * h},      // 10 h → 12 h
		{3 * d, 5, d},            // 18 h → 1 d
		{10 * d, 5, 7 * d},       // 2.5 d → 7 d
		{400 * d, 5, 100 * d},    // beyond 28 d: 1-2-5 days
		{500 * d, 5, 200 * d},
		{0.3, 4, 0.1}, // sub-second: 1-2-5
		{0.7, 3, 0.5},
		{1, 2, 1},
		{100, 1, 2 * min}, // maxTicks below 2 counts as 2: one interval
		{0, 5, 1},
		{-5, 5, 1},
		{math.NaN(), 5, 1},
		{math.Inf(1), 5, 1},
	}
	for _, tt := range tests {
		got := human.TickStep(tt.span, tt.maxTicks)
		if got != tt.want {
			t.Errorf("TickStep(%v, %d) = %v, want %v", tt.span, tt.maxTicks, got, tt.want)
		}
	}
}

// TestTickStepBounds checks, over spans from a millisecond to ten years,
// that ticks at multiples of the step never exceed maxTicks and that the
// next smaller step would (the step is the smallest that fits).
func TestTickStepBounds(t *testing.T) {
	for span := 0.001; span < 10*365*86400; span *= 1.37 {
		for _, n := range []int{2, 3, 5, 8, 12} {
			step := human.TickStep(span, n)
			if step <= 0 || math.IsNaN(step) {
				t.Fatalf("TickStep(%v, %d) = %v", span, n, step)
			}
			if ticks := math.Floor(span/step*(1+1e-9)) + 1; ticks > float64(n) {
				t.Errorf("TickStep(%v, %d) = %v: up to %v ticks", span, n, step, ticks)
			}
		}
	}
	if got := human.TickStep(1e300, 5); math.IsInf(got, 0) || got < 1e300/4 {
		t.Errorf("TickStep(1e300, 5) = %v", got)
	}
	if got := human.TickStep(5e-324, 5); got <= 0 {
		t.Errorf("TickStep(5e-324, 5) = %v, want a positive step", got)
	}
}

// TestFactorLabels: every factor the analysis can emit and every condition
// the shipped known-issue catalogue keys on has words, enumerated from the
// analysis package itself so a new factor cannot slip by unlabelled.
func TestFactorLabels(t *testing.T) {
	keys := analysis.FactorNames()
	for _, ki := range analysis.DefaultKnownIssues() {
		keys = append(keys, ki.Conditions...)
	}
	if len(keys) < 18 {
		t.Fatalf("only %d keys enumerated", len(keys))
	}
	seen := map[string]string{}
	for _, k := range keys {
		if !human.HasFactorLabel(k) {
			t.Errorf("factor %q has no label", k)
			continue
		}
		l := human.FactorLabel(k)
		if l == k || l == "" {
			t.Errorf("FactorLabel(%q) = %q, want words", k, l)
		}
		if other, dup := seen[l]; dup && other != k {
			t.Errorf("%q and %q share the label %q", k, other, l)
		}
		seen[l] = k
	}
	for k, want := range map[string]string{"source_build": "Source build (of the backup)", "io_alignment_4096": "4 KiB I/O alignment"} {
		if got := human.FactorLabel(k); got != want {
			t.Errorf("FactorLabel(%q) = %q, want %q", k, got, want)
		}
	}
	if got := human.FactorLabel("users_own_condition"); got != "users_own_condition" || human.HasFactorLabel("users_own_condition") {
		t.Errorf("an unknown key = %q, want itself", got)
	}
}

func TestCount(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234",
		math.MinInt64: "-9,223,372,036,854,775,808"} {
		if got := human.Count(in); got != want {
			t.Errorf("Count(%d) = %q, want %q", in, got, want)
		}
	}
}
