package store

import (
	"context"
	"fmt"
	"time"
)

// Retention says how long the warehouse keeps each kind of record; zero keeps
// it for ever. Restore history is the product's memory (it outlives msdb's
// purge), so it is kept by default; collector runs and in-flight curves are
// operational detail that grows with every pass.
type Retention struct {
	Restores time.Duration // raw history rows and log restores, and so their restores
	Runs     time.Duration // collector run records
	Inflight time.Duration // progress curves of restores seen in flight
}

// PruneStats counts what Prune removed.
type PruneStats struct {
	History, LogRestores, Runs, Inflight int64
}

// Prune deletes records older than the retention allows, each table in its
// own transaction, and reconciles the instances whose restores it removed.
func (db *DB) Prune(ctx context.Context, r Retention, now time.Time) (PruneStats, error) {
	var st PruneStats
	exec := func(n *int64, q string, args ...any) error {
		res, err := db.write.ExecContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("store: prune: %w", err)
		}
		*n, _ = res.RowsAffected()
		return nil
	}
	if r.Restores > 0 {
		// Raw facts carry local wall times; a day of margin covers every
		// offset, so nothing younger than the retention is removed.
		cut := now.Add(-r.Restores).Add(-24 * time.Hour).UnixMilli()
		if _, err := db.write.ExecContext(ctx, `UPDATE instance SET dirty = dirty + 1, dirty_from = NULL WHERE id IN (
			SELECT instance_id FROM history_row WHERE restore_local < ?
			UNION SELECT instance_id FROM log_restore WHERE completed_local < ?)`, cut, cut); err != nil {
			return st, fmt.Errorf("store: prune: %w", err)
		}
		if err := exec(&st.History, `DELETE FROM history_row WHERE restore_local < ?`, cut); err != nil {
			return st, err
		}
		if err := exec(&st.LogRestores, `DELETE FROM log_restore WHERE completed_local < ?`, cut); err != nil {
			return st, err
		}
		if err := db.Reconcile(ctx); err != nil {
			return st, err
		}
	}
	if r.Runs > 0 {
		if err := exec(&st.Runs, `DELETE FROM collector_run WHERE started < ?`, now.Add(-r.Runs).UnixMilli()); err != nil {
			return st, err
		}
	}
	if r.Inflight > 0 {
		if err := exec(&st.Inflight, `DELETE FROM inflight_restore WHERE last_seen_utc < ?`, now.Add(-r.Inflight).UnixMilli()); err != nil {
			return st, err
		}
	}
	return st, nil
}
