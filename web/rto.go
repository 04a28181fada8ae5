package web

import (
	"context"
	"strconv"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/plan"
)

// planRates is the plan source of one page (plan.Cached): the warehouse,
// with the fleet's rates taken from the dashboard's cached restore orders,
// which find the fleet's newest restores of a kind in memory where the
// store's query scans them.
func (s *Server) planRates() *plan.Cached {
	c := &plan.Cached{Source: s.db}
	c.FleetRates = func(ctx context.Context, perKind int) ([]store.RestoreRate, error) {
		// Shared by every plan of a data version: a plan page then reads
		// only its database's backups and its instance's own rates. perKind
		// is rounded up so that targets with a few own restores more or less
		// share one entry (plan.Cached takes the newest it needs).
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
