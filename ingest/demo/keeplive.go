package demo

import (
	"context"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// LiveEvery is how often KeepLive samples, as a collector's pass samples a
// running restore (every 10 s by default; the demo needs less).
const LiveEvery = time.Minute

// warehouseDone is when the running restore's shape reaches its end: the
// demo then starts it again, so /live always has a restore in flight.
const warehouseDone = 687 * time.Minute // 55 % in 75 min, then 44.9 % at 0.0733 % a minute

// KeepLive plays the collector for the demo while `serve --demo` serves:
// every LiveEvery it samples the demo's running restore (seed 000) and
// records a collector pass, so /live and /collector do not turn stale
// minutes after the demo starts. It touches only the demo's own restore (its
// instance, session and statement) and returns when ctx ends.
func KeepLive(ctx context.Context, db store.Warehouse) error {
	t := time.NewTicker(LiveEvery)
	defer t.Stop()
	for {
		if err := SampleLive(ctx, db, time.Now().UTC()); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// SampleLive is one pass of KeepLive at now: a point on the demo's running
// restore (a new run of it once the last one would have finished) and, on
// the quarter hour, a collector pass over every instance. A warehouse
// without the demo's restore is left alone.
func SampleLive(ctx context.Context, db store.Warehouse, now time.Time) error {
	curves, err := db.InflightCurves(ctx, time.Time{})
	if err != nil {
		return err
	}
	var c *store.InflightCurve
	for i := range curves {
		if x := &curves[i]; !x.Ended && x.SessionID == warehouseSession && x.Statement == warehouseStatement {
			c = x
		}
	}
	if c == nil {
		return nil
	}
	now = now.Truncate(time.Second)
	if now.Sub(c.LastSeen) >= 15*time.Minute || now.Truncate(15*time.Minute) != c.LastSeen.Truncate(15*time.Minute) {
		insts, err := db.ListInstances(ctx, "")
		if err != nil {
			return err
		}
		if err := collectorPass(ctx, db, insts, now, c.Instance, named(insts, permissionPrefix)); err != nil {
			return err
		}
	}
	if now.Sub(c.StartUTC) >= warehouseDone {
		// Finished while nobody watched: end it, and start the next run.
		if err := db.AddInflightSamples(ctx, c.Instance, nil); err != nil {
			return err
		}
		start := now.Add(-warehouseRan)
		return addCurve(ctx, db, c.Instance, c.Database, warehouseSession, start, now, false, warehouseOffset,
			warehouseStatement, warehouseProgress)
	}
	if !now.After(c.LastSeen) {
		return nil
	}
	e := now.Sub(c.StartUTC)
	p := warehouseProgress(e)
	rate := (p - warehouseProgress(e-time.Minute)) // % per minute, now
	var left int64
	if rate > 0 {
		left = int64((100 - p) / rate * 60_000)
	}
	local := func(t time.Time) time.Time { return t.Add(time.Duration(c.UTCOffset) * time.Minute) }
	return db.AddInflightSamples(ctx, c.Instance, []store.InflightSample{{Instance: c.Instance, Database: c.Database,
		SessionID: c.SessionID, Command: c.Command, Statement: c.Statement, Start: c.Start, SampledAt: local(now),
		UTCOffset: c.UTCOffset, Percent: p, EstRemainingMs: left, WaitType: "BACKUPIO"}})
}
