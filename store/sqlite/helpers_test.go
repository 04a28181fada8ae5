package sqlite

import (
	"context"
	"path/filepath"
	"testing"
)

// openTestDB opens a new warehouse in the test's temporary directory,
// closed when the test ends.
func openTestDB(t testing.TB) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
