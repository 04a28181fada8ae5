package postgres

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/restorewatch/restorewatch/store"
)

// DataVersion changes whenever an import, a reconciliation (the restores'
// change log), an analysis, a status change or a change of an instance's
// tags could have changed what a page shows, on any replica: every part is read from the database, so a
// replica sees the others' writes. The status changes' times are summed,
// not their maximum taken: each is stamped by its replica's clock, and one
// whose clock is behind the newest stamp must still move the version.
func (db *DB) DataVersion(ctx context.Context) (string, error) {
	return db.version.do(ctx, db.dataVersion)
}

func (db *DB) dataVersion(ctx context.Context) (string, error) {
	var imp, ser, reg, status, inst, changes, backups, tags int64
	err := db.pool.QueryRow(ctx, `SELECT
		(SELECT COALESCE(MAX(id),0) FROM import_run), (SELECT COALESCE(MAX(id),0) FROM series),
		(SELECT COALESCE(MAX(id),0) FROM regression), (SELECT COALESCE(SUM(status_at),0)::bigint FROM regression),
		(SELECT COALESCE(MAX(id),0) FROM instance),
		GREATEST((SELECT COALESCE(MAX(seq),0) FROM restore_change), (SELECT COALESCE(MAX(last_value),0) FROM pg_sequences
			WHERE schemaname = current_schema() AND sequencename = 'restore_change_seq_seq')),
		(SELECT COALESCE(MAX(id),0) FROM backup_set), (SELECT COALESCE(SUM(tags_rev),0)::bigint FROM instance)`).Scan(&imp, &ser, &reg, &status, &inst, &changes, &backups, &tags)
	if err != nil {
		return "", fmt.Errorf("store: data version: %w", err)
	}
	return fmt.Sprintf("%d.%d.%d.%d.%d.%d.%d.%d", imp, ser, reg, status, inst, changes, backups, tags), nil
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

// Backup writes a consistent copy of the warehouse to path with pg_dump
// (custom format: pg_restore reads it), which reads one snapshot while
// imports go on. The password reaches pg_dump in its environment, never
// on its command line.
func (db *DB) Backup(ctx context.Context, path string) error {
	bin, err := exec.LookPath("pg_dump")
	if err != nil {
		return store.Errorf(store.EUNAVAILABLE, "store: backup of %s needs pg_dump (Debian: apt-get install postgresql-client): %v", db.where, err)
	}
	cmd := exec.CommandContext(ctx, bin, "--format=custom", "--no-owner", "--file", path, "--dbname", db.dump)
	cmd.Env = toolEnv(db.pool.Config().ConnConfig.Password)
	if out, err := cmd.CombinedOutput(); err != nil {
		return store.Errorf(store.EINVALID, "store: backup of %s to %s: %v: %s", db.where, path, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// toolEnv is the environment of a PostgreSQL client tool (pg_dump,
// pg_restore) given the warehouse's password: there, never on its command
// line.
func toolEnv(password string) []string {
	env := os.Environ()
	if password != "" {
		env = append(env, "PGPASSWORD="+password)
	}
	return env
}
