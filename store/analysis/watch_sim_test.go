package analysis_test

import (
	"math/rand/v2"
	"testing"

	"github.com/restorewatch/restorewatch/store/analysis"
)

// Walk-forward replays (issue 37): Detect runs on every prefix of a series,
// as it would after each restore, with nothing from after the cut.

// replayStep replays a step series restore by restore from the first
// restore after the change, and returns after how many slow restores the
// series was first watched and first a regression (0 = never in after).
func replayStep(s []analysis.Point, before int, cfg analysis.Config) (watchAt, regAt int) {
	for k := 1; k <= len(s)-before; k++ {
		f := analysis.Detect(s[:before+k], cfg)
		if watchAt == 0 && (f.Watch != nil || f.Verdict == analysis.Regression || f.Verdict == analysis.Improvement) {
			watchAt = k
		}
		if f.Verdict == analysis.Regression || f.Verdict == analysis.Improvement {
			if f.ChangeIndex != before {
				continue // dated elsewhere: not this change
			}
			return watchAt, k
		}
	}
	return watchAt, 0
}

// Every material slowdown or speed-up is watched at its first restore and
// a regression (dated to that restore) at its second.
func TestWatchAtFirstConfirmAtSecond(t *testing.T) {
	cfg := analysis.DefaultConfig()
	cfg.Bootstrap = 0
	r := rand.New(rand.NewPCG(37, 1))
	for _, factor := range []float64{0.25, 0.4, 0.5, 2.5} {
		for _, nz := range []struct {
			name string
			f    noise
		}{{"uniform25", uniform25}, {"lognormal12", lognormal12}} {
			late := 0
			for range 50 {
				s := stepSeries(r, 40, 6, factor, nz.f)
				w, g := replayStep(s, 40, cfg)
				if w != 1 || g != 2 {
					t.Logf("late: watch %d regression %d", w, g)
					late++
				}
			}
			t.Logf("factor %.2f, %s: %d of 50 not watched at the 1st and confirmed at the 2nd", factor, nz.name, late)
			if late > 2 {
				t.Errorf("factor %.2f, %s: %d of 50 late", factor, nz.name, late)
			}
		}
	}
}

// On a null fleet (no real change; ±25 % noise and, once per series-year
// on average, a one-off restore at a third of the speed), replayed restore
// by restore: how often a regression is raised, and how often one raised
// later vanishes.
func TestNullFleetReplay(t *testing.T) {
	cfg := analysis.DefaultConfig()
	cfg.Bootstrap = 0
	r := rand.New(rand.NewPCG(38, 2))
	const series, days = 200, 365
	var restores, flagged, watches, vanished int
	for range series {
		s := make([]analysis.Point, days)
		for i := range s {
			level := levelMiBps * uniform25(r)
			if r.Float64() < 1.0/365 {
				level /= 3
			}
			s[i] = point(i, level, backupSize)
		}
		open := -1 // change index of the regression raised, -1 none
		for k := 6; k <= days; k++ {
			f := analysis.Detect(s[:k], cfg)
			restores++
			if f.Watch != nil {
				watches++
			}
			isReg := f.Verdict == analysis.Regression || f.Verdict == analysis.Improvement
			if isReg {
				flagged++
				if open < 0 {
					t.Logf("flagged at %d: change %d confirmed %v ratio %.2f n %d/%d", k, f.ChangeIndex, f.Confirmed, f.Ratio, f.BaselineN, f.CurrentN)
				}
				open = f.ChangeIndex
			} else if open >= 0 {
				vanished++
				open = -1
			}
		}
	}
	t.Logf("null fleet, %d series-years, %d restores replayed: %d prefixes flagged (%.3f %%), %d watches (%.2f %%), %d regressions vanished",
		series, restores, flagged, 100*float64(flagged)/float64(restores), watches, 100*float64(watches)/float64(restores), vanished)
	if float64(flagged) > 0.0005*float64(restores) {
		t.Errorf("false regressions on %.3f %% of restores, want ≤ 0.05 %%", 100*float64(flagged)/float64(restores))
	}
}

// Every prefix of short, jumpy series (several changes close together,
// runs of slow and fast restores) is judged without a panic, and a watch
// or a confirmed change always points inside the series.
func TestDetectShortJumpySeries(t *testing.T) {
	r := rand.New(rand.NewPCG(39, 3))
	levels := []float64{400, 100, 900, 130, 400, 60}
	for range 400 {
		n := 6 + r.IntN(40)
		s := make([]analysis.Point, n)
		for i := range s {
			s[i] = point(i, levels[r.IntN(len(levels))]*uniform25(r), backupSize)
		}
		for k := 6; k <= n; k++ {
			f := analysis.Detect(s[:k], analysis.DefaultConfig())
			if f.Watch != nil && (f.Watch.Index < 0 || f.Watch.Index >= k) || f.ChangeIndex >= k {
				t.Fatalf("prefix %d: watch %+v change %d", k, f.Watch, f.ChangeIndex)
			}
		}
	}
}
