package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
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
