package plan_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/plan"
)

// fleetSource answers RestoreRates as the store does: an instance's own
// measured restores and, for fleet, the newest perKind of each kind on the
// other instances, oldest first.
type fleetSource struct {
	*fakeSource
	all []store.RestoreRate // oldest first
}

func (f *fleetSource) RestoreRates(_ context.Context, instance string, fleet bool, perKind int) ([]store.RestoreRate, error) {
	var out []store.RestoreRate
	taken := map[store.Kind]int{}
	for i := len(f.all) - 1; i >= 0; i-- {
		r := f.all[i]
		switch {
		case strings.EqualFold(r.Instance, instance):
			out = append(out, r)
		case fleet && taken[r.Kind] < max(perKind, 1):
			taken[r.Kind]++
			out = append(out, r)
		}
	}
	slices.Reverse(out)
	return out, nil
}

// newest is the fleet's newest n of each kind, all instances, oldest first:
// what the dashboard reads from its cached orders.
func (f *fleetSource) newest(_ context.Context, n int) ([]store.RestoreRate, error) {
	return f.RestoreRates(context.Background(), "\x00none", true, n)
}

// rates is a fleet of restores of three instances, one a minute, the
// instances in turn, the kinds every three minutes.
func rates(n int) []store.RestoreRate {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	kinds := []store.Kind{store.KindFull, store.KindDiff, store.KindLog}
	var out []store.RestoreRate
	for i := range n {
		out = append(out, store.RestoreRate{ID: int64(i + 1), Instance: fmt.Sprintf("SQL0%d", i%3+1), Database: "Sales",
			Kind: kinds[i/3%len(kinds)], DeviceKind: store.DeviceUNC, LogicalMiBps: float64(100 + i%7), At: t0.Add(time.Duration(i) * time.Minute)})
	}
	return out
}

// TestCachedEqualsItsSource: plan.Cached, which reads each instance's own
// rates once and the fleet's newest once for all, answers as its source
// does, whether the fleet's newest come from the source or from
// FleetRates, for each instance and fleet size asked in turn.
func TestCachedEqualsItsSource(t *testing.T) {
	src := &fleetSource{fakeSource: &fakeSource{}, all: rates(300)}
	for _, fromOrders := range []bool{false, true} {
		c := &plan.Cached{Source: src}
		if fromOrders {
			c.FleetRates = src.newest
		}
		for _, q := range []struct {
			instance string
			perKind  int
		}{{"SQL01", 5}, {"sql02", 5}, {"SQL03", 40}, {"SQL01", 3}, {"NEW99", 200}, {"SQL02", 1}} {
			got, err := c.RestoreRates(t.Context(), q.instance, true, q.perKind)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := src.RestoreRates(t.Context(), q.instance, true, q.perKind)
			if !slices.Equal(ids(got), ids(want)) {
				t.Errorf("orders %v, %s, %d a kind: got %v\nwant %v", fromOrders, q.instance, q.perKind, ids(got), ids(want))
			}
		}
	}
}

func ids(rs []store.RestoreRate) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// TestProjectRTO: a database with a backup history is projected by its
// restore plan's total, one with a broken chain is at risk whatever its
// size, one without history by its size over its speed, and one with
// neither is unknown, not safe; the furthest over its target comes first.
func TestProjectRTO(t *testing.T) {
	h := newHistory(2)
	var own []store.RestoreRate
	for i, k := range []store.Kind{store.KindFull, store.KindDiff, store.KindLog} {
		for j := range 5 {
			own = append(own, store.RestoreRate{ID: int64(10*i + j + 1), Instance: "SQL01", Database: "Sales", Kind: k,
				DeviceKind: store.DeviceLocal, LogicalMiBps: 0.01, At: h.at(j)})
		}
	}
	src := &fakeSource{sets: h.sets, rates: own}
	want, _, err := plan.Make(t.Context(), src, plan.Request{Instance: "SQL01", Database: "Sales"})
	if err != nil || want.TotalS <= 0 || want.Unestimated > 0 {
		t.Fatalf("the plan: %v, %+v", err, want)
	}
	tags := map[string]string{"rto": "1h"}
	cs := []store.RTOCandidate{
		{Instance: "SQL01", Database: "Sales", Tags: tags, FullBytes: 1, MiBps: 1000},
		{Instance: "SQL01", Database: "Small", Tags: tags, FullBytes: 1 << 30, MiBps: 1000}, // 1 s
		{Instance: "SQL01", Database: "Big", Tags: tags, FullBytes: 100 << 30, MiBps: 10},   // 2.8 h
		{Instance: "SQL01", Database: "Unmeasured", Tags: tags, FullBytes: 100 << 30, MiBps: 0},
	}
	rto, err := plan.ProjectRTO(t.Context(), src, cs, 0, analysis.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if rto.Checked != 3 || len(rto.Unknown) != 1 || rto.Unknown[0].Database != "Unmeasured" || len(rto.AtRisk) != 2 {
		t.Fatalf("checked %d, unknown %v, at risk %+v", rto.Checked, rto.Unknown, rto.AtRisk)
	}
	sales, big := rto.AtRisk[0], rto.AtRisk[1]
	if sales.Database != "Sales" || !sales.FromPlan || sales.Expected != time.Duration(want.TotalS*float64(time.Second)) {
		t.Errorf("Sales = %+v, want its plan's %v s first", sales, want.TotalS)
	}
	if big.Database != "Big" || big.FromPlan || math.Abs(big.Expected.Seconds()-100*1024/10) > 1 || big.Target != time.Hour || big.Over() < 2.8 {
		t.Errorf("Big = %+v, want 10,240 s from its size over its speed, 2.8× its 1 h target", big)
	}
	// A chain broken before the latest backup: a log after the last
	// differential is missing.
	h = newHistory(3)
	h.drop("I", h.at(3*day))
	h.drop("L", h.at(2*day+60))
	src.sets = h.sets
	rto, err = plan.ProjectRTO(t.Context(), src, cs[:1], time.Hour, analysis.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rto.AtRisk) != 1 || !rto.AtRisk[0].Broken || !math.IsInf(rto.AtRisk[0].Over(), 1) {
		t.Errorf("a broken chain: %+v", rto.AtRisk)
	}
}
