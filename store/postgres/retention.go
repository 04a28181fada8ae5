package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	st, err := store.ApplyRetention(ctx, pruner{db}, r, now)
	if err != nil {
		return st, err
	}
	if err := db.settleGone(ctx, r, now, &st); err != nil {
		return st, fmt.Errorf("store: prune: %w", err)
	}
	return st, nil
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
// cut and deletes their facts, inside tx, under the instance's derivation
// lock (no replica derives it meanwhile), marking the instance for a whole
// derivation.
//
// With months to drop (drop not nil), the facts in those months are not
// deleted: they are listed in prune_gone_history and prune_gone_log and go
// with their month's partition (dropMonths); and the instance is not marked
// for derivation but stamped (prune_stamp), so that its evidence is not
// moved by a derivation before the drop; the drop marks it. A restore whose
// fact is listed already was rolled up by an earlier pass and is not rolled
// up again.
func rollUpInstance(ctx context.Context, tx pgx.Tx, id, cut int64, keep int, st *store.PruneStats, drop []int32) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, deriveLockClass, lockKey(id)); err != nil {
		return err
	}
	evidence, pinned, err := evidenceOf(ctx, tx, id, keep)
	if err != nil {
		return err
	}
	if drop != nil {
		// What an earlier pass listed is held to the evidence of now.
		if err := unlistPinned(ctx, tx, id, pinned); err != nil {
			return err
		}
	}
	rows, err := tx.Query(ctx, `SELECT r.id, r.database_name, r.at_utc, r.duration_s, r.logical_mibps, r.backup_bytes,
			COALESCE(r.instance_build, ''), COALESCE(r.source_server, ''), COALESCE(l.first_lsn, ''), COALESCE(l.last_lsn, '')
		FROM restore AS r LEFT JOIN log_restore AS l ON l.id = r.log_id
		WHERE r.instance_id = $1 AND r.kind = 'log' AND r.at_utc < $2 AND NOT `+listedGone("r")+` AND `+factHeld("r"), id, cut)
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
	hist, logs, err := goneFacts(ctx, tx, id, gone)
	if err != nil {
		return err
	}
	if drop == nil {
		drop = []int32{} // never a NULL array
	} else {
		for _, q := range []struct {
			list, table string
			ids         []int64
		}{{"prune_gone_history", "history_row", hist}, {"prune_gone_log", "log_restore", logs}} {
			if _, err := tx.Exec(ctx, `INSERT INTO `+q.list+` (id, instance_id, part_month)
				SELECT id, $2, part_month FROM `+q.table+` WHERE id = ANY($1) AND part_month = ANY($3) ON CONFLICT DO NOTHING`,
				q.ids, id, drop); err != nil {
				return fmt.Errorf("%s: %w", q.table, err)
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO prune_stamp (instance_id, evidence) VALUES ($1, $2)
			ON CONFLICT (instance_id) DO UPDATE SET evidence = excluded.evidence`, id, evidence); err != nil {
			return fmt.Errorf("stamp: %w", err)
		}
	}
	tag, err := tx.Exec(ctx, `DELETE FROM history_row WHERE id = ANY($1) AND NOT part_month = ANY($2)`, hist, drop)
	if err != nil {
		return fmt.Errorf("history_row: %w", err)
	}
	st.History += tag.RowsAffected()
	if tag, err = tx.Exec(ctx, `DELETE FROM log_restore WHERE id = ANY($1) AND NOT part_month = ANY($2)`, logs, drop); err != nil {
		return fmt.Errorf("log_restore: %w", err)
	}
	st.LogRestores += tag.RowsAffected()
	if len(drop) > 0 {
		return nil // stamped: the month's drop marks it
	}
	_, err = tx.Exec(ctx, `UPDATE instance SET dirty = dirty + 1, dirty_from = NULL WHERE id = $1`, id)
	return err
}

// evidenceOf reads instance id's evidence revision, then its evidence
// (pinnedOf). The revision is read first, so that findings saved between
// the two reads count as a change since, and are looked at again.
func evidenceOf(ctx context.Context, tx pgx.Tx, id int64, keep int) (int64, map[int64]bool, error) {
	var evidence int64
	if err := tx.QueryRow(ctx, `SELECT evidence_rev FROM instance WHERE id = $1`, id).Scan(&evidence); err != nil {
		return 0, nil, err
	}
	pinned, err := pinnedOf(ctx, tx, id, keep)
	return evidence, pinned, err
}

// listedGone is the condition that restore alias's fact is listed as gone
// (rolled up, waiting for its month's drop).
func listedGone(alias string) string {
	return `((` + alias + `.natural_key > 0 AND EXISTS (SELECT 1 FROM prune_gone_history AS g WHERE g.id = ` + alias + `.natural_key))
		OR (` + alias + `.natural_key < 0 AND EXISTS (SELECT 1 FROM prune_gone_log AS g WHERE g.id = -` + alias + `.natural_key)))`
}

// factHeld is the condition that restore alias's fact is still held: a
// restore whose fact a prune deleted (rolled up, not yet derived again) is
// not rolled up twice.
func factHeld(alias string) string {
	return `((` + alias + `.natural_key > 0 AND EXISTS (SELECT 1 FROM history_row AS h
			WHERE h.id = ` + alias + `.natural_key AND h.part_month = ` + alias + `.part_month))
		OR (` + alias + `.natural_key < 0 AND EXISTS (SELECT 1 FROM log_restore AS h
			WHERE h.id = -` + alias + `.natural_key AND h.part_month = ` + alias + `.part_month)))`
}

// pinnedOf reads instance id's evidence (pinnedSQL).
func pinnedOf(ctx context.Context, tx pgx.Tx, id int64, keep int) (map[int64]bool, error) {
	rows, err := tx.Query(ctx, pinnedSQL, id, keep)
	if err != nil {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	pinned := map[int64]bool{}
	var p *int64
	if _, err := pgx.ForEachRow(rows, []any{&p}, func() error {
		if p != nil {
			pinned[*p] = true
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	return pinned, nil
}

// goneFacts lists the facts (history rows, log lines) of instance id's
// restores in gone, except any a restore not in gone also stands on. The
// sets are made here, not in SQL: "id = ANY(a) AND NOT id = ANY(b)" compares
// every row with every element of b, minutes at 10 M restores.
func goneFacts(ctx context.Context, tx pgx.Tx, id int64, gone map[int64]bool) (hist, logs []int64, err error) {
	rows, err := tx.Query(ctx, `SELECT id, history_id, log_id, extra_log_id FROM restore WHERE instance_id = $1`, id)
	if err != nil {
		return nil, nil, err
	}
	goneH, goneL, keptH, keptL := map[int64]bool{}, map[int64]bool{}, map[int64]bool{}, map[int64]bool{}
	var rid int64
	var h, l, e *int64
	if _, err := pgx.ForEachRow(rows, []any{&rid, &h, &l, &e}, func() error {
		hs, ls := goneH, goneL
		if !gone[rid] {
			hs, ls = keptH, keptL
		}
		if h != nil {
			hs[*h] = true
		}
		for _, v := range []*int64{l, e} {
			if v != nil {
				ls[*v] = true
			}
		}
		return nil
	}); err != nil {
		return nil, nil, err
	}
	hist, logs = []int64{}, []int64{} // never NULL arrays
	for f := range goneH {
		if !keptH[f] {
			hist = append(hist, f)
		}
	}
	for f := range goneL {
		if !keptL[f] {
			logs = append(logs, f)
		}
	}
	slices.Sort(hist)
	slices.Sort(logs)
	return hist, logs, nil
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
