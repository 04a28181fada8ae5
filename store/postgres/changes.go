package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store/orders"
)

// The restores' change log (migration 0020, as store/sqlite keeps it): every
// derivation transaction appends the natural keys of the restores it wrote
// and the ids of those it deleted, so the dashboard's fleet-wide orders can
// follow an import by what it changed instead of a scan of every restore.
const (
	// changeLogTxMax is the most restores one transaction logs row by
	// row; past it, one rebuild marker (a row of NULLs) says more.
	changeLogTxMax = 100000
	// changeLogKeep rows are kept; the log is pruned once it holds
	// changeLogSlack more.
	changeLogKeep  int64 = 1000000
	changeLogSlack int64 = 100000
	// prunedKey is the setting naming the newest seq pruned.
	prunedKey = "restore_change_pruned"
)

// changeLogLock is the advisory lock (the bytes of "rwch", 0) a writer of
// the change log holds from numbering its rows to its commit: writers then
// commit in the order of their seqs, and a reader that has seen seq s has
// seen every row before it (an update from s misses none).
const changeLogLock int32 = 0x72776368

// recordRestoreChanges records, inside the derivation transaction tx, the
// natural keys it upserted and the restore ids it deleted; the caller
// commits soon after (it holds changeLogLock until then).
func recordRestoreChanges(ctx context.Context, tx pgx.Tx, upserted, deleted []int64) error {
	n := len(upserted) + len(deleted)
	if n == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, 0)`, changeLogLock); err != nil {
		return fmt.Errorf("record changes: %w", err)
	}
	if n > changeLogTxMax {
		var seq int64
		if err := tx.QueryRow(ctx, `INSERT INTO restore_change (natural_key, restore_id) VALUES (NULL, NULL)
			RETURNING seq`).Scan(&seq); err != nil {
			return fmt.Errorf("record changes: %w", err)
		}
		return pruneChanges(ctx, tx, seq-1)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO restore_change (natural_key) SELECT unnest($1::bigint[])`, upserted); err != nil {
		return fmt.Errorf("record changes: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO restore_change (restore_id) SELECT unnest($1::bigint[])`, deleted); err != nil {
		return fmt.Errorf("record changes: %w", err)
	}
	var first, last int64
	if err := tx.QueryRow(ctx, `SELECT MIN(seq), MAX(seq) FROM restore_change`).Scan(&first, &last); err != nil {
		return fmt.Errorf("record changes: %w", err)
	}
	if last-first+1 > changeLogKeep+changeLogSlack {
		return pruneChanges(ctx, tx, last-changeLogKeep)
	}
	return nil
}

// pruneChanges deletes the log's rows up to seq and says so for readers.
func pruneChanges(ctx context.Context, tx pgx.Tx, seq int64) error {
	if _, err := tx.Exec(ctx, `DELETE FROM restore_change WHERE seq <= $1`, seq); err != nil {
		return fmt.Errorf("prune changes: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO setting (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, prunedKey, strconv.FormatInt(seq, 10)); err != nil {
		return fmt.Errorf("prune changes: %w", err)
	}
	return nil
}

// changesSince reads, in tx, the change log's position now, how many
// changes it holds after position since, and whether they say which
// restores changed (readable): not when the log was pruned past since, nor
// when a rebuild marker follows it.
func changesSince(ctx context.Context, tx pgx.Tx, since int64) (seq, changes int64, readable bool, err error) {
	var pruned int64
	var marker bool
	if err := tx.QueryRow(ctx, `SELECT COALESCE((SELECT value::bigint FROM setting WHERE key = $1), 0), `+logSeq+`,
		EXISTS (SELECT 1 FROM restore_change WHERE seq > $2 AND natural_key IS NULL AND restore_id IS NULL),
		(SELECT count(*) FROM restore_change WHERE seq > $2)`, prunedKey, since).
		Scan(&pruned, &seq, &marker, &changes); err != nil {
		return 0, 0, false, err
	}
	return seq, changes, pruned <= since && !marker, nil
}

// changedRestores queries, in tx, every restore named in the change log
// after position since, as it is now: its id and orders.Columns (the rows
// orders.Update and (*orders.Heads).Update read), NULL for one that no
// longer exists. A restore changed more than once comes as many times.
func changedRestores(ctx context.Context, tx pgx.Tx, since int64) (pgx.Rows, error) {
	return tx.Query(ctx, `SELECT r.id, `+orders.ColumnsOf("r")+`
		FROM restore_change c JOIN restore r ON r.natural_key = c.natural_key
		WHERE c.seq > $1 AND c.natural_key IS NOT NULL
		UNION ALL
		SELECT c.restore_id, `+orders.ColumnsOf("r")+`
		FROM restore_change c LEFT JOIN restore r ON r.id = c.restore_id
		WHERE c.seq > $1 AND c.restore_id IS NOT NULL`, since)
}
