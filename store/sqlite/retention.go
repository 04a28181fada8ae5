package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// Prune deletes records older than the retention allows, each table in its
// own transaction, and reconciles the instances whose restores it removed.
func (db *DB) Prune(ctx context.Context, r store.Retention, now time.Time) (store.PruneStats, error) {
	var st store.PruneStats
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
