package analysis_test

import (
	"slices"
	"testing"

	"github.com/restorewatch/restorewatch/store/analysis"
)

func pts(factor string, values ...string) []analysis.Point {
	out := make([]analysis.Point, len(values))
	for i, v := range values {
		out[i].Factors = map[string]string{factor: v}
	}
	return out
}

func merge(a, b []analysis.Point) []analysis.Point {
	for i := range a {
		for k, v := range b[i].Factors {
			a[i].Factors[k] = v
		}
	}
	return a
}

func TestRankFactors(t *testing.T) {
	before := merge(merge(
		pts("instance_build", "13.0.4474.0", "13.0.4474.0", "13.0.4474.0", "13.0.4474.0"),
		pts("io_alignment", "512", "512", "4096", "512")),
		pts("stripes", "4", "4", "4", "4"))
	after := merge(merge(
		pts("instance_build", "13.0.5026.0", "13.0.5026.0", "", "13.0.5026.0"),
		pts("io_alignment", "4096", "4096", "4096", "512")),
		pts("stripes", "4", "4", "4", "4"))
	got := analysis.RankFactors(before, after)
	want := []analysis.FactorChange{
		// Flipped exactly at the change; the unknown value is ignored.
		{Factor: "instance_build", Before: "13.0.4474.0", After: "13.0.5026.0", Score: 1},
		// Drifting: 3/4 typical before × 3/4 typical after.
		{Factor: "io_alignment", Before: "512", After: "4096", Score: 0.5625},
		// stripes did not change and is not listed.
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestRankFactorsEdges(t *testing.T) {
	// Unknown on one side: nothing can be said.
	if got := analysis.RankFactors(pts("ifi", "", ""), pts("ifi", "0", "0")); len(got) != 0 {
		t.Errorf("unknown before: %+v", got)
	}
	// Equal scores: SPEC order (build before compression), then name.
	before := merge(merge(pts("compression", "0", "0"), pts("instance_build", "a", "a")), pts("zz_custom", "x", "x"))
	after := merge(merge(pts("compression", "1", "1"), pts("instance_build", "b", "b")), pts("zz_custom", "y", "y"))
	var order []string
	for _, fc := range analysis.RankFactors(before, after) {
		order = append(order, fc.Factor)
	}
	if want := []string{"instance_build", "compression", "zz_custom"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	// A tie for the majority goes to the most recent value.
	got := analysis.RankFactors(pts("trace_flags", "3226", "", "1117"), pts("trace_flags", "3226", "3226"))
	want := []analysis.FactorChange{{Factor: "trace_flags", Before: "1117", After: "3226", Score: 0.5}}
	if !slices.Equal(got, want) {
		t.Errorf("tie: got %+v, want %+v", got, want)
	}
	if names := analysis.FactorNames(); len(names) != 18 || names[0] != "instance_build" || names[16] != "size_class" || names[17] != "destination" {
		t.Errorf("FactorNames() = %v", names)
	}
}
