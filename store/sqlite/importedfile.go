package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/restorewatch/restorewatch/store"
)

// ImportedFile returns the earlier import of the file with this
// fingerprint; ok is false when there is none.
func (db *DB) ImportedFile(ctx context.Context, fingerprint string) (f store.ImportedFile, ok bool, err error) {
	var at int64
	if err := ctx.Err(); err != nil {
		return f, false, err
	}
	err = db.read.QueryRowContext(statementContext(ctx), `SELECT fingerprint, path, size, records, rejected, imported_at
		FROM imported_file WHERE fingerprint = ?`, fingerprint).Scan(&f.Fingerprint, &f.Path, &f.Size, &f.Records, &f.Rejected, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return f, false, nil
	}
	if err != nil {
		return f, false, fmt.Errorf("store: imported file: %w", err)
	}
	f.ImportedAt = store.UnixMs(at)
	return f, true, nil
}

// MarkImported records files whose records are committed. Call it only
// after the import that holds their records committed: a crash in between
// leaves them unmarked, and the next run reads them again (adding nothing).
func (db *DB) MarkImported(ctx context.Context, files []store.ImportedFile) error {
	if len(files) == 0 {
		return nil
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: mark imported: %w", err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO imported_file (fingerprint, path, size, records, rejected, imported_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (fingerprint) DO UPDATE SET path = excluded.path, imported_at = excluded.imported_at`)
	if err != nil {
		return fmt.Errorf("store: mark imported: %w", err)
	}
	defer st.Close()
	now := db.now().UnixMilli()
	sctx := statementContext(ctx) // the transaction still ends with ctx
	for _, f := range files {
		if _, err := st.ExecContext(sctx, f.Fingerprint, f.Path, f.Size, f.Records, f.Rejected, now); err != nil {
			return fmt.Errorf("store: mark imported %s: %w", f.Path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: mark imported: %w", err)
	}
	return nil
}
