package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/orders"
)

// The change log (migration 0020) lets the fleet-wide orders follow an
// import in time proportional to what it changed: a day of a large fleet
// is a small fraction of its restores, and a rebuild reads them all.
// TestOrdersUpdateEqualsRebuild holds the update equal to a rebuild.
// Measured gain: 1.0–1.7 s an update against 29–44 s a rebuild at 10 M
// restores (SCALE.md, the measured curve).
var (
	// changeLogTxMax is the most restores one reconciliation transaction
	// logs row by row; past it (a re-derivation of the whole fleet), one
	// rebuild marker says more than an update would read.
	changeLogTxMax = 100000
	// changeLogKeep is how many rows the log keeps: a reader further
	// behind than this rebuilds (so would it for that many changes
	// anyway). The log is pruned once it holds changeLogSlack more, so a
	// transaction rarely pays for the delete.
	changeLogKeep  int64 = 1000000
	changeLogSlack int64 = 100000
)

// prunedKey is the setting naming the newest seq pruned from the log.
const prunedKey = "restore_change_pruned"

// changesPerInsert is how many log rows one INSERT carries.
const changesPerInsert = 500

// recordRestoreChanges records, inside the reconciliation transaction tx,
// which restores it changed: the natural keys of the rows it inserted or
// updated and the ids of the rows it deleted. The dashboard's fleet-wide
// orders read these to update themselves instead of rebuilding. A bulk
// reconciliation (restore's indexes dropped: it rewrites a large share of
// the table) and a transaction of more than changeLogTxMax changes record
// one rebuild marker instead, and drop the rows before it, which no reader
// can use any more.
func recordRestoreChanges(ctx context.Context, tx *sql.Tx, upserted, deleted []int64) error {
	n := len(upserted) + len(deleted)
	if n == 0 {
		return nil
	}
	bulk := n > changeLogTxMax
	if !bulk {
		var dropped int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM setting WHERE key = ?`, droppedKey).Scan(&dropped); err != nil {
			return fmt.Errorf("record changes: %w", err)
		}
		bulk = dropped > 0
	}
	if bulk {
		var seq int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO restore_change (natural_key, restore_id) VALUES (NULL, NULL)
			RETURNING seq`).Scan(&seq); err != nil {
			return fmt.Errorf("record changes: %w", err)
		}
		return pruneChanges(ctx, tx, seq-1)
	}
	if err := logChanges(ctx, tx, "natural_key", upserted); err != nil {
		return err
	}
	if err := logChanges(ctx, tx, "restore_id", deleted); err != nil {
		return err
	}
	var first, last int64
	if err := tx.QueryRowContext(ctx, `SELECT MIN(seq), MAX(seq) FROM restore_change`).Scan(&first, &last); err != nil {
		return fmt.Errorf("record changes: %w", err)
	}
	if last-first+1 > changeLogKeep+changeLogSlack {
		return pruneChanges(ctx, tx, last-changeLogKeep)
	}
	return nil
}

// logChanges appends one row per value to the log's column col.
func logChanges(ctx context.Context, tx *sql.Tx, col string, vals []int64) error {
	var full *sql.Stmt
	defer func() {
		if full != nil {
			full.Close()
		}
	}()
	args := make([]any, 0, min(len(vals), changesPerInsert))
	for len(vals) > 0 {
		k := min(len(vals), changesPerInsert)
		args = args[:0]
		for _, v := range vals[:k] {
			args = append(args, v)
		}
		var err error
		if k == changesPerInsert {
			if full == nil {
				if full, err = tx.PrepareContext(ctx, changeInsert(col, k)); err != nil {
					return fmt.Errorf("record changes: %w", err)
				}
			}
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, changeInsert(col, k), args...)
		}
		if err != nil {
			return fmt.Errorf("record changes: %w", err)
		}
		vals = vals[k:]
	}
	return nil
}

func changeInsert(col string, n int) string {
	return "INSERT INTO restore_change (" + col + ") VALUES " + strings.TrimSuffix(strings.Repeat("(?),", n), ",")
}

// pruneChanges deletes the log's rows up to seq and says so for readers.
func pruneChanges(ctx context.Context, tx *sql.Tx, seq int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM restore_change WHERE seq <= ?`, seq); err != nil {
		return fmt.Errorf("prune changes: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO setting (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, prunedKey, strconv.FormatInt(seq, 10)); err != nil {
		return fmt.Errorf("prune changes: %w", err)
	}
	return nil
}

// UpdateOrders returns the fleet's orders as they are now, made from old
// (which stays as it was: pages may still read it) by applying the changes
// logged since old was made: a merge of the changed restores into each
// order, not a sort of them all. It rebuilds them (RestoreOrders) when the
// log cannot say what changed since — pruned past old's position, or a bulk
// reconciliation's rebuild marker — or when so much changed that a rebuild
// costs less. With nothing changed it returns old.
func (db *DB) UpdateOrders(ctx context.Context, old store.FleetOrders) (store.FleetOrders, error) {
	prev, _ := old.(*RestoreOrders) // none (or not these): built anew
	return db.updatedOrders(ctx, prev)
}

// updatedOrders is UpdateOrders on the orders' own type.
func (db *DB) updatedOrders(ctx context.Context, old *RestoreOrders) (*RestoreOrders, error) {
	if old == nil {
		return db.RestoreOrders(ctx)
	}
	o, err := db.updateOrders(ctx, old)
	if err != nil {
		return nil, fmt.Errorf("store: update orders: %w", err)
	}
	if o == nil {
		return db.RestoreOrders(ctx)
	}
	return o, nil
}

// updateOrders reads the changes since old in one snapshot and applies
// them; nil means rebuild.
func (db *DB) updateOrders(ctx context.Context, old *RestoreOrders) (*RestoreOrders, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	seq, changes, readable, err := changesSince(ctx, tx, old.OrdersSeq())
	switch {
	case err != nil:
		return nil, err
	case seq == old.OrdersSeq():
		return old, nil
	case !readable || orders.Rebuilds(old, changes):
		return nil, nil
	}
	rows, err := changedRestores(ctx, tx, old.OrdersSeq())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return orders.Update(old, seq, rows)
}

// changesSince reads, in tx, the change log's position now, how many
// changes it holds after position since, and whether they say which
// restores changed (readable): not when the log was pruned past since, nor
// when a bulk reconciliation left its rebuild marker after it.
func changesSince(ctx context.Context, tx *sql.Tx, since int64) (seq, changes int64, readable bool, err error) {
	var pruned int64
	var marker bool
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE((SELECT CAST(value AS INTEGER) FROM setting WHERE key = ?), 0),
		COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'restore_change'), 0),
		EXISTS (SELECT 1 FROM restore_change WHERE seq > ? AND natural_key IS NULL AND restore_id IS NULL),
		(SELECT count(*) FROM restore_change WHERE seq > ?)`, prunedKey, since, since).
		Scan(&pruned, &seq, &marker, &changes); err != nil {
		return 0, 0, false, err
	}
	return seq, changes, pruned <= since && !marker, nil
}

// changedRestores queries, in tx, every restore named in the change log
// after position since, as it is now: its id and orders.Columns (the rows
// orders.Update and (*orders.Heads).Update read). Those upserted are found
// by natural key (if they still exist), those deleted by id (the columns
// NULL unless the id was taken again). A restore changed more than once
// comes as many times.
func changedRestores(ctx context.Context, tx *sql.Tx, since int64) (*sql.Rows, error) {
	return tx.QueryContext(ctx, `SELECT r.id, `+orders.ColumnsOf("r")+`
		FROM restore_change c JOIN restore r ON r.natural_key = c.natural_key
		WHERE c.seq > ? AND c.natural_key IS NOT NULL
		UNION ALL
		SELECT c.restore_id, `+orders.ColumnsOf("r")+`
		FROM restore_change c LEFT JOIN restore r ON r.id = c.restore_id
		WHERE c.seq > ? AND c.restore_id IS NOT NULL`, since, since)
}
