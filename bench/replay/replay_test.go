package main

import (
	"os"
	"testing"

	"github.com/restorewatch/restorewatch/store/analysis"
)

// The replay itself, on small generated fleets (the bench runs larger
// ones, BENCHMARKS.md): every change is watched at its first restore and a
// regression by its second; estimates for the first three restores after
// a change are inside their range at least half the time and always while
// a watch or young regime is open; away from changes, false regressions
// stay under 0.05 % of restores.
func TestReplayOfGeneratedFleets(t *testing.T) {
	if testing.Verbose() {
		Verbose = os.Stdout
	}
	cfg := analysis.DefaultConfig()
	rep := Replay(Fleet(11, 30, 100, true, 1.0/365), cfg)
	rep.Print(os.Stdout, "fleet with changes")
	var in3, n3, inW, nW int
	for _, c := range rep.Changes {
		if c.ToWatch != 1 || c.ToRegression < 1 || c.ToRegression > 2 {
			t.Errorf("%s (%.2f×): watched after %d, a regression after %d restores", c.Series, c.Ratio, c.ToWatch, c.ToRegression)
		}
		for j := range 3 {
			if c.Inside[j] >= 0 {
				in3, n3 = in3+c.Inside[j], n3+1
			}
			if c.WatchedInside[j] >= 0 {
				inW, nW = inW+c.WatchedInside[j], nW+1
			}
		}
	}
	if len(rep.Changes) < 8 || 2*in3 < n3 || inW != nW || nW == 0 {
		t.Errorf("%d changes; first three estimates inside %d/%d, under a watch %d/%d", len(rep.Changes), in3, n3, inW, nW)
	}
	null := Replay(Fleet(12, 30, 365, false, 1.0/365), cfg)
	null.Print(os.Stdout, "null fleet")
	if float64(null.FalseRegressions) > 0.0005*float64(null.NullRestores) {
		t.Errorf("false regressions on %d of %d restores", null.FalseRegressions, null.NullRestores)
	}
}
