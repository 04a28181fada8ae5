package main

import (
	"context"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/keep"
)

// keepAggregates brings the dashboard's kept aggregates up to date after a
// command changed the data (issue 42): the next `serve` shows its first
// pages from them instead of reading every restore. A failure is logged,
// not returned: the data the command wrote stands, and a server computes
// what was not kept. all recomputes the build cohorts whatever the change;
// neither import nor analyze asks it: at 10 M they read every measured
// restore (78 s at load 7, against analyze's 30 s target), so they are
// read again only when few are current (keep.CohortsShare), and a server
// shows the kept ones while it computes the current ones.
func keepAggregates(ctx context.Context, m *Main, w keep.Warehouse, all bool) bool {
	start := time.Now()
	r, err := keep.Refresh(ctx, w, Version, time.Now(), all)
	if err != nil {
		m.Logger.Warn("keeping the dashboard's aggregates failed; serve computes them", "error", err)
		return false
	}
	m.Logger.Debug("dashboard aggregates kept", "orders_saved", r.OrdersSaved, "cohorts_kept", r.CohortsKept, "orders_ms", r.Orders.Milliseconds(),
		"cohorts_ms", r.Cohorts.Milliseconds(), "save_ms", r.Save.Milliseconds(), "duration_ms", time.Since(start).Milliseconds())
	return r.Version != ""
}

// keepEvery is how often a long-running command that changes the data
// (collect, serve with pushing collectors, uploads or its own collector)
// looks whether it did, and keeps the aggregates again if so: a refresh
// reads the orders' changes, the instance list and the RTO candidates
// (seconds at 10 M restores), so it is not run after every pass or batch.
const keepEvery = 5 * time.Minute

// keepWhileRunning keeps the dashboard's aggregates current while the data
// changes under a long-running command (issue 42: "the collector/push
// paths leave the dashboard's aggregates current"): every every, when the
// warehouse's data version is not the one last kept, keepAggregates. A
// refresh the data moved under keeps nothing and is tried again on the
// next tick. It returns when ctx ends.
func keepWhileRunning(ctx context.Context, m *Main, w keep.Warehouse, every time.Duration) {
	// What is kept may be current already (an import or analyze before
	// this start): a refresh of it would only read again what it holds.
	kept := ""
	if v, err := w.DataVersion(ctx); err == nil {
		if _, ok, err := keep.Kept(ctx, w, keep.NameFigures, Version, v); err == nil && ok {
			kept = v
		}
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		v, err := w.DataVersion(ctx)
		if err != nil || v == kept {
			continue
		}
		if keepAggregates(ctx, m, w, false) {
			kept = v
		}
	}
}

// keepAfter runs keepAggregates when the data version changed since
// before (a one-shot collection that stored something).
func keepAfter(ctx context.Context, m *Main, w keep.Warehouse, before string) {
	if v, err := w.DataVersion(ctx); err == nil && v != before {
		keepAggregates(ctx, m, w, false)
	}
}

// servedOrders is the warehouse a server keeps the aggregates of: the
// orders it holds in memory stand for the snapshot, which at 10 M restores
// is a second copy of 490 MiB to load.
type servedOrders struct {
	keep.Warehouse
	orders func() store.FleetOrders
}

func (w servedOrders) LoadOrders(ctx context.Context) (store.FleetOrders, error) {
	if o := w.orders(); o != nil {
		return o, nil
	}
	return w.Warehouse.LoadOrders(ctx)
}
