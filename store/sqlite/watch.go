package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/finding"
	"github.com/restorewatch/restorewatch/store/human"
)

// instanceLabel is the instance's name for a watch's words ("" if it
// cannot be read: the alert's own look-up then fails the transaction).
func instanceLabel(ctx context.Context, tx *sql.Tx, id int64) string {
	n, _ := instanceNameTx(ctx, tx, id)
	return n
}

// saveWatches makes the instance's open watches those of series (issue
// 37), in the findings' transaction: a series watched from a new restore
// opens a watch; an open watch whose series no longer shows it is
// confirmed, when a regression of that series is now dated to its
// restore, or closed ("back to usual"). Closed and confirmed watches stay
// as history.
func (db *DB) saveWatches(ctx context.Context, tx *sql.Tx, instanceID int64, series []store.Series, regs []store.Regression) error {
	type key struct{ database, kind string }
	type open struct {
		id, restore int64
		direction   string
		openedAt    int64
		ratio, dur  float64
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, database_name, kind, restore_id, direction, opened_at, ratio, duration_ratio FROM watch
		WHERE instance_id = ? AND state = 'open'`, instanceID)
	if err != nil {
		return fmt.Errorf("store: save watches: %w", err)
	}
	have := map[key]open{}
	for rows.Next() {
		var o open
		var k key
		if err := rows.Scan(&o.id, &k.database, &k.kind, &o.restore, &o.direction, &o.openedAt, &o.ratio, &o.dur); err != nil {
			rows.Close()
			return fmt.Errorf("store: save watches: %w", err)
		}
		have[k] = o
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: save watches: %w", err)
	}
	now := db.now().UnixMilli()
	confirmed := map[key]int64{} // the restore each series' regression is dated to
	for _, r := range regs {
		confirmed[key{r.Database, string(r.Kind)}] = r.ChangeRestoreID
	}
	want := map[key]*store.Watch{}
	for i := range series {
		if w := series[i].Watch; w != nil {
			want[key{series[i].Database, string(series[i].Kind)}] = w
		}
	}
	for k, o := range have {
		if w := want[k]; w != nil && w.RestoreID == o.restore {
			delete(want, k) // still open, as it was
			continue
		}
		state, note := finding.WatchEnd(o.direction, confirmed[k] == o.restore, want[k] != nil)
		if _, err := tx.ExecContext(ctx, `UPDATE watch SET state = ?, closed_at = ?, closed_note = ? WHERE id = ?`,
			state, now, note, o.id); err != nil {
			return fmt.Errorf("store: close watch: %w", err)
		}
		if state == store.WatchClosed {
			// A confirmed watch is told by its regression's alert.
			w := store.Watch{Instance: instanceLabel(ctx, tx, instanceID), Database: k.database, Kind: store.Kind(k.kind),
				Direction: o.direction, RestoreID: o.restore, OpenedAt: store.UnixMs(o.openedAt), Ratio: o.ratio, DurationRatio: o.dur, State: state}
			if err := enqueueWatchAlert(ctx, tx, store.AlertWatchClosed, instanceID, k.database, w.Kind, w.Direction, w.RestoreID,
				w.OpenedAt, w.Ratio, human.WatchLine(&w)); err != nil {
				return err
			}
		}
	}
	for k, w := range want {
		if _, err := tx.ExecContext(ctx, `INSERT INTO watch (instance_id, database_name, kind, direction, restore_id, opened_at,
			ratio, duration_ratio, usual_mibps, usual_n, first_seen) VALUES (?,?,?,?,?,?,?,?,?,?,?)
			ON CONFLICT (instance_id, database_name, kind, restore_id) DO UPDATE SET state = 'open', closed_at = NULL, closed_note = '',
				ratio = excluded.ratio, duration_ratio = excluded.duration_ratio, usual_mibps = excluded.usual_mibps, usual_n = excluded.usual_n`,
			instanceID, k.database, k.kind, w.Direction, w.RestoreID, w.OpenedAt.UnixMilli(), w.Ratio, w.DurationRatio,
			w.UsualMiBps, w.UsualN, now); err != nil {
			return fmt.Errorf("store: open watch: %w", err)
		}
		line := *w
		line.Instance, line.State = instanceLabel(ctx, tx, instanceID), store.WatchOpen
		if err := enqueueWatchAlert(ctx, tx, store.AlertWatchOpened, instanceID, k.database, store.Kind(k.kind), w.Direction,
			w.RestoreID, w.OpenedAt, w.Ratio, human.WatchLine(&line)); err != nil {
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
