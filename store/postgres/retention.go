package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
)

// Prune applies the retention r (store.ApplyRetention) with this
// warehouse's steps: each instance's roll-up in one transaction under the
// instance's derivation lock, so no replica derives it meanwhile.
//
// It first creates this month's and the next month's partitions; months
// wholly older than the retention are then dropped whole (RollUpMonths).
func (db *DB) Prune(ctx context.Context, r store.Retention, now time.Time) (store.PruneStats, error) {
	if err := db.EnsureMonths(ctx, now); err != nil {
		return store.PruneStats{}, err
	}
	if err := db.partitionDefault(ctx, r, now); err != nil {
		return store.PruneStats{}, err
	}
	return store.ApplyRetention(ctx, pruner{db}, r, now)
}

// partitionDefault gives their partitions the months whose rows wait in
// DEFAULT (imported before their month had one: a first import of old
// history) unless retention drops them now anyway; the rows move in once
// (rw_add_month). Rows of months retention dropped stay in DEFAULT.
func (db *DB) partitionDefault(ctx context.Context, r store.Retention, now time.Time) error {
	rows, err := db.pool.Query(ctx, `SELECT part_month FROM history_row_default WHERE part_month > 100000
		UNION SELECT part_month FROM log_restore_default WHERE part_month > 100000
		UNION SELECT part_month FROM restore_default WHERE part_month > 100000 ORDER BY 1`)
	if err != nil {
		return fmt.Errorf("store: prune: %w", err)
	}
	months, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return fmt.Errorf("store: prune: %w", err)
	}
	cut := store.RetentionCut(r, now)
	for _, m := range months {
		if r.Restores > 0 && monthStart(nextMonth(m))+monthMargin <= cut {
			continue
		}
		if _, err := db.pool.Exec(ctx, `SELECT rw_add_month($1)`, m); err != nil {
			return fmt.Errorf("store: partitions of %d: %w", m, err)
		}
	}
	return nil
}

// pruner is the warehouse's store.Pruner.
type pruner struct{ db *DB }

func (p pruner) Reconcile(ctx context.Context) error { return p.db.Reconcile(ctx) }

func (p pruner) OldLogInstances(ctx context.Context, cut int64) ([]int64, error) {
	return oldLogInstances(ctx, p.db.pool, cut)
}

func oldLogInstances(ctx context.Context, q querier, cut int64) ([]int64, error) {
	rows, err := q.Query(ctx, `SELECT id FROM instance AS i WHERE EXISTS (SELECT 1 FROM restore AS r
		WHERE r.instance_id = i.id AND r.at_utc < $1 AND r.kind = 'log') ORDER BY id`, cut)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

func (p pruner) RollUpInstance(ctx context.Context, id, cut int64, keep int, st *store.PruneStats) error {
	return pgx.BeginFunc(ctx, p.db.pool, func(tx pgx.Tx) error { return rollUpInstance(ctx, tx, id, cut, keep, st, nil) })
}

func (p pruner) DeleteRuns(ctx context.Context, before time.Time) (int64, error) {
	tag, err := p.db.pool.Exec(ctx, `DELETE FROM collector_run WHERE started < $1`, before.UnixMilli())
	return tag.RowsAffected(), err
}

func (p pruner) DeleteInflight(ctx context.Context, before time.Time) (int64, error) {
	tag, err := p.db.pool.Exec(ctx, `DELETE FROM inflight_restore WHERE last_seen_utc < $1`, before.UnixMilli())
	return tag.RowsAffected(), err
}

// pinnedSQL lists an instance's restores that are evidence (store.Retention):
// $1 the instance, $2 how many of a series' newest log restores stay. A
// regression cites the baseline_n restores before its change and the
// current_n from it on, the restores its figures were computed over.
const pinnedSQL = `
SELECT id FROM (SELECT r.id, ROW_NUMBER() OVER (PARTITION BY g.id ORDER BY r.at_utc DESC) AS rn, g.baseline_n AS n
	FROM regression AS g JOIN restore AS r ON r.instance_id = g.instance_id AND r.database_name = g.database_name
	AND r.kind = g.kind AND r.at_utc < g.changed_at WHERE g.instance_id = $1) AS b WHERE rn <= GREATEST(n, 1)
UNION SELECT id FROM (SELECT r.id, ROW_NUMBER() OVER (PARTITION BY g.id ORDER BY r.at_utc) AS rn, g.current_n AS n
	FROM regression AS g JOIN restore AS r ON r.instance_id = g.instance_id AND r.database_name = g.database_name
	AND r.kind = g.kind AND r.at_utc >= g.changed_at WHERE g.instance_id = $1) AS c WHERE rn <= GREATEST(n, 1)
UNION SELECT change_restore_id FROM regression WHERE instance_id = $1 AND change_restore_id IS NOT NULL
UNION SELECT id FROM (SELECT r.id, ROW_NUMBER() OVER (PARTITION BY w.id ORDER BY r.at_utc DESC) AS rn, w.usual_n AS n
	FROM watch AS w JOIN restore AS r ON r.instance_id = w.instance_id AND r.database_name = w.database_name
	AND r.kind = w.kind AND r.at_utc < w.opened_at WHERE w.instance_id = $1) AS u WHERE rn <= GREATEST(n, 1)
UNION SELECT r.id FROM watch AS w JOIN restore AS r ON r.instance_id = w.instance_id AND r.database_name = w.database_name
	AND r.kind = w.kind AND r.at_utc >= w.opened_at WHERE w.instance_id = $1
UNION SELECT restore_id FROM watch WHERE instance_id = $1
UNION SELECT j::bigint FROM series AS s, jsonb_array_elements_text(s.outliers::jsonb) AS j WHERE s.instance_id = $1
UNION SELECT j::bigint FROM series AS s, jsonb_array_elements_text(s.change_points::jsonb) AS j WHERE s.instance_id = $1
UNION SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY database_name ORDER BY at_utc DESC) AS rn
	FROM restore WHERE instance_id = $1 AND kind = 'log') AS k WHERE rn <= $2`

// rollUpInstance rolls up one instance's unpinned log restores older than
// cut and deletes their facts, inside tx, marking the instance for a whole
// derivation.
//
// The facts in the months of drop are not deleted: they are listed in the
// transaction's temporary tables prune_gone_history and prune_gone_log
// (RollUpMonths), and go with their month's partition (dropMonth).
func rollUpInstance(ctx context.Context, tx pgx.Tx, id, cut int64, keep int, st *store.PruneStats, drop []int32) error {
	// No replica derives the instance meanwhile. With months to drop, tx
	// already holds the tables' ACCESS EXCLUSIVE locks, which keep every
	// derivation out; waiting for the instance's lock as well would wait
	// for a derivation that holds it and waits for the tables.
	if drop == nil {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, deriveLockClass, lockKey(id)); err != nil {
			return err
		}
	}
	rows, err := tx.Query(ctx, pinnedSQL, id, keep)
	if err != nil {
		return fmt.Errorf("evidence: %w", err)
	}
	pinned := map[int64]bool{}
	var p *int64
	if _, err := pgx.ForEachRow(rows, []any{&p}, func() error {
		if p != nil {
			pinned[*p] = true
		}
		return nil
	}); err != nil {
		return fmt.Errorf("evidence: %w", err)
	}
	rows, err = tx.Query(ctx, `SELECT r.id, r.database_name, r.at_utc, r.duration_s, r.logical_mibps, r.backup_bytes,
			COALESCE(r.instance_build, ''), COALESCE(r.source_server, ''), COALESCE(l.first_lsn, ''), COALESCE(l.last_lsn, '')
		FROM restore AS r LEFT JOIN log_restore AS l ON l.id = r.log_id
		WHERE r.instance_id = $1 AND r.kind = 'log' AND r.at_utc < $2`, id, cut)
	if err != nil {
		return err
	}
	var old []store.RollupRestore
	gone := map[int64]bool{}
	var rid int64
	var x store.RollupRestore
	if _, err := pgx.ForEachRow(rows, []any{&rid, &x.Database, &x.AtUTC, &x.DurationS, &x.MiBps, &x.Bytes, &x.InstanceBuild,
		&x.SourceServer, &x.FirstLSN, &x.LastLSN}, func() error {
		if pinned[rid] {
			st.Pinned++
			return nil
		}
		x.InstanceID, x.Day = id, x.AtUTC/86_400_000
		old = append(old, x)
		x.DurationS, x.MiBps, x.Bytes = nil, nil, nil
		gone[rid] = true
		return nil
	}); err != nil {
		return err
	}
	if len(old) == 0 {
		return nil
	}
	for _, u := range store.RollUp(old) {
		if err := upsertRollup(ctx, tx, u); err != nil {
			return fmt.Errorf("roll up: %w", err)
		}
		st.Rollups++
	}
	st.RolledUp += int64(len(old))
	// The facts of the restores that go, except any a kept restore also
	// stands on.
	hist, logs, keptHist, keptLogs := []int64{}, []int64{}, []int64{}, []int64{} // never NULL arrays
	rows, err = tx.Query(ctx, `SELECT id, history_id, log_id, extra_log_id FROM restore WHERE instance_id = $1`, id)
	if err != nil {
		return err
	}
	var h, l, e *int64
	if _, err := pgx.ForEachRow(rows, []any{&rid, &h, &l, &e}, func() error {
		hs, ls := &hist, &logs
		if !gone[rid] {
			hs, ls = &keptHist, &keptLogs
		}
		if h != nil {
			*hs = append(*hs, *h)
		}
		for _, v := range []*int64{l, e} {
			if v != nil {
				*ls = append(*ls, *v)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if drop == nil {
		drop = []int32{} // never a NULL array
	} else {
		if _, err := tx.Exec(ctx, `INSERT INTO prune_gone_history SELECT id FROM history_row
			WHERE id = ANY($1) AND NOT id = ANY($2) AND part_month = ANY($3) ON CONFLICT DO NOTHING`, hist, keptHist, drop); err != nil {
			return fmt.Errorf("history_row: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO prune_gone_log SELECT id FROM log_restore
			WHERE id = ANY($1) AND NOT id = ANY($2) AND part_month = ANY($3) ON CONFLICT DO NOTHING`, logs, keptLogs, drop); err != nil {
			return fmt.Errorf("log_restore: %w", err)
		}
	}
	tag, err := tx.Exec(ctx, `DELETE FROM history_row WHERE id = ANY($1) AND NOT id = ANY($2) AND NOT part_month = ANY($3)`,
		hist, keptHist, drop)
	if err != nil {
		return fmt.Errorf("history_row: %w", err)
	}
	st.History += tag.RowsAffected()
	if tag, err = tx.Exec(ctx, `DELETE FROM log_restore WHERE id = ANY($1) AND NOT id = ANY($2) AND NOT part_month = ANY($3)`,
		logs, keptLogs, drop); err != nil {
		return fmt.Errorf("log_restore: %w", err)
	}
	st.LogRestores += tag.RowsAffected()
	_, err = tx.Exec(ctx, `UPDATE instance SET dirty = dirty + 1, dirty_from = NULL WHERE id = $1`, id)
	return err
}

// upsertRollup adds u to the day's roll-up row, merging with one an
// earlier prune wrote.
func upsertRollup(ctx context.Context, tx pgx.Tx, u store.Rollup) error {
	var e store.Rollup
	e.RollupKey = u.RollupKey
	err := tx.QueryRow(ctx, `SELECT restores, measured, total_duration_s, max_duration_s, total_bytes, p50_duration_s,
			p95_duration_s, p50_mibps, p95_mibps, COALESCE(first_lsn, ''), COALESCE(last_lsn, ''), first_utc, last_utc
		FROM restore_rollup WHERE instance_id = $1 AND database_name = $2 AND day = $3 AND instance_build = $4 AND source_server = $5`,
		u.InstanceID, u.Database, u.Day, u.InstanceBuild, u.SourceServer).Scan(&e.Restores, &e.Measured, &e.TotalDurationS,
		&e.MaxDurationS, &e.TotalBytes, &e.P50DurationS, &e.P95DurationS, &e.P50MiBps, &e.P95MiBps, &e.FirstLSN, &e.LastLSN,
		&e.FirstUTC, &e.LastUTC)
	switch {
	case err == nil:
		u = e.Merge(u)
	case !errors.Is(err, pgx.ErrNoRows):
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO restore_rollup (instance_id, database_name, day, instance_build, source_server,
			restores, measured, total_duration_s, max_duration_s, total_bytes, p50_duration_s, p95_duration_s, p50_mibps, p95_mibps,
			first_lsn, last_lsn, first_utc, last_utc, merged)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
		ON CONFLICT (instance_id, database_name, day, instance_build, source_server) DO UPDATE SET
			restores = excluded.restores, measured = excluded.measured, total_duration_s = excluded.total_duration_s,
			max_duration_s = excluded.max_duration_s, total_bytes = excluded.total_bytes, p50_duration_s = excluded.p50_duration_s,
			p95_duration_s = excluded.p95_duration_s, p50_mibps = excluded.p50_mibps, p95_mibps = excluded.p95_mibps,
			first_lsn = excluded.first_lsn, last_lsn = excluded.last_lsn, first_utc = excluded.first_utc,
			last_utc = excluded.last_utc, merged = excluded.merged`,
		u.InstanceID, u.Database, u.Day, u.InstanceBuild, u.SourceServer, u.Restores, u.Measured, u.TotalDurationS, u.MaxDurationS,
		u.TotalBytes, u.P50DurationS, u.P95DurationS, u.P50MiBps, u.P95MiBps, nullText(u.FirstLSN), nullText(u.LastLSN),
		u.FirstUTC, u.LastUTC, flag(u.Merged))
	return err
}
