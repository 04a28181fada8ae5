package storetest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/postgres"
	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
)

// EnvEngine names the engine the suites that touch the warehouse (web, the
// CLI, the importers) run on (issue 41): "sqlite", the default, or
// "postgres", a throw-away PostgreSQL cluster (store/postgres/pgtest; the
// package's TestMain must call pgtest.Main).
const EnvEngine = "RW_TEST_ENGINE"

// OnPostgres reports whether the tests run on PostgreSQL.
func OnPostgres() bool { return os.Getenv(EnvEngine) == "postgres" }

// SQLiteOnly skips tb on PostgreSQL, saying why the test holds for SQLite
// alone (a file copied, crashed or permitted, …).
func SQLiteOnly(tb testing.TB, why string) {
	tb.Helper()
	if OnPostgres() {
		tb.Skip("SQLite-only: " + why)
	}
}

// Location returns where a new, empty warehouse on the test engine is: a
// file in tb's temporary folder named name, or a new PostgreSQL database's
// URL, dropped when tb ends. It is what a test hands the CLI's --db.
func Location(tb testing.TB, name string) string {
	tb.Helper()
	if OnPostgres() {
		return pgtest.URL(tb)
	}
	return filepath.Join(tb.TempDir(), name)
}

// OpenLocation opens the warehouse at a Location (or any file or URL)
// with the engine it names, closed when tb ends.
func OpenLocation(tb testing.TB, where string) store.Warehouse {
	tb.Helper()
	if postgres.IsURL(where) {
		db, err := postgres.Open(context.Background(), where)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { db.Close() })
		return db
	}
	return OpenAt(tb, where)
}

// OpenEngine opens a new, empty warehouse on the test engine, closed when
// tb ends.
func OpenEngine(tb testing.TB) store.Warehouse {
	tb.Helper()
	return OpenLocation(tb, Location(tb, "warehouse.db"))
}
