package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/restorewatch/restorewatch/store"
)

// DataVersion changes whenever an import, a reconciliation (the restores'
// change log), an analysis or a status change could have changed what a
// page shows, on any replica: every part is read from the database, so a
// replica sees the others' writes.
func (db *DB) DataVersion(ctx context.Context) (string, error) {
	var imp, ser, reg, status, inst, changes, backups int64
	err := db.pool.QueryRow(ctx, `SELECT
		(SELECT COALESCE(MAX(id),0) FROM import_run), (SELECT COALESCE(MAX(id),0) FROM series),
		(SELECT COALESCE(MAX(id),0) FROM regression), (SELECT COALESCE(MAX(status_at),0) FROM regression),
		(SELECT COALESCE(MAX(id),0) FROM instance),
		(SELECT COALESCE(MAX(last_value),0) FROM pg_sequences WHERE schemaname = current_schema() AND sequencename = 'restore_change_seq_seq'),
		(SELECT COALESCE(MAX(id),0) FROM backup_set)`).Scan(&imp, &ser, &reg, &status, &inst, &changes, &backups)
	if err != nil {
		return "", fmt.Errorf("store: data version: %w", err)
	}
	return fmt.Sprintf("%d.%d.%d.%d.%d.%d.%d", imp, ser, reg, status, inst, changes, backups), nil
}

// Check checks what PostgreSQL leaves to its user: the schema is the one
// this binary knows, and no index is left invalid (a failed concurrent
// build). Pages and tuples are the server's own business (amcheck, backups).
func (db *DB) Check(ctx context.Context) error {
	v, err := db.WarehouseSchema(ctx)
	if err != nil {
		return err
	}
	if v != SchemaVersion() {
		return store.Errorf(store.ECONFLICT, "store: warehouse %s has schema %d, this restorewatch %d", db.where, v, SchemaVersion())
	}
	rows, err := db.pool.Query(ctx, `SELECT c.relname FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid
		JOIN pg_namespace AS n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND NOT i.indisvalid ORDER BY 1`)
	if err != nil {
		return fmt.Errorf("store: check: %w", err)
	}
	defer rows.Close()
	var bad []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return fmt.Errorf("store: check: %w", err)
		}
		bad = append(bad, name)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: check: %w", err)
	}
	if len(bad) > 0 {
		return store.Errorf(store.EINTERNAL, "store: invalid indexes in %s: %s (REINDEX them)", db.where, strings.Join(bad, ", "))
	}
	return nil
}
