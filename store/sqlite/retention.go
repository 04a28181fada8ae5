package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// Prune applies the retention r (store.ApplyRetention) with this
// warehouse's steps: each instance's roll-up in one transaction on the
// writer.
func (db *DB) Prune(ctx context.Context, r store.Retention, now time.Time) (store.PruneStats, error) {
	return store.ApplyRetention(ctx, pruner{db}, r, now)
}

// pruner is the warehouse's store.Pruner.
type pruner struct{ db *DB }

func (p pruner) Reconcile(ctx context.Context) error { return p.db.Reconcile(ctx) }

func (p pruner) OldLogInstances(ctx context.Context, cut int64) ([]int64, error) {
	var ids []int64
	err := eachInt(ctx, p.db.read, `SELECT id FROM instance AS i WHERE EXISTS (SELECT 1 FROM restore AS r
		WHERE r.instance_id = i.id AND r.at_utc < ? AND r.kind = 'log') ORDER BY id`, func(v int64) { ids = append(ids, v) }, cut)
	return ids, err
}

func (p pruner) RollUpInstance(ctx context.Context, id, cut int64, keep int, st *store.PruneStats) error {
	return p.db.rollUpInstance(ctx, id, cut, keep, st)
}

func (p pruner) DeleteRuns(ctx context.Context, before time.Time) (int64, error) {
	res, err := p.db.write.ExecContext(ctx, `DELETE FROM collector_run WHERE started < ?`, before.UnixMilli())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (p pruner) DeleteInflight(ctx context.Context, before time.Time) (int64, error) {
	res, err := p.db.write.ExecContext(ctx, `DELETE FROM inflight_restore WHERE last_seen_utc < ?`, before.UnixMilli())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// pinnedSQL lists an instance's restores that are evidence (store.Retention):
// ?1 the instance, ?2 how many of a series' newest log restores stay. A
// regression cites the baseline_n restores before its change and the
// current_n from it on, the restores its figures were computed over
// (regression.last_seen is the analysis' clock, not a restore's time).
const pinnedSQL = `
SELECT id FROM (SELECT r.id, ROW_NUMBER() OVER (PARTITION BY g.id ORDER BY r.at_utc DESC) AS rn, g.baseline_n AS n
	FROM regression AS g JOIN restore AS r ON r.instance_id = g.instance_id AND r.database_name = g.database_name
	AND r.kind = g.kind AND r.at_utc < g.changed_at WHERE g.instance_id = ?1) WHERE rn <= MAX(n, 1)
UNION SELECT id FROM (SELECT r.id, ROW_NUMBER() OVER (PARTITION BY g.id ORDER BY r.at_utc) AS rn, g.current_n AS n
	FROM regression AS g JOIN restore AS r ON r.instance_id = g.instance_id AND r.database_name = g.database_name
	AND r.kind = g.kind AND r.at_utc >= g.changed_at WHERE g.instance_id = ?1) WHERE rn <= MAX(n, 1)
UNION SELECT change_restore_id FROM regression WHERE instance_id = ?1 AND change_restore_id IS NOT NULL
UNION SELECT id FROM (SELECT r.id, ROW_NUMBER() OVER (PARTITION BY w.id ORDER BY r.at_utc DESC) AS rn, w.usual_n AS n
	FROM watch AS w JOIN restore AS r ON r.instance_id = w.instance_id AND r.database_name = w.database_name
	AND r.kind = w.kind AND r.at_utc < w.opened_at WHERE w.instance_id = ?1) WHERE rn <= MAX(n, 1)
UNION SELECT r.id FROM watch AS w JOIN restore AS r ON r.instance_id = w.instance_id AND r.database_name = w.database_name
	AND r.kind = w.kind AND r.at_utc >= w.opened_at WHERE w.instance_id = ?1
UNION SELECT restore_id FROM watch WHERE instance_id = ?1
UNION SELECT j.value FROM series AS s, json_each(s.outliers) AS j WHERE s.instance_id = ?1
UNION SELECT j.value FROM series AS s, json_each(s.change_points) AS j WHERE s.instance_id = ?1
UNION SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY database_name ORDER BY at_utc DESC) AS rn
	FROM restore WHERE instance_id = ?1 AND kind = 'log') WHERE rn <= ?2`

// rollUpInstance rolls up one instance's unpinned log restores older than
// cut and deletes their facts, in one transaction that marks the instance
// for a whole derivation.
func (db *DB) rollUpInstance(ctx context.Context, id, cut int64, keep int, st *store.PruneStats) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	sctx := statementContext(ctx)
	pinned := map[int64]bool{}
	if err := eachInt(sctx, tx, pinnedSQL, func(v int64) { pinned[v] = true }, id, keep); err != nil {
		return fmt.Errorf("evidence: %w", err)
	}
	rows, err := tx.QueryContext(sctx, `SELECT r.id, r.database_name, r.at_utc, r.duration_s, r.logical_mibps, r.backup_bytes,
			COALESCE(r.instance_build, ''), COALESCE(r.source_server, ''), COALESCE(l.first_lsn, ''), COALESCE(l.last_lsn, '')
		FROM restore AS r LEFT JOIN log_restore AS l ON l.id = r.log_id
		WHERE r.instance_id = ? AND r.kind = 'log' AND r.at_utc < ?`, id, cut)
	if err != nil {
		return err
	}
	var old []store.RollupRestore
	gone := map[int64]bool{}
	for rows.Next() {
		var rid int64
		var x store.RollupRestore
		var dur, rate sql.NullFloat64
		var bytes sql.NullInt64
		if err := rows.Scan(&rid, &x.Database, &x.AtUTC, &dur, &rate, &bytes, &x.InstanceBuild, &x.SourceServer, &x.FirstLSN, &x.LastLSN); err != nil {
			rows.Close()
			return err
		}
		if pinned[rid] {
			st.Pinned++
			continue
		}
		x.InstanceID, x.Day = id, x.AtUTC/86_400_000
		x.DurationS, x.MiBps = nFloat(dur), nFloat(rate)
		if bytes.Valid {
			x.Bytes = &bytes.Int64
		}
		old = append(old, x)
		gone[rid] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(old) == 0 {
		return nil
	}
	for _, u := range store.RollUp(old) {
		if err := upsertRollup(sctx, tx, u); err != nil {
			return fmt.Errorf("roll up: %w", err)
		}
		st.Rollups++
	}
	st.RolledUp += int64(len(old))
	// The facts of the restores that go, except any a kept restore also
	// stands on.
	hist, logs := map[int64]bool{}, map[int64]bool{}
	keptHist, keptLogs := map[int64]bool{}, map[int64]bool{}
	facts, err := tx.QueryContext(sctx, `SELECT id, history_id, log_id, extra_log_id FROM restore WHERE instance_id = ?`, id)
	if err != nil {
		return err
	}
	for facts.Next() {
		var rid int64
		var h, l, e sql.NullInt64
		if err := facts.Scan(&rid, &h, &l, &e); err != nil {
			facts.Close()
			return err
		}
		hs, ls := hist, logs
		if !gone[rid] {
			hs, ls = keptHist, keptLogs
		}
		if h.Valid {
			hs[h.Int64] = true
		}
		for _, v := range []sql.NullInt64{l, e} {
			if v.Valid {
				ls[v.Int64] = true
			}
		}
	}
	facts.Close()
	if err := facts.Err(); err != nil {
		return err
	}
	n, err := deleteIDs(sctx, tx, "history_row", hist, keptHist)
	if err != nil {
		return err
	}
	st.History += n
	if n, err = deleteIDs(sctx, tx, "log_restore", logs, keptLogs); err != nil {
		return err
	}
	st.LogRestores += n
	if _, err := tx.ExecContext(sctx, `UPDATE instance SET dirty = dirty + 1, dirty_from = NULL WHERE id = ?`, id); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return nil
}

func eachInt(ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, query string, fn func(int64), args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var v sql.NullInt64
		if err := rows.Scan(&v); err != nil {
			return err
		}
		if v.Valid {
			fn(v.Int64)
		}
	}
	return rows.Err()
}

// deleteIDs deletes the rows of table (history_row or log_restore) whose
// ids are in ids and not in kept, 500 a statement.
func deleteIDs(ctx context.Context, tx *sql.Tx, table string, ids, kept map[int64]bool) (int64, error) {
	var batch []any
	var total int64
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE id IN (?`+strings.Repeat(", ?", len(batch)-1)+`)`, batch...)
		if err != nil {
			return fmt.Errorf("%s: %w", table, err)
		}
		n, _ := res.RowsAffected()
		total += n
		batch = batch[:0]
		return nil
	}
	for id := range ids {
		if kept[id] {
			continue
		}
		batch = append(batch, id)
		if len(batch) == 500 {
			if err := flush(); err != nil {
				return total, err
			}
		}
	}
	return total, flush()
}

// upsertRollup adds u to the day's roll-up row, merging with one an
// earlier prune wrote.
func upsertRollup(ctx context.Context, tx *sql.Tx, u store.Rollup) error {
	var e store.Rollup
	e.RollupKey = u.RollupKey
	var maxD, p50d, p95d, p50r, p95r sql.NullFloat64
	err := tx.QueryRowContext(ctx, `SELECT restores, measured, total_duration_s, max_duration_s, total_bytes, p50_duration_s,
			p95_duration_s, p50_mibps, p95_mibps, COALESCE(first_lsn, ''), COALESCE(last_lsn, ''), first_utc, last_utc
		FROM restore_rollup WHERE instance_id = ? AND database_name = ? AND day = ? AND instance_build = ? AND source_server = ?`,
		u.InstanceID, u.Database, u.Day, u.InstanceBuild, u.SourceServer).Scan(&e.Restores, &e.Measured, &e.TotalDurationS, &maxD,
		&e.TotalBytes, &p50d, &p95d, &p50r, &p95r, &e.FirstLSN, &e.LastLSN, &e.FirstUTC, &e.LastUTC)
	switch {
	case err == nil:
		e.MaxDurationS, e.P50DurationS, e.P95DurationS, e.P50MiBps, e.P95MiBps = nFloat(maxD), nFloat(p50d), nFloat(p95d), nFloat(p50r), nFloat(p95r)
		u = e.Merge(u)
	case err != sql.ErrNoRows:
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO restore_rollup (instance_id, database_name, day, instance_build, source_server,
			restores, measured, total_duration_s, max_duration_s, total_bytes, p50_duration_s, p95_duration_s, p50_mibps, p95_mibps,
			first_lsn, last_lsn, first_utc, last_utc, merged)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (instance_id, database_name, day, instance_build, source_server) DO UPDATE SET
			restores = excluded.restores, measured = excluded.measured, total_duration_s = excluded.total_duration_s,
			max_duration_s = excluded.max_duration_s, total_bytes = excluded.total_bytes, p50_duration_s = excluded.p50_duration_s,
			p95_duration_s = excluded.p95_duration_s, p50_mibps = excluded.p50_mibps, p95_mibps = excluded.p95_mibps,
			first_lsn = excluded.first_lsn, last_lsn = excluded.last_lsn, first_utc = excluded.first_utc,
			last_utc = excluded.last_utc, merged = excluded.merged`,
		u.InstanceID, u.Database, u.Day, u.InstanceBuild, u.SourceServer, u.Restores, u.Measured, u.TotalDurationS, u.MaxDurationS,
		u.TotalBytes, u.P50DurationS, u.P95DurationS, u.P50MiBps, u.P95MiBps, nullString(u.FirstLSN), nullString(u.LastLSN),
		u.FirstUTC, u.LastUTC, u.Merged)
	return err
}
