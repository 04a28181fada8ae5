package analysis_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/store/analysis"
)

// wobble is a fixed ±25 % pattern, so single-case tests read the same on
// every run without depending on a generator.
var wobble = []float64{1.00, 0.82, 1.18, 0.95, 1.22, 0.78, 1.05, 0.90, 1.12, 0.85, 1.20, 0.97, 0.80, 1.08, 1.15, 0.88}

func series(n int, level func(i int) float64) []analysis.Point {
	s := make([]analysis.Point, n)
	for i := range s {
		s[i] = point(i, level(i)*wobble[i%len(wobble)], backupSize)
	}
	return s
}

func TestNotEnoughData(t *testing.T) {
	s := series(8, func(int) float64 { return 400 })
	s[2].MiBps, s[5].MiBps, s[6].MiBps = 0, -1, 0 // unknown: skipped, not counted
	f := analysis.Detect(s, analysis.DefaultConfig())
	if f.Verdict != analysis.NotEnoughData || f.ChangeIndex != -1 || f.BaselineN != 5 {
		t.Errorf("got %s, change %d, n %d; want not_enough_data, -1, 5", f.Verdict, f.ChangeIndex, f.BaselineN)
	}
	if want := "not enough data: 5 restores with a known throughput (needs 6)"; f.Note != want {
		t.Errorf("note %q, want %q", f.Note, want)
	}
	if f := analysis.Detect(nil, analysis.DefaultConfig()); f.Verdict != analysis.NotEnoughData {
		t.Errorf("empty series: %s", f.Verdict)
	}
}

func TestStable(t *testing.T) {
	f := analysis.Detect(series(30, func(int) float64 { return 400 }), analysis.DefaultConfig())
	if f.Verdict != analysis.Stable || f.ChangeIndex != -1 || f.Ratio != 1 || len(f.Outliers) != 0 {
		t.Errorf("got %+v", f)
	}
	if !strings.HasPrefix(f.Note, "stable: 30 restores at a median") {
		t.Errorf("note %q", f.Note)
	}
}

func TestRegression(t *testing.T) {
	s := series(21, func(i int) float64 {
		if i >= 15 {
			return 150
		}
		return 400
	})
	for i := range s {
		s[i].Factors = map[string]string{"instance_build": "13.0.4474.0", "compression": "1", "io_alignment": "4096"}
		if i >= 15 {
			s[i].Factors["instance_build"] = "13.0.5026.0"
		}
	}
	cfg := analysis.DefaultConfig()
	f := analysis.Detect(s, cfg)
	if f.Verdict != analysis.Regression || f.ChangeIndex != 15 || !f.ChangedAt.Equal(s[15].At) {
		t.Fatalf("got %s at %d, want regression at 15 (%s)", f.Verdict, f.ChangeIndex, f.Note)
	}
	if f.BaselineN != 15 || f.CurrentN != 6 || f.Ratio > 0.45 || f.Ratio < 0.3 || f.PValue >= 0.001 {
		t.Errorf("figures: n %d/%d ratio %.3f p %.2g", f.BaselineN, f.CurrentN, f.Ratio, f.PValue)
	}
	if !(f.RatioLow <= f.Ratio && f.Ratio <= f.RatioHigh && f.RatioHigh < cfg.Ratio) {
		t.Errorf("interval [%.3f, %.3f] around %.3f", f.RatioLow, f.RatioHigh, f.Ratio)
	}
	want := []analysis.FactorChange{{Factor: "instance_build", Before: "13.0.4474.0", After: "13.0.5026.0", Score: 1}}
	if !slices.Equal(f.ChangedFactors, want) {
		t.Errorf("factors %+v, want %+v", f.ChangedFactors, want)
	}
	if !strings.HasPrefix(f.Note, "restores became ") || !strings.Contains(f.Note, "× slower") || !strings.Contains(f.Note, "from 2025-01-21") {
		t.Errorf("note %q", f.Note)
	}
	if g := analysis.Detect(s, cfg); g.RatioLow != f.RatioLow || g.RatioHigh != f.RatioHigh {
		t.Errorf("same seed, different interval")
	}
}

func TestImprovement(t *testing.T) {
	f := analysis.Detect(series(20, func(i int) float64 {
		if i >= 14 {
			return 900
		}
		return 400
	}), analysis.DefaultConfig())
	if f.Verdict != analysis.Improvement || f.ChangeIndex != 14 || f.Ratio < 1.9 || !strings.HasPrefix(f.Note, "restores became 2.2× faster") {
		t.Errorf("got %s at %d ratio %.2f: %s", f.Verdict, f.ChangeIndex, f.Ratio, f.Note)
	}
}

func TestSingleOutlier(t *testing.T) {
	for _, tc := range []struct {
		at    int
		mibps float64
	}{
		{0, 90}, {9, 90}, {19, 90}, // slow: first, middle, latest restore
		{9, 1600}, {19, 1600}, // fast: a restore served from cache, say
	} {
		s := series(20, func(int) float64 { return 400 })
		s[tc.at].MiBps = tc.mibps
		f := analysis.Detect(s, analysis.DefaultConfig())
		if f.Verdict != analysis.Stable || !slices.Equal(f.Outliers, []int{tc.at}) || f.BaselineN != 19 {
			t.Errorf("%v MiB/s at %d: got %s, outliers %v, n %d", tc.mibps, tc.at, f.Verdict, f.Outliers, f.BaselineN)
		}
		if !strings.HasSuffix(f.Note, "; 1 outlier shown apart") {
			t.Errorf("note %q", f.Note)
		}
	}
}

// TestSlowRestoresArriving follows a regression as it arrives (issue 37):
// the first slow restore is an outlier and opens a watch, the second
// confirms a regression dated at the first, and the third keeps it there.
func TestSlowRestoresArriving(t *testing.T) {
	base := series(18, func(int) float64 { return 400 })
	for k, want := range []analysis.Verdict{analysis.Stable, analysis.Regression, analysis.Regression} {
		s := slices.Clone(base)
		for i := range k + 1 {
			s = append(s, point(len(s), 130*wobble[i], backupSize))
		}
		f := analysis.Detect(s, analysis.DefaultConfig())
		if f.Verdict != want {
			t.Fatalf("%d slow: got %s, want %s (%s)", k+1, f.Verdict, want, f.Note)
		}
		switch want {
		case analysis.Stable:
			if len(f.Outliers) != k+1 || f.Outliers[0] != 18 {
				t.Errorf("%d slow: outliers %v, want the last %d", k+1, f.Outliers, k+1)
			}
			if w := f.Watch; w == nil || w.Index != 18 || w.Direction != analysis.Regression || w.Ratio > 0.4 || w.DurationRatio < 2.5 {
				t.Errorf("%d slow: watch %+v, want restore 18 about 3× its usual time", k+1, w)
			}
		default:
			if f.ChangeIndex != 18 || len(f.Outliers) != 0 {
				t.Errorf("%d slow: change at %d, outliers %v; want 18 and none", k+1, f.ChangeIndex, f.Outliers)
			}
		}
	}
}

// TestLargerNotSlower: the backup grew 2.5× and the duration with it, at
// the same throughput. Not a regression, and the note says why.
func TestLargerNotSlower(t *testing.T) {
	s := make([]analysis.Point, 20)
	for i := range s {
		size, class := backupSize, "100-500 GiB"
		if i >= 12 {
			size, class = backupSize*5/2, "500 GiB-1 TiB"
		}
		s[i] = point(i, 400*wobble[i%len(wobble)], size)
		s[i].Factors = map[string]string{"size_class": class}
	}
	f := analysis.Detect(s, analysis.DefaultConfig())
	if f.Verdict != analysis.Stable || f.ChangeIndex != 12 {
		t.Fatalf("got %s at %d: %s", f.Verdict, f.ChangeIndex, f.Note)
	}
	if !approx(f.SizeGrowth, 2.5, 1e-9) || f.DurationRatio < 2 || f.DurationRatio > 3 {
		t.Errorf("size growth %.2f, duration ratio %.2f", f.SizeGrowth, f.DurationRatio)
	}
	if !strings.Contains(f.Note, "because the backup is 2.5× larger") || !strings.Contains(f.Note, "not a regression") {
		t.Errorf("note %q", f.Note)
	}
	if len(f.ChangedFactors) != 1 || f.ChangedFactors[0].Factor != "size_class" {
		t.Errorf("factors %+v", f.ChangedFactors)
	}
}

func TestDetectLeavesInputAlone(t *testing.T) {
	s := series(20, func(i int) float64 { return 400 - 10*float64(i) })
	s[3].MiBps = 0
	before := slices.Clone(s)
	analysis.Detect(s, analysis.DefaultConfig())
	for i := range s {
		if s[i].MiBps != before[i].MiBps || s[i].RestoreID != before[i].RestoreID {
			t.Fatalf("point %d changed", i)
		}
	}
}

// TestZeroConfig: an unset Config means the defaults (without the
// bootstrap), so a config file that omits the section still works.
func TestZeroConfig(t *testing.T) {
	s := series(20, func(i int) float64 {
		if i >= 14 {
			return 150
		}
		return 400
	})
	f := analysis.Detect(s, analysis.Config{})
	if f.Verdict != analysis.Regression || f.RatioLow != 0 {
		t.Errorf("zero config: %s, interval low %v", f.Verdict, f.RatioLow)
	}
}

// FuzzDetect checks invariants on arbitrary throughputs: no panic, a known
// verdict, indexes inside the series, outliers ascending and apart from
// the change.
func FuzzDetect(f *testing.F) {
	f.Add([]byte{100, 100, 100, 100, 100, 100, 30, 30, 30})
	f.Add([]byte{1, 255, 1, 255, 0, 0, 0, 7, 7, 7, 7, 200})
	f.Fuzz(func(t *testing.T, data []byte) {
		s := make([]analysis.Point, len(data))
		for i, b := range data {
			s[i] = point(i, float64(b), backupSize)
		}
		cfg := analysis.DefaultConfig()
		cfg.Bootstrap = 50
		got := analysis.Detect(s, cfg)
		if !slices.Contains([]analysis.Verdict{analysis.Regression, analysis.Improvement, analysis.Stable, analysis.NotEnoughData}, got.Verdict) {
			t.Fatalf("verdict %q", got.Verdict)
		}
		if got.ChangeIndex < -1 || got.ChangeIndex >= len(s) {
			t.Fatalf("change index %d of %d", got.ChangeIndex, len(s))
		}
		if !slices.IsSorted(got.Outliers) || slices.Contains(got.Outliers, got.ChangeIndex) {
			t.Fatalf("outliers %v, change %d", got.Outliers, got.ChangeIndex)
		}
		// A change is flagged on MinEach restores each side, or confirmed
		// sooner (issue 37) on two or more after at least ten usual ones;
		// either way with a significant rank test.
		minAfter, minBefore := cfg.MinEach, cfg.MinEach
		if got.Confirmed {
			minAfter, minBefore = 2, 10
		}
		if (got.Verdict == analysis.Regression || got.Verdict == analysis.Improvement) &&
			(got.CurrentN < minAfter || got.BaselineN < minBefore || got.PValue >= cfg.Alpha) {
			t.Fatalf("flagged on %d/%d restores, p %v, confirmed %v", got.BaselineN, got.CurrentN, got.PValue, got.Confirmed)
		}
		if w := got.Watch; w != nil && (w.Index < 0 || w.Index >= len(s) || w.UsualN < cfg.MinEach) {
			t.Fatalf("watch %+v of %d restores", w, len(s))
		}
	})
}

// TestStableAcrossSeeds guards the verdict from depending on the seed:
// only the interval may.
func TestStableAcrossSeeds(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	s := stepSeries(r, 15, 5, 0.4, uniform25)
	a := analysis.DefaultConfig()
	b := a
	b.Seed = 99
	fa, fb := analysis.Detect(s, a), analysis.Detect(s, b)
	if fa.Verdict != fb.Verdict || fa.ChangeIndex != fb.ChangeIndex || fa.PValue != fb.PValue {
		t.Errorf("seed changed the verdict: %+v vs %+v", fa, fb)
	}
}
