package analysis_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/restorewatch/restorewatch/store/analysis"
)

// BenchmarkDetect times Detect on 50-restore series. The fleet run is about
// 20,000 series of 50 restores, most of them stable, with a budget of 3 s
// on 2 cores: stable50 must stay well under 100 µs. regression50 pays for
// the rank tests and the 1,000-resample bootstrap, which only flagged
// series need. The 5000-restore cases guard against quadratic behaviour.
func BenchmarkDetect(b *testing.B) {
	r := rand.New(rand.NewPCG(21, 21))
	cases := []struct {
		name   string
		series []analysis.Point
	}{
		{"stable50", stepSeries(r, 50, 0, 1, uniform25)},
		{"outlier50", func() []analysis.Point {
			s := stepSeries(r, 50, 0, 1, uniform25)
			s[30].MiBps /= 4
			return s
		}()},
		{"regression50", stepSeries(r, 40, 10, 0.4, uniform25)},
		// A year of 15-minute log restores is 35,000; this checks the
		// method stays near-linear on long series.
		{"regression5000", stepSeries(r, 4000, 1000, 0.4, uniform25)},
		{"noisy5000", stepSeries(r, 5000, 0, 1, func(r *rand.Rand) float64 { return math.Exp(0.5 * r.NormFloat64()) })},
	}
	cfg := analysis.DefaultConfig()
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				analysis.Detect(c.series, cfg)
			}
		})
	}
}
