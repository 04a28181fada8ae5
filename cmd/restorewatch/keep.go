package main

import (
	"context"
	"time"

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
func keepAggregates(ctx context.Context, m *Main, w keep.Warehouse, all bool) {
	start := time.Now()
	r, err := keep.Refresh(ctx, w, Version, time.Now(), all)
	if err != nil {
		m.Logger.Warn("keeping the dashboard's aggregates failed; serve computes them", "error", err)
		return
	}
	m.Logger.Debug("dashboard aggregates kept", "orders_saved", r.OrdersSaved, "cohorts_kept", r.CohortsKept, "orders_ms", r.Orders.Milliseconds(),
		"cohorts_ms", r.Cohorts.Milliseconds(), "save_ms", r.Save.Milliseconds(), "duration_ms", time.Since(start).Milliseconds())
}
