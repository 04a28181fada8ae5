package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/restorewatch/restorewatch/store"
)

// Retention by month (issue 41 item 4): once a month's partitions lie wholly
// before the retention's cut, the prune rolls up every instance as
// rollUpInstance does (the same evidence, the same roll-ups as SQLite's),
// but instead of deleting the month's rolled-up facts row by row it
// detaches the month's three partitions, puts back into the parent tables
// every row it must keep, and drops them: no DELETE, no dead tuples for
// vacuum. The rows kept (the evidence and the facts it stands on, full and
// differential restores, facts no restore cites, anything younger than the
// cut) keep their ids and part_month and land in DEFAULT, since their month
// has no partition any more.
//
// All of it is one transaction that first takes ACCESS EXCLUSIVE locks on
// the three tables (DETACH takes them on the way anyway): taken first, no
// derivation or import can have read facts the transaction then drops, and
// pages wait for the month's prune instead of reading half of it. The
// lock order is derivation's (history_row, log_restore, restore).

// monthMargin keeps a month's partitions until a day past its end has also
// passed the cut: a partition's month is of local times, up to 14 hours
// from UTC. Only efficiency depends on it: rows younger than the cut are
// kept whichever month they sit in.
const monthMargin = 24 * 3600 * 1000

// RollUpMonths is store.MonthPruner's step: when some months' partitions lie
// wholly before cut, it rolls up every instance with old log restores and
// drops those months, in one transaction, and says so (handled); otherwise
// it does nothing and the instances are rolled up one by one.
func (p pruner) RollUpMonths(ctx context.Context, cut int64, keep int, st *store.PruneStats) (handled bool, err error) {
	// Most prunes have no month to drop: they take no lock.
	if drop, err := droppable(ctx, p.db.pool, cut); err != nil || len(drop) == 0 {
		return false, err
	}
	start := *st
	for attempt := 1; ; attempt++ {
		handled, err = p.rollUpMonths(ctx, cut, keep, st)
		var pe *pgconn.PgError
		switch {
		case err == nil:
			return handled, nil
		case !errors.As(err, &pe):
			return false, err
		case pe.Code == "55P03":
			// A lock not had within lockWait (a long query reads the
			// tables): the instances are rolled up one by one instead,
			// and the months drop at a later prune.
			*st = start
			return false, nil
		case pe.Code == "40P01" && attempt < 3:
			// A deadlock with an import that took the tables in another
			// order: it went on, the months are tried again.
			*st = start
		default:
			return false, err
		}
	}
}

// lockWait bounds how long the month's prune waits for a lock: while its
// ACCESS EXCLUSIVE request waits, every page's read queues behind it.
const lockWait = "5s"

func (p pruner) rollUpMonths(ctx context.Context, cut int64, keep int, st *store.PruneStats) (handled bool, err error) {
	err = pgx.BeginFunc(ctx, p.db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT set_config('lock_timeout', $1, true)`, lockWait); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `LOCK TABLE history_row, log_restore, restore IN ACCESS EXCLUSIVE MODE`); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		// Again under the lock: another replica's prune may have dropped
		// them meanwhile.
		drop, err := droppable(ctx, tx, cut)
		if err != nil || len(drop) == 0 {
			return err
		}
		handled = true
		if _, err := tx.Exec(ctx, `CREATE TEMPORARY TABLE prune_gone_history (id BIGINT PRIMARY KEY) ON COMMIT DROP;
			CREATE TEMPORARY TABLE prune_gone_log (id BIGINT PRIMARY KEY) ON COMMIT DROP`); err != nil {
			return err
		}
		ids, err := oldLogInstances(ctx, tx, cut)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := rollUpInstance(ctx, tx, id, cut, keep, st, drop); err != nil {
				return fmt.Errorf("instance %d: %w", id, err)
			}
		}
		// The gone lists are complete: let the planner know their sizes.
		if _, err := tx.Exec(ctx, `ANALYZE prune_gone_history; ANALYZE prune_gone_log`); err != nil {
			return err
		}
		var deleted []int64
		for _, m := range drop {
			gone, err := dropMonth(ctx, tx, m, st)
			if err != nil {
				return fmt.Errorf("month %d: %w", m, err)
			}
			deleted = append(deleted, gone...)
		}
		// The restores dropped with their month leave the kept orders as
		// derivation's deletions do.
		return recordRestoreChanges(ctx, tx, nil, deleted)
	})
	return handled, err
}

// droppable lists the months whose partitions lie wholly before cut.
func droppable(ctx context.Context, q querier, cut int64) ([]int32, error) {
	rows, err := q.Query(ctx, monthsSQL)
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

// dropMonth detaches month m's partitions, puts back what stays and drops
// them; it returns the ids of the restores dropped. A fact goes when the
// roll-up listed it as gone; a restore when the fact its natural key names
// goes (as derivation would then delete it).
func dropMonth(ctx context.Context, tx pgx.Tx, m int32, st *store.PruneStats) ([]int64, error) {
	part := func(t string) string { return pgx.Identifier{t + "_p" + strconv.Itoa(int(m))}.Sanitize() }
	for _, t := range []string{"history_row", "log_restore", "restore"} {
		if _, err := tx.Exec(ctx, `ALTER TABLE `+t+` DETACH PARTITION `+part(t)); err != nil {
			return nil, fmt.Errorf("detach %s: %w", t, err)
		}
	}
	rows, err := tx.Query(ctx, `SELECT id FROM `+part("restore")+` AS r
		WHERE (r.natural_key > 0 AND EXISTS (SELECT 1 FROM prune_gone_history AS g WHERE g.id = r.natural_key))
		OR (r.natural_key < 0 AND EXISTS (SELECT 1 FROM prune_gone_log AS g WHERE g.id = -r.natural_key)) ORDER BY id`)
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
		{"restore", `NOT ((p.natural_key > 0 AND EXISTS (SELECT 1 FROM prune_gone_history AS g WHERE g.id = p.natural_key))
			OR (p.natural_key < 0 AND EXISTS (SELECT 1 FROM prune_gone_log AS g WHERE g.id = -p.natural_key)))`, nil},
	} {
		var held int64
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+part(q.table)).Scan(&held); err != nil {
			return nil, err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO `+q.table+` SELECT * FROM `+part(q.table)+` AS p WHERE `+q.keep)
		if err != nil {
			return nil, fmt.Errorf("keep %s: %w", q.table, err)
		}
		if q.n != nil {
			*q.n += held - tag.RowsAffected()
		}
		if _, err := tx.Exec(ctx, `DROP TABLE `+part(q.table)); err != nil {
			return nil, fmt.Errorf("drop %s: %w", q.table, err)
		}
	}
	st.Months++
	return gone, nil
}
