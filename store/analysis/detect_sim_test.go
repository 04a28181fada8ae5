package analysis_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store/analysis"
)

// These tests treat Detect as a statistical procedure: they simulate
// series whose truth is known, measure how often Detect gets it right, log
// the rates (go test -v) and assert the bars of SPEC §5. Seeds are fixed,
// so a failure is reproducible and not a flake.

const (
	levelMiBps = 400.0
	backupSize = int64(200) << 30 // 200 GiB
)

var t0 = time.Date(2025, 1, 6, 2, 0, 0, 0, time.UTC)

// noise returns a multiplicative noise factor.
type noise func(*rand.Rand) float64

// uniform25 is the "±25 % around a stable level" of SPEC §5.
func uniform25(r *rand.Rand) float64 { return 0.75 + 0.5*r.Float64() }

// lognormal12 has σ = 0.12 on the log scale, about ±12 % typical spread
// with heavier tails than uniform25.
func lognormal12(r *rand.Rand) float64 { return math.Exp(0.12 * r.NormFloat64()) }

// point makes one daily restore at the given throughput and size.
func point(i int, mibps float64, bytes int64) analysis.Point {
	return analysis.Point{
		RestoreID: int64(i + 1),
		At:        t0.Add(time.Duration(i) * 24 * time.Hour),
		DurationS: float64(bytes) / (1 << 20) / mibps,
		Bytes:     bytes,
		MiBps:     mibps,
		Factors:   map[string]string{"instance_build": "13.0.4474.0", "size_class": "100-500 GiB"},
	}
}

// stepSeries is before restores at levelMiBps then after restores at
// factor × levelMiBps, each with its own noise draw.
func stepSeries(r *rand.Rand, before, after int, factor float64, nz noise) []analysis.Point {
	s := make([]analysis.Point, 0, before+after)
	for i := range before + after {
		level := levelMiBps
		if i >= before {
			level *= factor
		}
		s = append(s, point(i, level*nz(r), backupSize))
	}
	return s
}

type rates struct {
	n, regressions, improvements, changes, outlierSeries int
}

func (r rates) flagged() float64 { return float64(r.regressions+r.improvements) / float64(r.n) }

func measureStable(seed uint64, series int, nz noise) rates {
	r := rand.New(rand.NewPCG(seed, 1))
	var got rates
	cfg := analysis.DefaultConfig()
	for range series {
		f := analysis.Detect(stepSeries(r, 8+r.IntN(33), 0, 1, nz), cfg)
		got.n++
		switch f.Verdict {
		case analysis.Regression:
			got.regressions++
		case analysis.Improvement:
			got.improvements++
		}
		if f.ChangeIndex >= 0 {
			got.changes++
		}
		if len(f.Outliers) > 0 {
			got.outlierSeries++
		}
	}
	return got
}

func TestFalsePositiveRate(t *testing.T) {
	for _, tc := range []struct {
		name string
		nz   noise
	}{
		{"uniform ±25%", uniform25},
		{"lognormal σ=0.12", lognormal12},
	} {
		got := measureStable(11, 500, tc.nz)
		t.Logf("stable %s, 500 series of 8–40: flagged %.1f%% (%d regressions, %d improvements), change located %.1f%%, series with an outlier %.1f%%",
			tc.name, 100*got.flagged(), got.regressions, got.improvements,
			100*float64(got.changes)/float64(got.n), 100*float64(got.outlierSeries)/float64(got.n))
		if got.flagged() > 0.05 {
			t.Errorf("%s: false-positive rate %.3f, want <= 0.05", tc.name, got.flagged())
		}
	}
}

// TestDetectionRate measures power and dating for drops of 0.5× and 0.33×
// with 3, 5 and 10 restores after the change and 10–30 before it.
func TestDetectionRate(t *testing.T) {
	const trials = 300
	cfg := analysis.DefaultConfig()
	var dating []int // |found - true| over every detected regression
	for _, factor := range []float64{0.5, 0.33} {
		for _, after := range []int{3, 5, 10} {
			r := rand.New(rand.NewPCG(uint64(100*factor)+uint64(after), 2))
			hit, exact := 0, 0
			for range trials {
				before := 10 + r.IntN(21)
				f := analysis.Detect(stepSeries(r, before, after, factor, uniform25), cfg)
				if f.Verdict != analysis.Regression {
					continue
				}
				hit++
				e := f.ChangeIndex - before
				if e == 0 {
					exact++
				}
				dating = append(dating, max(e, -e))
			}
			rate := float64(hit) / trials
			t.Logf("drop %.2f×, %2d after: detected %.1f%% (%d/%d), dated exactly %.1f%% of those",
				factor, after, 100*rate, hit, trials, 100*float64(exact)/float64(max(hit, 1)))
			want := map[[2]float64]float64{{0.33, 5}: 0.80, {0.33, 10}: 0.90, {0.5, 10}: 0.80}[[2]float64{factor, float64(after)}]
			if rate < want {
				t.Errorf("drop %.2f× with %d after: detection %.3f, want >= %.2f", factor, after, rate, want)
			}
		}
	}
	slices.Sort(dating)
	within1 := 0
	for _, e := range dating {
		if e <= 1 {
			within1++
		}
	}
	share := float64(within1) / float64(len(dating))
	t.Logf("dating error over %d detections: median %d, within ±1 %.1f%%, max %d",
		len(dating), dating[len(dating)/2], 100*share, dating[len(dating)-1])
	if dating[len(dating)/2] != 0 || share < 0.90 {
		t.Errorf("dating: median %d (want 0), within ±1 %.3f (want >= 0.90)", dating[len(dating)/2], share)
	}
}

// TestImprovementRate checks the mirror image: a 2× speed-up is found.
func TestImprovementRate(t *testing.T) {
	const trials = 200
	r := rand.New(rand.NewPCG(7, 3))
	hit := 0
	for range trials {
		f := analysis.Detect(stepSeries(r, 10+r.IntN(21), 5, 2, uniform25), analysis.DefaultConfig())
		if f.Verdict == analysis.Improvement {
			hit++
		}
	}
	rate := float64(hit) / trials
	t.Logf("rise 2×, 5 after: improvement detected %.1f%% (%d/%d)", 100*rate, hit, trials)
	if rate < 0.80 {
		t.Errorf("improvement detection %.3f, want >= 0.80", rate)
	}
}

// TestSingleOutlierRate plants one slow restore (0.3×) at a random place in
// a stable series: it must be flagged as an outlier and never make the
// series a regression.
func TestSingleOutlierRate(t *testing.T) {
	const trials = 300
	r := rand.New(rand.NewPCG(5, 4))
	flagged, regressions := 0, 0
	for range trials {
		s := stepSeries(r, 10+r.IntN(31), 0, 1, uniform25)
		at := r.IntN(len(s))
		s[at] = point(at, s[at].MiBps*0.3, backupSize)
		f := analysis.Detect(s, analysis.DefaultConfig())
		if slices.Equal(f.Outliers, []int{at}) {
			flagged++
		}
		if f.Verdict != analysis.Stable {
			regressions++
		}
	}
	t.Logf("one 0.3× restore in a stable series: flagged alone %.1f%%, verdict not stable %.1f%%",
		100*float64(flagged)/trials, 100*float64(regressions)/trials)
	if flagged < trials*95/100 || regressions > 0 {
		t.Errorf("outlier flagged %d/%d (want >= 95%%), non-stable verdicts %d (want 0)", flagged, trials, regressions)
	}
}

// TestPenaltyCalibration reproduces the calibration behind the penalty of
// Detect (4 · ln n · σ², σ from the MAD of successive differences, floored
// at 0.02; keep in step with detect.go): how often segmentation alone
// splits a stable series, before the materiality and rank-test checks.
func TestPenaltyCalibration(t *testing.T) {
	for _, tc := range []struct {
		name string
		nz   noise
	}{
		{"uniform ±25%", uniform25},
		{"lognormal σ=0.12", lognormal12},
	} {
		r := rand.New(rand.NewPCG(13, 13))
		const trials = 2000
		split := 0
		for range trials {
			n := 8 + r.IntN(33)
			x := make([]float64, n)
			for i := range x {
				x[i] = math.Log(tc.nz(r))
			}
			d := make([]float64, n-1)
			for i := range d {
				d[i] = x[i+1] - x[i]
			}
			sigma := max(1.4826*analysis.MAD(d)/math.Sqrt2, 0.02)
			if len(analysis.ChangePoints(x, 3, 4*math.Log(float64(n))*sigma*sigma)) > 0 {
				split++
			}
		}
		rate := float64(split) / trials
		t.Logf("segmentation alone splits %.1f%% of stable %s series of 8–40", 100*rate, tc.name)
		if rate > 0.08 {
			t.Errorf("%s: split rate %.3f, want about 0.05", tc.name, rate)
		}
	}
}
