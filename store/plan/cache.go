package plan

import (
	"context"
	"sort"
	"strings"
	"sync"

	"github.com/restorewatch/restorewatch/store"
)

// Cached is the Source of the plans one page makes (the overview's RTO
// projections, or a plan page's one plan): each instance's own rates are
// read once, and the fleet's newest rates once for every instance — from
// FleetRates when set (the dashboard takes them from its cached restore
// orders, where the store's fleet query scans every restore of a kind).
// Its answers equal Source's (web's TestPlanFleetRatesFromTheOrders, and
// TestCachedEqualsItsSource here). Measured gain: a plan page's p95 at 8
// clients and 10 M restores 25,049 → 322.6 ms (docs/benchmarks-log.md,
// "Session 10").
type Cached struct {
	Source
	// FleetRates returns the newest perKind measured restores of each kind
	// of the whole fleet, oldest first; nil: Source.RestoreRates.
	FleetRates func(ctx context.Context, perKind int) ([]store.RestoreRate, error)

	mu    sync.Mutex
	own   map[string][]store.RestoreRate
	fleet []store.RestoreRate // the newest fleetN per kind, all instances, oldest first
	// fleetN is how many per kind fleet holds.
	fleetN int
}

// RestoreRates is Source.RestoreRates from what c has read.
func (c *Cached) RestoreRates(ctx context.Context, instance string, fleet bool, perKind int) ([]store.RestoreRate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := strings.ToLower(instance)
	own, ok := c.own[key]
	if !ok {
		var err error
		if own, err = c.Source.RestoreRates(ctx, instance, false, perKind); err != nil {
			return nil, err
		}
		if c.own == nil {
			c.own = map[string][]store.RestoreRate{}
		}
		c.own[key] = own
	}
	if !fleet {
		return own, nil
	}
	// The newest perKind of the other instances are among the newest
	// perKind + (this instance's count) of all.
	counts := map[store.Kind]int{}
	for _, r := range own {
		counts[r.Kind]++
	}
	need := perKind
	for _, n := range counts {
		need = max(need, perKind+n)
	}
	if c.fleet == nil || c.fleetN < need {
		read := func(ctx context.Context, n int) ([]store.RestoreRate, error) {
			return c.Source.RestoreRates(ctx, "", true, n)
		}
		if c.FleetRates != nil {
			read = c.FleetRates
		}
		all, err := read(ctx, need)
		if err != nil {
			return nil, err
		}
		c.fleet, c.fleetN = all, need
	}
	out := append([]store.RestoreRate(nil), own...)
	taken := map[store.Kind]int{}
	for i := len(c.fleet) - 1; i >= 0; i-- {
		r := c.fleet[i]
		if strings.EqualFold(r.Instance, instance) || taken[r.Kind] >= max(perKind, 1) {
			continue
		}
		taken[r.Kind]++
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}
