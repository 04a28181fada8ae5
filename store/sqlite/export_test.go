package sqlite

import (
	"context"
	"database/sql"
	"time"
)

var timeNow = time.Now

// MarkSchemaForTest records a schema version as applied, to test the refusal
// of warehouses written by newer binaries.
func MarkSchemaForTest(path string, version int) error {
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(context.Background(), `INSERT INTO schema_migration (version, name, applied_at) VALUES (?, 'future', 0)`, version)
	return err
}

// OpenAtVersionForTest creates a warehouse with only the migrations up to
// version applied, as an older restorewatch would have left it.
func OpenAtVersionForTest(ctx context.Context, path string, version int) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		return err
	}
	defer db.Close()
	d := &DB{path: path, write: db, now: timeNow, reconcile: defaultReconcileLimits}
	if _, err := db.ExecContext(ctx, `CREATE TABLE schema_migration (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		return err
	}
	ms, err := migrations()
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.version > version {
			break
		}
		if err := d.applyMigration(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// MigrationVersionsForTest lists the embedded migration versions.
func MigrationVersionsForTest() []int {
	ms, _ := migrations()
	var v []int
	for _, m := range ms {
		v = append(v, m.version)
	}
	return v
}
