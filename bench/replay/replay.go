package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/plan"
)

// Series is one (instance, database, kind) sequence of measured restores,
// oldest first, with the indexes of its true changes (the first restore
// after each).
type Series struct {
	Instance, Database string
	Kind               store.Kind
	Points             []store.RestoreRate
	Changes            []int
}

// Change is what the replay saw of one true change.
type Change struct {
	Series        string
	Direction     string
	Ratio         float64 // true ratio of speeds after / before (median)
	ToWatch       int     // restores after the change until it was watched (1 = at the first); 0 = never
	ToRegression  int     // … until a regression dated to it (±1 restore); 0 = never
	DaysWatch     float64 // from the first restore after the change to the watch
	DaysRegress   float64
	Inside        [5]int // estimates for the 1st…5th restore after the change: 1 inside the range, 0 outside, -1 none
	WatchedInside [5]int // of those, made while a watch or young regime was open: 1 inside, 0 outside, -1 not watched
}

// Report is a replay's figures.
type Report struct {
	Series, Restores  int
	SeriesYears       float64
	Changes           []Change
	FalseWatches      int // prefixes watched at a restore no true change explains
	FalseRegressions  int // prefixes flagged with a regression no true change explains
	Vanished          int // false regressions raised and later gone
	NullRestores      int // restores replayed away from any true change
	MissedRegressions int // changes never flagged within the restores replayed
}

// near says whether i is within one restore of a true change of s.
func near(s *Series, i int) bool {
	for _, c := range s.Changes {
		if i >= c-1 && i <= c+1 {
			return true
		}
	}
	return false
}

// Verbose, when set, receives a line for every false regression raised.
var Verbose io.Writer

// Replay runs the analysis and the estimator on every prefix of every
// series: at each restore k, what Detect says of the restores before and
// including k-1, and what plan.Rate would have said of restore k. Nothing
// from after the cut is used.
func Replay(ss []Series, cfg analysis.Config) Report {
	cfg.Bootstrap = 0
	var rep Report
	for si := range ss {
		s := &ss[si]
		n := len(s.Points)
		if n < 8 {
			continue
		}
		rep.Series++
		rep.SeriesYears += s.Points[n-1].At.Sub(s.Points[0].At).Hours() / 24 / 365
		name := fmt.Sprintf("%s/%s/%s", s.Instance, s.Database, s.Kind)
		changes := make([]Change, len(s.Changes))
		for ci := range s.Changes {
			changes[ci] = Change{Series: name, Inside: [5]int{-1, -1, -1, -1, -1}, WatchedInside: [5]int{-1, -1, -1, -1, -1}}
			changes[ci].Ratio = trueRatio(s, ci)
			changes[ci].Direction = "slower"
			if changes[ci].Ratio > 1 {
				changes[ci].Direction = "faster"
			}
		}
		flaggedFalse := -1 // change index of a false regression being shown, -1 none
		for k := 6; k <= n; k++ {
			prefix := s.Points[:k]
			pts := make([]analysis.Point, k)
			for i, r := range prefix {
				pts[i] = analysis.Point{RestoreID: r.ID, At: r.At, DurationS: r.DurationS, Bytes: r.Bytes, MiBps: r.LogicalMiBps}
			}
			f := analysis.Detect(pts, cfg)
			rep.Restores++
			isReg := f.Verdict == analysis.Regression || f.Verdict == analysis.Improvement
			if !near(s, k-1) {
				rep.NullRestores++
			}
			if f.Watch != nil && !near(s, f.Watch.Index) {
				rep.FalseWatches++
			}
			switch {
			case isReg && !near(s, f.ChangeIndex):
				if Verbose != nil && flaggedFalse < 0 {
					fmt.Fprintf(Verbose, "  false regression in %s at restore %d (%s): change at %d, %.2f×, %d/%d, confirmed %v\n",
						name, k, prefix[k-1].At.Format("2006-01-02"), f.ChangeIndex, f.Ratio, f.BaselineN, f.CurrentN, f.Confirmed)
				}
				rep.FalseRegressions++
				flaggedFalse = f.ChangeIndex
			case flaggedFalse >= 0:
				rep.Vanished++
				flaggedFalse = -1
			}
			for ci, c := range s.Changes {
				seen := k - c // restores after the change in the prefix
				ch := &changes[ci]
				if seen >= 1 && ch.ToWatch == 0 && (f.Watch != nil && near(s, f.Watch.Index) || isReg && abs(f.ChangeIndex-c) <= 1) {
					ch.ToWatch, ch.DaysWatch = seen, prefix[k-1].At.Sub(s.Points[c].At).Hours()/24
				}
				if seen >= 1 && ch.ToRegression == 0 && isReg && abs(f.ChangeIndex-c) <= 1 {
					ch.ToRegression, ch.DaysRegress = seen, prefix[k-1].At.Sub(s.Points[c].At).Hours()/24
				}
			}
			// The estimate for restore k (the next one), from the prefix.
			if k < n {
				next := s.Points[k]
				e := plan.Rate(plan.Facts{Target: s.Instance, Rates: prefix, Analysis: cfg},
					plan.Query{Database: s.Database, Kind: s.Kind, DeviceKind: next.DeviceKind})
				for ci, c := range s.Changes {
					if j := k - c; j >= 0 && j < 5 && e.N > 0 {
						in := 0
						if next.LogicalMiBps >= e.P10 && next.LogicalMiBps <= e.P90 {
							in = 1
						}
						changes[ci].Inside[j] = in
						if e.Other != nil {
							changes[ci].WatchedInside[j] = in
							if in == 0 && Verbose != nil {
								fmt.Fprintf(Verbose, "  %s, restore %d after the change: %.1f MiB/s outside %.1f–%.1f (%s)\n",
									name, j+1, next.LogicalMiBps, e.P10, e.P90, e.Basis)
							}
						}
					}
				}
			}
		}
		for _, ch := range changes {
			if ch.ToRegression == 0 {
				rep.MissedRegressions++
			}
		}
		rep.Changes = append(rep.Changes, changes...)
	}
	return rep
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// trueRatio is the median speed of the (up to 10) restores after change ci
// over the (up to 30) before it.
func trueRatio(s *Series, ci int) float64 {
	c := s.Changes[ci]
	lo := 0
	if ci > 0 {
		lo = s.Changes[ci-1]
	}
	hi := len(s.Points)
	if ci+1 < len(s.Changes) {
		hi = s.Changes[ci+1]
	}
	var b, a []float64
	for i := max(lo, c-30); i < c; i++ {
		b = append(b, s.Points[i].LogicalMiBps)
	}
	for i := c; i < min(hi, c+10); i++ {
		a = append(a, s.Points[i].LogicalMiBps)
	}
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	return analysis.Median(a) / analysis.Median(b)
}

// Print writes the report for people.
func (r Report) Print(w io.Writer, title string) {
	fmt.Fprintf(w, "%s: %d series, %.0f series-years, %d restores replayed\n", title, r.Series, r.SeriesYears, r.Restores)
	if len(r.Changes) > 0 {
		var tw, tr, dw, dr []float64
		atFirst, bySecond := 0, 0
		var in, inW [5][2]int
		for _, c := range r.Changes {
			if c.ToWatch > 0 {
				tw, dw = append(tw, float64(c.ToWatch)), append(dw, c.DaysWatch)
				if c.ToWatch == 1 {
					atFirst++
				}
			}
			if c.ToRegression > 0 {
				tr, dr = append(tr, float64(c.ToRegression)), append(dr, c.DaysRegress)
				if c.ToRegression <= 2 {
					bySecond++
				}
			}
			for j := range 5 {
				if c.Inside[j] >= 0 {
					in[j][0] += c.Inside[j]
					in[j][1]++
				}
				if c.WatchedInside[j] >= 0 {
					inW[j][0] += c.WatchedInside[j]
					inW[j][1]++
				}
			}
		}
		fmt.Fprintf(w, "  changes: %d; watched at the first restore after: %d; a regression by the second: %d; never flagged: %d\n",
			len(r.Changes), atFirst, bySecond, r.MissedRegressions)
		fmt.Fprintf(w, "  restores to watch: median %s, max %s; to regression: median %s, max %s\n", med(tw), maxs(tw), med(tr), maxs(tr))
		fmt.Fprintf(w, "  days to watch: median %s, max %s; to regression: median %s, max %s\n", med(dw), maxs(dw), med(dr), maxs(dr))
		cov := func(k int) string {
			a, b, aw, bw := 0, 0, 0, 0
			for j := range k {
				a, b, aw, bw = a+in[j][0], b+in[j][1], aw+inW[j][0], bw+inW[j][1]
			}
			return fmt.Sprintf("%d/%d (%s), under a watch or young regime %d/%d", a, b, pct(a, b), aw, bw)
		}
		fmt.Fprintf(w, "  estimates inside their range, first 1 restore after a change: %s\n", cov(1))
		fmt.Fprintf(w, "                                first 3 restores: %s\n", cov(3))
		fmt.Fprintf(w, "                                first 5 restores: %s\n", cov(5))
	}
	py := func(n int) string {
		if r.SeriesYears == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f per series-year", float64(n)/r.SeriesYears)
	}
	fmt.Fprintf(w, "  away from any change (%d restores): false watches %d (%s, %s of restores); false regressions %d (%s of restores); regressions that later vanished %d (%s)\n",
		r.NullRestores, r.FalseWatches, py(r.FalseWatches), pct(r.FalseWatches, r.NullRestores), r.FalseRegressions,
		pct(r.FalseRegressions, r.NullRestores), r.Vanished, py(r.Vanished))
}

func pct(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3g %%", 100*float64(a)/float64(b))
}

func med(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3g", analysis.Median(v))
}

func maxs(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3g", slices.Max(v))
}

// Fleet generates series as the analysis' simulations do (SPEC §5): daily
// full restores of 200 GiB at 400 MiB/s with ±25 % uniform or σ 0.12
// log-normal noise; a third of the series change once (a slowdown to
// 0.25–0.5× or a speed-up to 2–2.5×) after 40–90 restores; oneOff is the
// chance of a restore at a third of the speed (a real one-off: a busy
// share, an antivirus scan). withChanges false makes a null fleet.
func Fleet(seed uint64, n, days int, withChanges bool, oneOff float64) []Series {
	r := rand.New(rand.NewPCG(seed, 37))
	t0 := time.Date(2025, 1, 6, 2, 0, 0, 0, time.UTC)
	const size = int64(200) << 30
	var out []Series
	for si := range n {
		s := Series{Instance: fmt.Sprintf("GEN-SQL%03d", si), Database: "Sales", Kind: store.KindFull}
		change, factor := -1, 1.0
		if withChanges && si%3 == 0 {
			change = 40 + r.IntN(50)
			if r.IntN(5) == 0 {
				factor = 2 + 0.5*r.Float64()
			} else {
				factor = 0.25 + 0.25*r.Float64()
			}
			s.Changes = []int{change}
		}
		lognormal := si%2 == 1
		for i := range days {
			level := 400.0
			if change >= 0 && i >= change {
				level *= factor
			}
			if lognormal {
				level *= math.Exp(0.12 * r.NormFloat64())
			} else {
				level *= 0.75 + 0.5*r.Float64()
			}
			if r.Float64() < oneOff && !(change >= 0 && i >= change-1 && i <= change+2) {
				level /= 3
			}
			s.Points = append(s.Points, store.RestoreRate{ID: int64(i + 1), Instance: s.Instance, Database: s.Database,
				Kind: store.KindFull, DeviceKind: store.DeviceLocal, LogicalMiBps: level, Bytes: size,
				DurationS: float64(size) / (1 << 20) / level, At: t0.Add(time.Duration(i) * 24 * time.Hour)})
		}
		out = append(out, s)
	}
	return out
}
