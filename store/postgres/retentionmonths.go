package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/restorewatch/restorewatch/store"
)

// Retention by month (issue 41 item 4): once a month's partitions lie wholly
// before the retention's cut, the prune rolls up every instance as
// rollUpInstance does (the same evidence, the same roll-ups as SQLite's),
// but instead of deleting the month's rolled-up facts row by row it copies
// the rows that stay (the evidence and the facts it stands on, full and
// differential restores, facts no restore cites, anything younger than the
// cut) into new tables and puts those in the place of the month's three
// partitions, which are dropped: no DELETE, no dead tuples for vacuum. The
// month is recorded in pruned_month; its partitions then hold only what
// stayed, and later prunes take its rows out one by one as their evidence
// goes.
//
// It runs in phases, so that pages wait for a catalogue change, not for
// the roll-up of a whole estate (a month of a 10 M-restore warehouse held
// them for over 20 minutes when the roll-up ran under the lock) nor for
// the copy of what stays (12 s at 3 M when it was made under the lock):
//
//  1. Each instance is rolled up in its own short transaction under its
//     derivation lock, taking no table lock: the roll-ups are written, and
//     the facts rolled up in the months about to drop are listed in
//     prune_gone_history and prune_gone_log, still raw. A crash, or a
//     drop that cannot have its lock, leaves them listed: rolled up once,
//     never again (rollUpInstance skips a listed restore), dropped by a
//     later prune.
//  2. One transaction takes SHARE locks on the three tables, the findings
//     and the lists (writers wait, readers read on; the lock order is
//     derivation's: history_row, log_restore, restore), computes again the
//     evidence of every instance whose derivation or findings moved since
//     its roll-up (a restore that became evidence meanwhile leaves the list
//     and stays raw), and copies what is not listed into the new tables
//     (keepMonth). Then it takes ACCESS EXCLUSIVE locks on the three
//     tables and swaps the new tables in (swapMonth). No derivation or
//     import can have read facts it drops, and pages wait for the swap
//     instead of reading half of it.
//
// Listed facts whose month is not dropped (retention lengthened or turned
// off after a crash, another replica's drop first) are deleted row by row
// afterwards (settleGone).

// monthMargin keeps a month's partitions until a day past its end has also
// passed the cut: a partition's month is of local times, up to 14 hours
// from UTC. Only efficiency depends on it: rows younger than the cut are
// kept whichever month they sit in.
const monthMargin = 24 * 3600 * 1000

// RollUpMonths is store.MonthPruner's step: when some months' partitions lie
// wholly before cut, it rolls up every instance with old log restores and
// drops those months, in the two phases above, and says so (handled);
// otherwise it does nothing and the instances are rolled up one by one.
// When the drop cannot have its locks within lockWait (a long query reads
// the tables), the months stay, their facts listed, for a later prune.
func (p pruner) RollUpMonths(ctx context.Context, cut int64, keep int, st *store.PruneStats) (handled bool, err error) {
	// Most prunes have no month to drop.
	drop, err := droppable(ctx, p.db.pool, cut)
	if err != nil || len(drop) == 0 {
		return false, err
	}
	ids, err := oldLogInstances(ctx, p.db.pool, cut)
	if err != nil {
		return false, err
	}
	for _, id := range ids {
		if err := pgx.BeginFunc(ctx, p.db.pool, func(tx pgx.Tx) error {
			return rollUpInstance(ctx, tx, id, cut, keep, st, drop)
		}); err != nil {
			return false, fmt.Errorf("instance %d: %w", id, err)
		}
	}
	if p.db.pruneHook != nil {
		if err := p.db.pruneHook(ctx); err != nil {
			return false, err
		}
	}
	// The instances whose evidence may have moved while the others were
	// rolled up are looked at again outside the lock, so that few are left
	// for it.
	for range 3 {
		n, err := p.recheckMoved(ctx, keep)
		if err != nil {
			return false, err
		}
		if n == 0 {
			break
		}
	}
	// The lists are complete: let the planner know their sizes.
	if _, err := p.db.pool.Exec(ctx, `ANALYZE prune_gone_history; ANALYZE prune_gone_log`); err != nil {
		return false, err
	}
	start := *st
	for attempt := 1; ; attempt++ {
		err = p.dropMonths(ctx, cut, keep, st)
		var pe *pgconn.PgError
		switch {
		case err == nil:
			return true, nil
		case !errors.As(err, &pe):
			return false, err
		case pe.Code == "55P03":
			// A lock not had within lockWait: the months drop at a
			// later prune; their facts stay listed, and that prune
			// holds them to the evidence of its time. The instances
			// rolled up are derived now (their facts deleted row by
			// row go).
			*st = start
			return true, releaseStamps(ctx, p.db.pool, true)
		case pe.Code == "40P01" && attempt < 3:
			// A deadlock with an import or an analysis that took the
			// tables in another order: it went on, the drop is tried
			// again.
			*st = start
		default:
			return false, err
		}
	}
}

// lockWait bounds how long the month's drop waits for a lock: while its
// ACCESS EXCLUSIVE request waits, every page's read queues behind it.
const lockWait = "5s"

// movedSQL lists the instances whose evidence may have moved since their
// facts were listed (migration 0039).
const movedSQL = `SELECT s.instance_id FROM prune_stamp AS s JOIN instance AS i ON i.id = s.instance_id
	WHERE i.evidence_rev <> s.evidence ORDER BY 1`

// recheckMoved computes again the evidence of each instance whose
// derivation or findings moved since its facts were listed, each in its
// own transaction under its derivation lock; it says how many it looked at.
func (p pruner) recheckMoved(ctx context.Context, keep int) (int, error) {
	rows, err := p.db.pool.Query(ctx, movedSQL)
	if err != nil {
		return 0, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		if err := pgx.BeginFunc(ctx, p.db.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, deriveLockClass, lockKey(id)); err != nil {
				return err
			}
			return recheck(ctx, tx, id, keep)
		}); err != nil {
			return 0, fmt.Errorf("instance %d: %w", id, err)
		}
	}
	return len(ids), nil
}

// recheck computes instance id's evidence again, takes out of the gone
// lists what is evidence now (unlistPinned) and stamps the instance.
func recheck(ctx context.Context, tx pgx.Tx, id int64, keep int) error {
	evidence, pinned, err := evidenceOf(ctx, tx, id, keep)
	if err != nil {
		return err
	}
	if err := unlistPinned(ctx, tx, id, pinned); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `UPDATE prune_stamp SET evidence = $2 WHERE instance_id = $1`, id, evidence)
	return err
}

// unlistPinned takes out of the gone lists the facts of instance id's
// listed restores that are in pinned. Such a restore stays raw; its day's
// roll-up, written when it was not evidence, counts it as well.
func unlistPinned(ctx context.Context, tx pgx.Tx, id int64, pinned map[int64]bool) error {
	rows, err := tx.Query(ctx, `SELECT r.id, r.history_id, r.log_id, r.extra_log_id FROM restore AS r
		WHERE r.instance_id = $1 AND `+listedGone("r"), id)
	if err != nil {
		return err
	}
	hist, logs := []int64{}, []int64{}
	var rid int64
	var h, l, e *int64
	if _, err := pgx.ForEachRow(rows, []any{&rid, &h, &l, &e}, func() error {
		if !pinned[rid] {
			return nil
		}
		if h != nil {
			hist = append(hist, *h)
		}
		for _, v := range []*int64{l, e} {
			if v != nil {
				logs = append(logs, *v)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if len(hist)+len(logs) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `DELETE FROM prune_gone_history WHERE id = ANY($1)`, hist); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `DELETE FROM prune_gone_log WHERE id = ANY($1)`, logs)
	return err
}

// dropMonths is the second phase: under SHARE locks the rows of the months
// wholly before cut that are not listed are copied into new tables
// (keepMonth), then under ACCESS EXCLUSIVE locks those take the months'
// partitions' place (swapMonth); st.Locked counts the latter's time.
func (p pruner) dropMonths(ctx context.Context, cut int64, keep int, st *store.PruneStats) error {
	var locked time.Time
	defer func() {
		if !locked.IsZero() {
			st.Locked += time.Since(locked)
		}
	}()
	return pgx.BeginFunc(ctx, p.db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT set_config('lock_timeout', $1, true)`, lockWait); err != nil {
			return err
		}
		// Writers wait from here (derivation, imports, analysis saving
		// findings, a roll-up listing facts), readers read on: the rows
		// that stay are copied while pages are served.
		if _, err := tx.Exec(ctx, `LOCK TABLE history_row, log_restore, restore, series, regression, watch,
			prune_gone_history, prune_gone_log IN SHARE MODE`); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		// Again under the lock: another replica's prune may have dropped
		// them meanwhile.
		drop, err := droppable(ctx, tx, cut)
		if err != nil || len(drop) == 0 {
			return err
		}
		rows, err := tx.Query(ctx, movedSQL)
		if err != nil {
			return err
		}
		moved, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		for _, id := range moved {
			if err := recheck(ctx, tx, id, keep); err != nil {
				return fmt.Errorf("instance %d: %w", id, err)
			}
		}
		var deleted []int64
		for _, m := range drop {
			gone, err := keepMonth(ctx, tx, m, st)
			if err != nil {
				return fmt.Errorf("month %d: %w", m, err)
			}
			deleted = append(deleted, gone...)
		}
		// Readers wait from here, for the catalogue's changes alone.
		if _, err := tx.Exec(ctx, `LOCK TABLE history_row, log_restore, restore IN ACCESS EXCLUSIVE MODE`); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		locked = time.Now()
		for _, m := range drop {
			if err := swapMonth(ctx, tx, m); err != nil {
				return fmt.Errorf("month %d: %w", m, err)
			}
			st.Months++
		}
		if _, err := tx.Exec(ctx, `INSERT INTO pruned_month (part_month, pruned_utc)
			SELECT unnest($1::integer[]), $2`, drop, time.Now().UnixMilli()); err != nil {
			return err
		}
		// The lists of the months dropped are done with; the instances
		// rolled up are derived again.
		if err := unlistMonths(ctx, tx, drop); err != nil {
			return err
		}
		if err := releaseStamps(ctx, tx, false); err != nil {
			return err
		}
		// The restores dropped with their month leave the kept orders as
		// derivation's deletions do.
		return recordRestoreChanges(ctx, tx, nil, deleted)
	})
}

// unlistMonths deletes the lists' entries of the months dropped: a
// TRUNCATE when they hold no other month's (the usual case: a DELETE of
// millions of entries held the tables' locks for seconds more), else a
// DELETE. Nothing lists facts meanwhile: a roll-up reads the restore
// tables first, and the drop holds them.
func unlistMonths(ctx context.Context, tx pgx.Tx, drop []int32) error {
	var other bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM prune_gone_history WHERE NOT part_month = ANY($1))
		OR EXISTS (SELECT 1 FROM prune_gone_log WHERE NOT part_month = ANY($1))`, drop).Scan(&other); err != nil {
		return err
	}
	if !other {
		_, err := tx.Exec(ctx, `TRUNCATE prune_gone_history, prune_gone_log`)
		return err
	}
	for _, list := range []string{"prune_gone_history", "prune_gone_log"} {
		if _, err := tx.Exec(ctx, `DELETE FROM `+list+` WHERE part_month = ANY($1)`, drop); err != nil {
			return err
		}
	}
	return nil
}

// releaseStamps hands to derivation the instances stamped by a roll-up
// (their stamps deleted, the instances marked for a whole derivation): all
// of them, or those with no fact listed any more.
func releaseStamps(ctx context.Context, q execer, all bool) error {
	_, err := q.Exec(ctx, `WITH s AS (DELETE FROM prune_stamp AS s WHERE $1 OR (
			NOT EXISTS (SELECT 1 FROM prune_gone_history AS g WHERE g.instance_id = s.instance_id)
			AND NOT EXISTS (SELECT 1 FROM prune_gone_log AS g WHERE g.instance_id = s.instance_id)) RETURNING instance_id)
		UPDATE instance SET dirty = dirty + 1, dirty_from = NULL WHERE id IN (SELECT instance_id FROM s)`, all)
	return err
}

// execer is a pool or a transaction.
type execer interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}

// droppable lists the months whose partitions lie wholly before cut and
// were not pruned yet (pruned_month: their partitions hold the rows that
// stayed, which leave one by one).
func droppable(ctx context.Context, q querier, cut int64) ([]int32, error) {
	rows, err := q.Query(ctx, `SELECT m FROM (`+monthsSQL+`) AS x
		WHERE NOT EXISTS (SELECT 1 FROM pruned_month AS p WHERE p.part_month = x.m) ORDER BY m`)
	if err != nil {
		return nil, fmt.Errorf("months: %w", err)
	}
	months, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, fmt.Errorf("months: %w", err)
	}
	var drop []int32
	for _, m := range months {
		if monthStart(nextMonth(m))+monthMargin <= cut {
			drop = append(drop, m)
		}
	}
	return drop, nil
}

// querier is a pool or a transaction.
type querier interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}

// pruner drops months.
var _ store.MonthPruner = pruner{}

// keepMonth copies the rows of month m's partitions that stay into tables
// of their own (history_row_k<m> and so on), with the partitions' indexes,
// foreign keys and a check on the month, so that they can take the
// partitions' place with no scan (swapMonth); it returns the ids of the
// restores that go. A fact goes when the roll-up listed it as gone; a
// restore when the fact its natural key names goes (as derivation would
// then delete it). It runs under SHARE locks: pages read on.
func keepMonth(ctx context.Context, tx pgx.Tx, m int32, st *store.PruneStats) ([]int64, error) {
	part, kept := monthTables(m)
	// Joins, not listedGone's EXISTS in an OR, which the planner runs as
	// a probe of the list per restore (millions of them): a history row's
	// id is a natural key > 0, a log line's its negation.
	rows, err := tx.Query(ctx, `SELECT r.id FROM `+part("restore")+` AS r JOIN prune_gone_history AS g ON g.id = r.natural_key
		UNION ALL SELECT r.id FROM `+part("restore")+` AS r JOIN prune_gone_log AS g ON g.id = -r.natural_key ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	gone, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, err
	}
	for _, q := range []struct {
		table, keep string
		n           *int64
	}{
		{"history_row", `NOT EXISTS (SELECT 1 FROM prune_gone_history AS g WHERE g.id = p.id)`, &st.History},
		{"log_restore", `NOT EXISTS (SELECT 1 FROM prune_gone_log AS g WHERE g.id = p.id)`, &st.LogRestores},
		{"restore", `NOT EXISTS (SELECT 1 FROM prune_gone_history AS g WHERE g.id = p.natural_key)
			AND NOT EXISTS (SELECT 1 FROM prune_gone_log AS g WHERE g.id = -p.natural_key)`, nil},
	} {
		from, to := part(q.table), kept(q.table)
		var fks []string
		rows, err := tx.Query(ctx, `SELECT pg_get_constraintdef(oid) FROM pg_constraint
			WHERE conrelid = $1::regclass AND contype = 'f' ORDER BY conname`, from)
		if err != nil {
			return nil, err
		}
		if fks, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return nil, err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE `+to+` (LIKE `+from+` INCLUDING DEFAULTS INCLUDING INDEXES)`); err != nil {
			return nil, fmt.Errorf("keep %s: %w", q.table, err)
		}
		// The partition's bound, as a check: ATTACH then scans nothing.
		if _, err := tx.Exec(ctx, fmt.Sprintf(`ALTER TABLE %s ADD CHECK (part_month >= %d AND part_month < %d)`,
			to, m, m+1)); err != nil {
			return nil, fmt.Errorf("keep %s: %w", q.table, err)
		}
		var held int64
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+from).Scan(&held); err != nil {
			return nil, err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO `+to+` SELECT * FROM `+from+` AS p WHERE `+q.keep)
		if err != nil {
			return nil, fmt.Errorf("keep %s: %w", q.table, err)
		}
		// The partition's foreign keys, so that ATTACH finds them and
		// validates none under its lock.
		for _, fk := range fks {
			if _, err := tx.Exec(ctx, `ALTER TABLE `+to+` ADD `+fk); err != nil {
				return nil, fmt.Errorf("keep %s: %w", q.table, err)
			}
		}
		if q.n != nil {
			*q.n += held - tag.RowsAffected()
		}
	}
	return gone, nil
}

// swapMonth puts the tables keepMonth filled in the place of month m's
// partitions: detached, dropped, renamed, attached. Under the tables'
// ACCESS EXCLUSIVE lock: catalogue changes, and ATTACH's check that the
// DEFAULT partition holds no row of m (a scan of DEFAULT).
func swapMonth(ctx context.Context, tx pgx.Tx, m int32) error {
	part, kept := monthTables(m)
	for _, t := range []string{"history_row", "log_restore", "restore"} {
		for _, q := range []string{
			`ALTER TABLE ` + t + ` DETACH PARTITION ` + part(t),
			`DROP TABLE ` + part(t),
			`ALTER TABLE ` + kept(t) + ` RENAME TO ` + part(t),
			fmt.Sprintf(`ALTER TABLE %s ATTACH PARTITION %s FOR VALUES FROM (%d) TO (%d)`, t, part(t), m, m+1),
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", t, err)
			}
		}
	}
	return nil
}

// monthTables names month m's partition of a table, and the table that
// takes its place after a prune.
func monthTables(m int32) (part, kept func(string) string) {
	name := func(infix string) func(string) string {
		return func(t string) string { return pgx.Identifier{t + infix + strconv.Itoa(int(m))}.Sanitize() }
	}
	return name("_p"), name("_k")
}

// settleGone deletes row by row, instance by instance, the listed facts
// whose month this prune did not drop and will not drop: their month has no
// partition (another replica dropped it first), or retention no longer
// reaches it (lengthened or turned off since a prune stopped between its
// phases). They were rolled up when listed; an instance whose evidence may
// have moved since is looked at again first (recheck).
func (db *DB) settleGone(ctx context.Context, r store.Retention, now time.Time, st *store.PruneStats) error {
	drop := []int32{}
	if r.Restores > 0 {
		var err error
		if drop, err = droppable(ctx, db.pool, store.RetentionCut(r, now)); err != nil {
			return err
		}
	}
	keep := r.KeepLast
	if keep <= 0 {
		keep = store.DefaultKeepLast
	}
	rows, err := db.pool.Query(ctx, `SELECT instance_id FROM prune_gone_history WHERE NOT part_month = ANY($1)
		UNION SELECT instance_id FROM prune_gone_log WHERE NOT part_month = ANY($1) ORDER BY 1`, drop)
	if err != nil {
		return err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, deriveLockClass, lockKey(id)); err != nil {
				return err
			}
			if err := recheck(ctx, tx, id, keep); err != nil {
				return err
			}
			for _, q := range []struct {
				list, table string
				n           *int64
			}{{"prune_gone_history", "history_row", &st.History}, {"prune_gone_log", "log_restore", &st.LogRestores}} {
				tag, err := tx.Exec(ctx, `WITH g AS (DELETE FROM `+q.list+` WHERE instance_id = $1 AND NOT part_month = ANY($2)
					RETURNING id) DELETE FROM `+q.table+` WHERE instance_id = $1 AND id IN (SELECT id FROM g)`, id, drop)
				if err != nil {
					return fmt.Errorf("%s: %w", q.table, err)
				}
				*q.n += tag.RowsAffected()
			}
			_, err := tx.Exec(ctx, `UPDATE instance SET dirty = dirty + 1, dirty_from = NULL WHERE id = $1`, id)
			return err
		}); err != nil {
			return fmt.Errorf("instance %d: %w", id, err)
		}
	}
	// And the instances a stopped prune stamped without listing any fact
	// (it deleted their old facts row by row).
	var released int64
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM prune_stamp`).Scan(&released); err != nil {
		return err
	}
	if err := releaseStamps(ctx, db.pool, false); err != nil {
		return err
	}
	if len(ids) > 0 || released > 0 {
		return db.Reconcile(ctx)
	}
	return nil
}
