package analysis_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/restorewatch/restorewatch/store/analysis"
)

func approx(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{2, 1}, 1.5},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 4, 1, 9}, 4},
		{[]float64{7, 7, 7, 7, 7}, 7},
	} {
		in := slices.Clone(tc.in)
		if got := analysis.Median(in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("Median modified its input: %v", in)
		}
	}
	if got := analysis.Median(nil); !math.IsNaN(got) {
		t.Errorf("Median(nil) = %v, want NaN", got)
	}
}

// TestMedianMatchesSort checks the selection algorithm against sorting on
// shapes that break naive quickselects: sorted, reversed, many ties.
func TestMedianMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for trial := range 2000 {
		n := 1 + r.IntN(60)
		xs := make([]float64, n)
		for i := range xs {
			switch trial % 4 {
			case 0:
				xs[i] = r.Float64()
			case 1:
				xs[i] = float64(i)
			case 2:
				xs[i] = float64(n - i)
			default:
				xs[i] = float64(r.IntN(3))
			}
		}
		s := slices.Sorted(slices.Values(xs))
		want := s[n/2]
		if n%2 == 0 {
			want = (s[n/2-1] + s[n/2]) / 2
		}
		if got := analysis.Median(xs); got != want {
			t.Fatalf("Median(%v) = %v, want %v", xs, got, want)
		}
	}
}

func TestMAD(t *testing.T) {
	// Median 3, absolute deviations {2,1,0,1,97}: the wild value moves
	// the MAD by one rank only.
	if got := analysis.MAD([]float64{1, 2, 3, 4, 100}); got != 1 {
		t.Errorf("MAD = %v, want 1", got)
	}
	if got := analysis.MAD(nil); !math.IsNaN(got) {
		t.Errorf("MAD(nil) = %v, want NaN", got)
	}
}

// TestMannWhitneyUExact checks against distributions counted by hand:
// under H0 every assignment of ranks to a is equally likely, so P(U <= u)
// is the share of the C(m+n, m) assignments with U <= u.
func TestMannWhitneyUExact(t *testing.T) {
	for _, tc := range []struct {
		a, b  []float64
		u, p  float64
		about string
	}{
		{[]float64{1, 2, 3}, []float64{4, 5, 6}, 0, 1.0 / 20, "all a below b: 1 of C(6,3)=20"},
		{[]float64{4, 5, 6}, []float64{1, 2, 3}, 9, 1, "all a above b"},
		{[]float64{1, 3}, []float64{2, 4}, 1, 2.0 / 6, "U in {0,1,2,2,3,4}: 2 of 6 <= 1"},
		{[]float64{1, 2}, []float64{3, 4, 5}, 0, 1.0 / 10, "1 of C(5,2)=10"},
		// U counts for m=3, n=4 are partitions of u into <= 3 parts of
		// size <= 4: 1,1,2,3,4,4,5 for u = 0..6, 20 of 35.
		{[]float64{2, 4, 6}, []float64{1, 3, 5, 7}, 6, 20.0 / 35, "partitions, 20 of 35"},
	} {
		u, p := analysis.MannWhitneyU(tc.a, tc.b)
		if u != tc.u || !approx(p, tc.p, 1e-12) {
			t.Errorf("%s: MannWhitneyU(%v, %v) = %v, %v; want %v, %v", tc.about, tc.a, tc.b, u, p, tc.u, tc.p)
		}
	}
}

func TestMannWhitneyUApprox(t *testing.T) {
	// Ties force the normal approximation. Midranks: 1, 3, 3 | 3, 5, 6,
	// so U = 7 − 6 = 1; variance 9/12·(7 − 24/30) = 4.65;
	// z = (1 − 4.5 + 0.5)/√4.65; Φ(z) = 0.08208.
	u, p := analysis.MannWhitneyU([]float64{1, 2, 2}, []float64{2, 3, 4})
	if u != 1 || !approx(p, 0.08208, 1e-4) {
		t.Errorf("with ties: got %v, %v; want 1, 0.08208", u, p)
	}
	// 25 against 25 without overlap is the exact extreme, 1/C(50,25).
	var a, b []float64
	for i := range 25 {
		a = append(a, float64(i))
		b = append(b, float64(100+i))
	}
	if _, p := analysis.MannWhitneyU(a, b); !approx(p, 7.9107286e-15, 1e-20) {
		t.Errorf("exact extreme 25/25: p = %v, want 7.91e-15", p)
	}
	// Just above the exact limit the approximation must agree with the
	// exact tail in spirit: tiny, and ordered.
	a = append(a, 25.5)
	if _, p := analysis.MannWhitneyU(a, b); p > 1e-8 {
		t.Errorf("26 against 25 without overlap: p = %v, want tiny", p)
	}
	if _, p := analysis.MannWhitneyU(nil, b); p != 1 {
		t.Errorf("empty sample: p = %v, want 1", p)
	}
	if _, p := analysis.MannWhitneyU([]float64{2, 2}, []float64{2, 2}); p != 1 {
		t.Errorf("all tied: p = %v, want 1", p)
	}
}

// TestMannWhitneyULevel checks the exact test holds its level: under H0
// the p-value is (sub)uniform, so p < 0.05 in at most about 5 % of draws.
func TestMannWhitneyULevel(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	const trials = 4000
	rejected := 0
	for range trials {
		a := make([]float64, 3+r.IntN(8))
		b := make([]float64, 5+r.IntN(20))
		for i := range a {
			a[i] = r.NormFloat64()
		}
		for i := range b {
			b[i] = r.NormFloat64()
		}
		if _, p := analysis.MannWhitneyU(a, b); p < 0.05 {
			rejected++
		}
	}
	rate := float64(rejected) / trials
	t.Logf("Mann–Whitney under H0, %d draws: p < 0.05 in %.2f%%", trials, 100*rate)
	if rate > 0.06 {
		t.Errorf("level %.3f, want <= 0.05 (+ sampling slack)", rate)
	}
}

func TestBootstrapRatio(t *testing.T) {
	a := []float64{400, 410, 395, 420, 380, 405, 390, 415, 400, 398}
	b := []float64{150, 160, 140, 155, 145}
	lo1, hi1 := analysis.BootstrapRatio(a, b, 1000, 42)
	lo2, hi2 := analysis.BootstrapRatio(a, b, 1000, 42)
	if lo1 != lo2 || hi1 != hi2 {
		t.Errorf("same seed, different intervals: [%v, %v] and [%v, %v]", lo1, hi1, lo2, hi2)
	}
	ratio := analysis.Median(b) / analysis.Median(a)
	if !(lo1 <= ratio && ratio <= hi1) || hi1-lo1 > 0.2 {
		t.Errorf("interval [%v, %v] should hold the ratio %v and be narrow", lo1, hi1, ratio)
	}
	// With continuous data another seed must give another interval, or
	// the seed is not reaching the generator.
	r := rand.New(rand.NewPCG(1, 1))
	c, d := make([]float64, 40), make([]float64, 30)
	for i := range c {
		c[i] = 1 + r.Float64()
	}
	for i := range d {
		d[i] = 1 + r.Float64()
	}
	l1, h1 := analysis.BootstrapRatio(c, d, 1000, 1)
	l2, h2 := analysis.BootstrapRatio(c, d, 1000, 2)
	if l1 == l2 && h1 == h2 {
		t.Errorf("seeds 1 and 2 gave the same interval [%v, %v]", l1, h1)
	}
	if lo, hi := analysis.BootstrapRatio(nil, b, 1000, 1); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("empty sample: [%v, %v], want NaN", lo, hi)
	}
}

func TestChangePoints(t *testing.T) {
	x := []float64{0, 0.1, -0.1, 0, 0.05, -0.05, -1, -1.1, -0.9, -1}
	if got := analysis.ChangePoints(x, 3, 0.5); !slices.Equal(got, []int{6}) {
		t.Errorf("one step: got %v, want [6]", got)
	}
	if got := analysis.ChangePoints(x, 5, 0.5); !slices.Equal(got, []int{5}) {
		t.Errorf("minSeg 5 forces the split to 5: got %v", got)
	}
	if got := analysis.ChangePoints(x, 3, 100); len(got) != 0 {
		t.Errorf("huge penalty: got %v, want none", got)
	}
	two := []float64{0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0}
	if got := analysis.ChangePoints(two, 3, 0.5); !slices.Equal(got, []int{4, 8}) {
		t.Errorf("up and down: got %v, want [4 8]", got)
	}
}
