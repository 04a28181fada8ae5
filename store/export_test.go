package store

import (
	"context"
	"database/sql"
)

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
