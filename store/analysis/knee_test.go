package analysis_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
)

// curve16TB is seed 000's restore: 16 TB at 2 GB/s up to 55 %, then
// 100 MB/s, sampled every 10 s with ±noise on each interval's rate.
func curve16TB(noise float64, seed uint64) []store.CurvePoint {
	const total = 16e12
	r := rand.New(rand.NewPCG(seed, 1))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var pts []store.CurvePoint
	var done float64
	for i := 0; done < total; i++ {
		pts = append(pts, store.CurvePoint{At: t0.Add(time.Duration(i) * 10 * time.Second), Percent: math.Floor(done/total*1e4) / 100})
		rate := 2e9
		if done >= 0.55*total {
			rate = 1e8
		}
		done += rate * 10 * (1 + noise*(2*r.Float64()-1))
	}
	return pts
}

func TestKnee(t *testing.T) {
	pts := curve16TB(0.25, 1)
	i, ok := analysis.Knee(pts)
	if !ok || math.Abs(pts[i].Percent-55) > 0.5 {
		t.Errorf("knee at %d (%.2f %%), ok %v; want at 55 %%", i, pts[i].Percent, ok)
	}
	flat := func(noise float64, tail []float64) []store.CurvePoint {
		r := rand.New(rand.NewPCG(7, 7))
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var out []store.CurvePoint
		p := 0.0
		for k := 0; p < 99; k++ {
			out = append(out, store.CurvePoint{At: t0.Add(time.Duration(k) * 10 * time.Second), Percent: p})
			p += 0.5 * (1 + noise*(2*r.Float64()-1))
		}
		for _, x := range tail {
			out = append(out, store.CurvePoint{At: out[len(out)-1].At.Add(10 * time.Second), Percent: x})
		}
		return out
	}
	cases := map[string][]store.CurvePoint{
		"steady with ±25 % noise":  flat(0.25, nil),
		"pause before the end":     flat(0, []float64{99.1, 99.1, 99.1, 99.1, 99.2, 99.2, 100, 100, 100}),
		"zeroing before the copy":  append([]store.CurvePoint{{At: time.Date(2025, 12, 31, 23, 0, 0, 0, time.UTC)}}, flat(0.1, nil)...),
		"too few samples":          pts[:4],
		"no samples":               nil,
		"one slow interval midway": slowMidway(),
	}
	for name, c := range cases {
		if i, ok := analysis.Knee(c); ok {
			t.Errorf("%s: knee at %d (%.1f %%)", name, i, c[i].Percent)
		}
	}
}

func slowMidway() []store.CurvePoint {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var out []store.CurvePoint
	p := 0.0
	for k := 0; p < 100; k++ {
		out = append(out, store.CurvePoint{At: t0.Add(time.Duration(k) * 10 * time.Second), Percent: p})
		if k == 50 {
			p += 0.05
		} else {
			p += 1
		}
	}
	return out
}

func TestKneeRates(t *testing.T) {
	pts := curve16TB(0, 1)
	k, ok := analysis.Knee(pts)
	if !ok {
		t.Fatal("no knee")
	}
	before, after := analysis.KneeRates(pts, k)
	// 2 GB/s then 100 MB/s of 16 TB: 0.75 %/min then 0.0375 %/min.
	if math.Abs(before-0.75) > 0.01 || math.Abs(after-0.0375) > 0.001 {
		t.Errorf("rates %.4f → %.4f %%/min, want 0.75 → 0.0375", before, after)
	}
}
