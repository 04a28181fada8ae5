package main

import (
	"context"
	"database/sql"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx", for countRows on PostgreSQL

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/postgres"
	"github.com/restorewatch/restorewatch/store/sqlite"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// newDB returns the --db of a new, empty warehouse on the engine
// RW_TEST_ENGINE names (storetest.EnvEngine): a file named name in a
// temporary folder, or a new PostgreSQL database's URL.
func newDB(t testing.TB, name string) string {
	t.Helper()
	return storetest.Location(t, name)
}

// openWarehouse opens the warehouse at a --db, file or URL, as the
// program does; the caller closes it.
func openWarehouse(ctx context.Context, where string) (store.Warehouse, error) {
	if postgres.IsURL(where) {
		return postgres.Open(ctx, where)
	}
	return sqlite.Open(ctx, where)
}

// warehouseBytes returns what the warehouse at a --db holds, as bytes to
// search for what it must not hold: the SQLite file, or every PostgreSQL
// table's rows as text.
func warehouseBytes(t *testing.T, where string) []byte {
	t.Helper()
	if !postgres.IsURL(where) {
		b, err := os.ReadFile(where)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var out []byte
	queryPostgres(t, where, func(ctx context.Context, conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, `SELECT table_name::text FROM information_schema.tables
			WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
		if err != nil {
			return err
		}
		tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		for _, name := range tables {
			var text string
			q := `SELECT COALESCE(string_agg(t::text, E'\n'), '') FROM ` + pgx.Identifier{name}.Sanitize() + ` AS t`
			if err := conn.QueryRow(ctx, q).Scan(&text); err != nil {
				return err
			}
			out = append(out, text...)
		}
		return nil
	})
	return out
}

// rawDB opens the warehouse at a --db behind the program's back, for
// checks of its tables in SQL both engines read alike; closed when t ends.
func rawDB(t *testing.T, where string) *sql.DB {
	t.Helper()
	driver, dsn := "sqlite", "file:"+where+"?_pragma=busy_timeout(10000)"
	if postgres.IsURL(where) {
		driver, dsn = "pgx", where
	}
	d, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// execSQL runs one statement on the warehouse at a --db behind the
// program's back (a hand edit, a warehouse an older version wrote), in SQL
// both engines read alike.
func execSQL(t *testing.T, where, statement string) {
	t.Helper()
	if _, err := rawDB(t, where).ExecContext(t.Context(), statement); err != nil {
		t.Fatal(err)
	}
}

func queryPostgres(t *testing.T, u string, fn func(context.Context, *pgx.Conn) error) {
	t.Helper()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := fn(ctx, conn); err != nil {
		t.Fatal(err)
	}
}

// ranInTheDefaultPass skips, when the suite runs on PostgreSQL, a test
// that uses PostgreSQL on either engine: the default pass ran it already,
// and running it twice only lengthens CI.
func ranInTheDefaultPass(t *testing.T, why string) {
	t.Helper()
	if storetest.OnPostgres() {
		t.Skip("ran in the default pass: " + why)
	}
}
