package web

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/plan"
)

// The overview's RTO projection uses the restore plans' chain logic for
// every database with a backup history: the time to restore it to its
// latest backup is the plan's total (the full, the differential and every
// log after it, each at the measured speed of its kind and device), not
// the size of the last full restore over its speed. Databases without a
// backup history keep the size-based projection.

// planRTO is one database's projection from its restore plan.
type planRTO struct {
	expected time.Duration
	broken   bool // the log chain is broken before the latest backup
}

// planProjections projects every candidate with a backup history; ok is
// false when the warehouse keeps none.
func (s *Server) planProjections(ctx context.Context, cs []store.RTOCandidate) (map[int]planRTO, error) {
	have, err := s.db.BackupDatabases(ctx)
	if err != nil || len(have) == 0 {
		return nil, err
	}
	cached := s.planRates()
	out := map[int]planRTO{}
	for i, c := range cs {
		if !have[strings.ToLower(c.Instance)+"\x00"+c.Database] {
			continue
		}
		p, _, err := plan.Make(ctx, cached, plan.Request{Instance: c.Instance, Database: c.Database, Analysis: s.cfg.Analysis.Config})
		var gap *plan.GapError
		switch {
		case errors.As(err, &gap):
			out[i] = planRTO{broken: true}
		case err != nil:
			if store.ErrorCode(err) == store.EINTERNAL {
				return nil, err
			}
		case p.Unestimated == 0 && p.TotalS > 0:
			out[i] = planRTO{expected: time.Duration(p.TotalS * float64(time.Second))}
		}
	}
	return out, nil
}

// cachedPlanSource serves the plans of one page (the overview's, or the
// plan page's one): each instance's own rates are read once, and the
// fleet's newest rates once for every instance, from the dashboard's cached
// restore orders when the warehouse can read rates by id (fleetRates). The
// store's fleet query scans every restore of a kind: ~8 s at 10 M restores
// for each plan, where the orders find the same restores in memory.
type cachedPlanSource struct {
	plan.Source
	// fleetRates returns the newest perKind measured restores of each kind
	// of the whole fleet; nil: the store's query.
	fleetRates func(ctx context.Context, perKind int) ([]store.RestoreRate, error)
	mu         sync.Mutex
	own        map[string][]store.RestoreRate
	fleet      []store.RestoreRate // the newest fleetN per kind, all instances, oldest first
	// fleetN is how many per kind fleet holds.
	fleetN int
}

// planRates is the plan source of one page: the warehouse, with the
// fleet's rates taken from the restore orders.
func (s *Server) planRates() *cachedPlanSource {
	c := &cachedPlanSource{Source: s.db}
	c.fleetRates = func(ctx context.Context, perKind int) ([]store.RestoreRate, error) {
		// Shared by every plan of a data version: a plan page then reads
		// only its database's backups and its instance's own rates. perKind
		// is rounded up so that targets with a few own restores more or less
		// share one entry (cachedPlanSource takes the newest it needs).
		n := (max(perKind, 1) + fleetRatesStep - 1) / fleetRatesStep * fleetRatesStep
		return cached(ctx, s, "plan-fleet-rates\x00"+strconv.Itoa(n), func(ctx context.Context) ([]store.RestoreRate, error) {
			o, err := s.restoreOrders(ctx)
			if err != nil {
				return nil, err
			}
			var ids []int64
			for _, k := range []store.Kind{store.KindFull, store.KindDiff, store.KindLog} {
				ids = append(ids, o.Measured(store.RestoreFilter{Kind: k, Limit: n})...)
			}
			return s.db.RestoreRatesOf(ctx, ids)
		})
	}
	return c
}

// fleetRatesStep rounds the fleet's rates a plan asks for.
const fleetRatesStep = 1024

func (c *cachedPlanSource) RestoreRates(ctx context.Context, instance string, fleet bool, perKind int) ([]store.RestoreRate, error) {
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
		if c.fleetRates != nil {
			read = c.fleetRates
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
