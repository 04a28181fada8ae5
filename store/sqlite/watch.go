package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/finding"
)

// saveWatches makes the instance's open watches those of series (issue
// 37, finding.WatchWrites), in the findings' transaction, with their
// alerts.
func (db *DB) saveWatches(ctx context.Context, tx *sql.Tx, instanceID int64, series []store.Series, regs []store.Regression) error {
	inst, err := instanceNameTx(ctx, tx, instanceID)
	if err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, database_name, kind, restore_id, direction, opened_at, ratio, duration_ratio FROM watch
		WHERE instance_id = ? AND state = 'open' ORDER BY id`, instanceID)
	if err != nil {
		return fmt.Errorf("store: save watches: %w", err)
	}
	var open []finding.OpenWatch
	for rows.Next() {
		var o finding.OpenWatch
		if err := rows.Scan(&o.ID, &o.Database, &o.Kind, &o.Restore, &o.Direction, &o.OpenedAt, &o.Ratio, &o.DurationRatio); err != nil {
			rows.Close()
			return fmt.Errorf("store: save watches: %w", err)
		}
		open = append(open, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: save watches: %w", err)
	}
	now := db.now().UnixMilli()
	ends, opens := finding.WatchWrites(inst, open, series, regs)
	for _, e := range ends {
		if _, err := tx.ExecContext(ctx, `UPDATE watch SET state = ?, closed_at = ?, closed_note = ? WHERE id = ?`,
			e.State, now, e.Note, e.ID); err != nil {
			return fmt.Errorf("store: close watch: %w", err)
		}
		if e.Alert != nil {
			if err := enqueueAlert(ctx, tx, *e.Alert); err != nil {
				return err
			}
		}
	}
	for _, o := range opens {
		w := o.Watch
		if _, err := tx.ExecContext(ctx, `INSERT INTO watch (instance_id, database_name, kind, direction, restore_id, opened_at,
			ratio, duration_ratio, usual_mibps, usual_n, first_seen) VALUES (?,?,?,?,?,?,?,?,?,?,?)
			ON CONFLICT (instance_id, database_name, kind, restore_id) DO UPDATE SET state = 'open', closed_at = NULL, closed_note = '',
				ratio = excluded.ratio, duration_ratio = excluded.duration_ratio, usual_mibps = excluded.usual_mibps, usual_n = excluded.usual_n`,
			instanceID, o.Database, o.Kind, w.Direction, w.RestoreID, w.OpenedAt.UnixMilli(), w.Ratio, w.DurationRatio,
			w.UsualMiBps, w.UsualN, now); err != nil {
			return fmt.Errorf("store: open watch: %w", err)
		}
		if err := enqueueAlert(ctx, tx, o.Alert); err != nil {
			return err
		}
	}
	return nil
}

// ListWatches lists watches, open ones first, newest first.
func (db *DB) ListWatches(ctx context.Context, f store.WatchFilter) ([]store.Watch, error) {
	var where []string
	var args []any
	if f.Instance != "" {
		where, args = append(where, "i.name = ?"), append(args, store.InstanceName(f.Instance))
	}
	if f.Database != "" {
		where, args = append(where, "w.database_name = ?"), append(args, f.Database)
	}
	if f.State != "" {
		where, args = append(where, "w.state = ?"), append(args, f.State)
	}
	q := `SELECT w.id, w.instance_id, i.name, w.database_name, w.kind, w.direction, w.restore_id, w.opened_at, w.ratio,
		w.duration_ratio, w.usual_mibps, w.usual_n, w.state, w.closed_at, w.closed_note, w.first_seen
		FROM watch w JOIN instance i ON i.id = w.instance_id`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY w.state = 'open' DESC, w.opened_at DESC, w.id DESC LIMIT 1000"
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list watches: %w", err)
	}
	defer rows.Close()
	var out []store.Watch
	for rows.Next() {
		var w store.Watch
		var kind string
		var opened, first int64
		var closed sql.NullInt64
		if err := rows.Scan(&w.ID, &w.InstanceID, &w.Instance, &w.Database, &kind, &w.Direction, &w.RestoreID, &opened, &w.Ratio,
			&w.DurationRatio, &w.UsualMiBps, &w.UsualN, &w.State, &closed, &w.ClosedNote, &first); err != nil {
			return nil, fmt.Errorf("store: list watches: %w", err)
		}
		w.Kind, w.OpenedAt, w.FirstSeen, w.ClosedAt = store.Kind(kind), store.UnixMs(opened), store.UnixMs(first), nTime(closed)
		out = append(out, w)
	}
	return out, rows.Err()
}
