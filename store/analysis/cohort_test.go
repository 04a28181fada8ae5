package analysis_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
)

func TestCohorts(t *testing.T) {
	var pts []analysis.CohortPoint
	for i := 1; i <= 10; i++ { // 0.1 … 1.0
		pts = append(pts, analysis.CohortPoint{Group: "13.0.5026.0", Rel: float64(i) / 10})
	}
	for _, r := range []float64{0.3, 0.2, 0.4, 0, -1} { // 0 and -1 are unknown
		pts = append(pts, analysis.CohortPoint{Group: "13.0.4474.0", Rel: r})
	}
	pts = append(pts, analysis.CohortPoint{Group: "12.0.6024.0", Rel: 1})
	got := analysis.Cohorts(pts)
	if len(got) != 3 || got[0].Group != "12.0.6024.0" || got[1].Group != "13.0.4474.0" || got[2].Group != "13.0.5026.0" {
		t.Fatalf("groups in build order: %+v", got)
	}
	c := got[2]
	// Type-7 quartiles of 0.1..1.0: h = 0.25·9 = 2.25 → 0.325; 0.75·9 = 6.75 → 0.775.
	// n = 10: P(Bin ≤ 1) = 11/1024 ≤ 2.5 % < P(Bin ≤ 2) = 56/1024, so ranks 2 and 9.
	want := analysis.Cohort{Group: "13.0.5026.0", N: 10, Median: 0.55, Q1: 0.325, Q3: 0.775, Min: 0.1, Max: 1, CILow: 0.2, CIHigh: 0.9}
	for _, f := range []struct {
		name      string
		got, want float64
	}{
		{"median", c.Median, want.Median}, {"q1", c.Q1, want.Q1}, {"q3", c.Q3, want.Q3},
		{"min", c.Min, want.Min}, {"max", c.Max, want.Max}, {"ci low", c.CILow, want.CILow}, {"ci high", c.CIHigh, want.CIHigh},
	} {
		if !approx(f.got, f.want, 1e-12) {
			t.Errorf("%s = %v, want %v", f.name, f.got, f.want)
		}
	}
	if got[1].N != 3 || got[1].CILow != 0.2 || got[1].CIHigh != 0.4 {
		t.Errorf("n = 3 falls back to [min, max]: %+v", got[1])
	}
}

// TestCohortCoverage measures how often the interval of the median holds
// the true median of the distribution it was drawn from.
func TestCohortCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 12))
	for _, n := range []int{8, 30, 200, 2000} {
		const trials = 400
		covered := 0
		for range trials {
			pts := make([]analysis.CohortPoint, n)
			for i := range pts {
				pts[i] = analysis.CohortPoint{Group: "g", Rel: math.Exp(0.3 * r.NormFloat64())} // true median 1
			}
			if c := analysis.Cohorts(pts)[0]; c.CILow <= 1 && 1 <= c.CIHigh {
				covered++
			}
		}
		rate := float64(covered) / trials
		t.Logf("cohort median interval, n = %d: covers the true median in %.1f%% of %d draws", n, 100*rate, trials)
		if rate < 0.92 {
			t.Errorf("n = %d: coverage %.3f, want about 0.95", n, rate)
		}
	}
}

func TestCompare(t *testing.T) {
	a := []float64{396, 410, 395, 420, 380, 405, 390, 415, 400, 404, 0} // 0 skipped; no ties, so the exact test
	b := []float64{150, 160, 140, 155, 145}
	c := analysis.Compare(a, b, 1)
	if c.NA != 10 || c.NB != 5 || c.MedianA != 402 || c.MedianB != 150 || c.Ratio != 150.0/402 {
		t.Errorf("figures %+v", c)
	}
	// Complete separation, 10 vs 5, exact: 2/C(15,5) two-sided.
	if !approx(c.PValue, 2.0/3003, 1e-12) || !(c.RatioLow <= c.Ratio && c.Ratio <= c.RatioHigh) {
		t.Errorf("p %v, interval [%v, %v]", c.PValue, c.RatioLow, c.RatioHigh)
	}
	if c2 := analysis.Compare(a, b, 1); c2 != c {
		t.Errorf("same seed, different result")
	}
	if e := analysis.Compare(nil, b, 1); e.NA != 0 || !math.IsNaN(e.PValue) {
		t.Errorf("empty side: %+v", e)
	}
	// Beyond the bootstrap cap the interval comes from order statistics.
	r := rand.New(rand.NewPCG(4, 4))
	big1, big2 := make([]float64, 15000), make([]float64, 15000)
	for i := range big1 {
		big1[i] = 100 * math.Exp(0.2*r.NormFloat64())
		big2[i] = 50 * math.Exp(0.2*r.NormFloat64())
	}
	cb := analysis.Compare(big1, big2, 1)
	if !(cb.RatioLow < 0.5 && 0.5 < cb.RatioHigh && cb.RatioHigh-cb.RatioLow < 0.02 && cb.PValue < 1e-10) {
		t.Errorf("large samples: %+v", cb)
	}
}

// TestLostTo: side B's restores of its latest year, each at the ratio's
// share of its time, are the hours lost; a slowdown that is small or not
// significant costs none, and older restores do not count.
func TestLostTo(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	b := []store.RelativeSpeed{
		{At: now, DurationS: 3600}, {At: now.AddDate(0, -1, 0), DurationS: 7200}, {At: now.AddDate(0, -2, 0), DurationS: 10800},
		{At: now.AddDate(0, -3, 0)},                   // no duration
		{At: now.AddDate(-2, 0, 0), DurationS: 36000}, // before the latest year
	}
	got, ok := analysis.LostTo(analysis.Comparison{Ratio: 0.5, PValue: 0.01}, b)
	if !ok || got.Restores != 3 || got.PerRestoreH != 1 || got.TotalH != 3 {
		t.Errorf("LostTo = %+v, %v; want 3 restores, 1 h each typically, 3 h in all", got, ok)
	}
	for _, c := range []analysis.Comparison{{Ratio: 0.95, PValue: 0.001}, {Ratio: 0.5, PValue: 0.2}, {Ratio: math.NaN(), PValue: 0.01}} {
		if _, ok := analysis.LostTo(c, b); ok {
			t.Errorf("%+v costs hours", c)
		}
	}
}

// TestSizeExplains: a duration that moved with the backup's size (within
// 1.25× of it) is explained by it; unknown sizes explain nothing.
func TestSizeExplains(t *testing.T) {
	for _, tt := range []struct {
		size, dur float64
		want      bool
	}{{2, 2.2, true}, {2, 1.7, true}, {2, 3, false}, {1, 3, false}, {0, 2, false}, {2, 0, false}, {0.5, 0.45, true}} {
		if got := analysis.SizeExplains(tt.size, tt.dur); got != tt.want {
			t.Errorf("size ×%v, duration ×%v: %v, want %v", tt.size, tt.dur, got, tt.want)
		}
	}
}
