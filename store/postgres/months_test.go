package postgres_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/postgres"
	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
)

// connect opens a plain connection to the database at u, for what the
// tests read of the catalog.
func connect(t *testing.T, u string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func count(t *testing.T, c *pgx.Conn, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := c.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// partitions lists the partitions of table, by name.
func partitions(t *testing.T, c *pgx.Conn, table string) []string {
	t.Helper()
	rows, err := c.Query(context.Background(), `SELECT c.relname::text FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
		WHERE i.inhparent = $1::regclass ORDER BY 1`, table)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// rw_month (SQL) and monthOf (Go) put every time in the same month: the
// import computes a fact's month in Go, the migration in SQL.
func TestMonthOfAsInSQL(t *testing.T) {
	u := pgtest.URL(t)
	if _, err := postgres.Open(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	c := connect(t, u)
	for _, at := range []time.Time{
		time.Date(2026, 1, 31, 23, 59, 59, 999e6, time.UTC), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 31, 23, 59, 59, 999e6, time.UTC), time.Date(1969, 12, 31, 23, 59, 59, 999e6, time.UTC),
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2000, 2, 29, 12, 0, 0, 1e6, time.UTC),
	} {
		ms := at.UnixMilli()
		var sql int32
		if err := c.QueryRow(context.Background(), `SELECT rw_month($1)`, ms).Scan(&sql); err != nil {
			t.Fatal(err)
		}
		if got := postgres.MonthOf(ms); got != sql || got != int32(at.Year()*100+int(at.Month())) {
			t.Errorf("%s: monthOf %d, rw_month %d", at, got, sql)
		}
	}
}

// A restore first derived from its history row alone (at its start, in
// January) whose finish then arrives from the error log in February stays
// one row with its id: its partition is its history row's month, which the
// finish does not move.
func TestFinishInTheNextMonthKeepsOneRow(t *testing.T) {
	ctx := context.Background()
	u := pgtest.URL(t)
	db, err := postgres.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Date(2026, 1, 31, 23, 50, 0, 0, time.UTC)
	// A warehouse running then: January's and February's partitions exist.
	if err := db.EnsureMonths(ctx, start); err != nil {
		t.Fatal(err)
	}
	size := int64(10 << 30)
	im, err := db.NewImport(ctx, "history", "h.csv")
	if err != nil {
		t.Fatal(err)
	}
	if err := im.History(store.HistoryRow{Instance: "SQL01", RestoreHistoryID: 1, RestoreDate: start, Database: "Sales",
		RestoreType: "D", BackupType: "D", BackupSize: &size, Origin: store.Origin{Source: "history", File: "h.csv", Line: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := im.CommitAndReconcile(); err != nil {
		t.Fatal(err)
	}
	before, _, err := db.ListRestores(ctx, store.RestoreFilter{})
	if err != nil || len(before) != 1 {
		t.Fatalf("%d restores, %v; want 1", len(before), err)
	}
	zero := 0
	im, err = db.NewImport(ctx, "errorlog", "ERRORLOG")
	if err != nil {
		t.Fatal(err)
	}
	if err := im.LogRestore(store.LogRestore{Instance: "SQL01", Database: "Sales", Kind: store.KindFull, MessageID: 18267,
		CompletedAt: start.Add(40 * time.Minute), UTCOffset: &zero, Has3014: true, Statement: "RESTORE DATABASE",
		Pages: 1 << 20, Seconds: 2400, MBps: 3.4, Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: 7}}); err != nil {
		t.Fatal(err)
	}
	if _, err := im.CommitAndReconcile(); err != nil {
		t.Fatal(err)
	}
	after, _, err := db.ListRestores(ctx, store.RestoreFilter{})
	if err != nil || len(after) != 1 {
		t.Fatalf("%d restores after the finish arrived, %v; want 1", len(after), err)
	}
	if after[0].ID != before[0].ID || after[0].At.Month() != time.February {
		t.Errorf("restore %d at %s, was %d at %s: want the same id, now at its February finish", after[0].ID, after[0].At,
			before[0].ID, before[0].At)
	}
	c := connect(t, u)
	if n := count(t, c, `SELECT count(*) FROM restore_p202601`); n != 1 {
		t.Errorf("%d restores in January's partition, want the one (its history row's month)", n)
	}
	if n := count(t, c, `SELECT count(*) FROM restore`); n != 1 {
		t.Errorf("%d restore rows, want 1", n)
	}
	if n := count(t, c, `SELECT count(*) FROM restore_p202602`); n != 0 {
		t.Errorf("%d restores in February's partition, want none", n)
	}
	if err := db.ReconcileAll(ctx); err != nil {
		t.Fatal(err)
	}
	if again, _, err := db.ListRestores(ctx, store.RestoreFilter{}); err != nil || len(again) != 1 || again[0].ID != after[0].ID {
		t.Errorf("derived again: %d restores, %v", len(again), err)
	}
}

// schema34 creates, in a new database, the schema of migrations 1-34 as a
// warehouse of that version has it, and returns its URL.
func schema34(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	u := pgtest.URL(t)
	c := connect(t, u)
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if _, err := c.Exec(ctx, `CREATE TABLE schema_migration (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		v, _ := strconv.Atoi(name[:4])
		if v > 34 {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctx, string(b)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := c.Exec(ctx, `INSERT INTO schema_migration VALUES ($1, $2, 0)`, v, name); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

// copyTables copies every table of the database at to (but schema_migration)
// from the one at from, in the columns to has, and moves its sequences past
// the ids copied.
func copyTables(t *testing.T, from, to string) {
	t.Helper()
	ctx := context.Background()
	src, dst := connect(t, from), connect(t, to)
	rows, err := dst.Query(ctx, `SELECT c.table_name::text, string_agg(quote_ident(c.column_name), ', ' ORDER BY c.ordinal_position)
		FROM information_schema.columns AS c JOIN information_schema.tables AS t USING (table_schema, table_name)
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND c.table_name <> 'schema_migration'
		GROUP BY 1 ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	type table struct{ name, cols string }
	tables, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (table, error) {
		var x table
		return x, r.Scan(&x.name, &x.cols)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dst.Exec(ctx, `SET session_replication_role = replica`); err != nil { // no foreign key checks: any order
		t.Fatal(err)
	}
	for _, tb := range tables {
		var buf bytes.Buffer
		if _, err := src.PgConn().CopyTo(ctx, &buf, `COPY (SELECT `+tb.cols+` FROM `+tb.name+`) TO STDOUT`); err != nil {
			t.Fatalf("copy from %s: %v", tb.name, err)
		}
		if _, err := dst.PgConn().CopyFrom(ctx, &buf, `COPY `+tb.name+` (`+tb.cols+`) FROM STDIN`); err != nil {
			t.Fatalf("copy into %s: %v", tb.name, err)
		}
	}
	if _, err := dst.Exec(ctx, `SET session_replication_role = DEFAULT`); err != nil {
		t.Fatal(err)
	}
	if _, err := dst.Exec(ctx, `DO $$ DECLARE r RECORD; BEGIN
		FOR r IN SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()
			AND (is_identity = 'YES' OR column_default LIKE 'nextval%') LOOP
			EXECUTE format('SELECT setval(pg_get_serial_sequence(%L, %L), COALESCE((SELECT max(%I) FROM %I), 0) + 1, false)',
				r.table_name, r.column_name, r.column_name, r.table_name);
		END LOOP; END $$`); err != nil {
		t.Fatal(err)
	}
}

// A populated warehouse of schema 34 (the demo fleet's two months, as a
// warehouse of that version would hold them) migrates to monthly
// partitions: every row is kept with its id, each in its month's partition,
// and deriving it again changes no restore and adds no row.
func TestMigrationPartitionsAWarehouseOf34(t *testing.T) {
	ctx := context.Background()
	u := pgtest.URL(t)
	fresh, err := postgres.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	importFleet(t, fresh, smallFleet(t))
	want := byID(t, fresh)
	old := schema34(t)
	copyTables(t, u, old)
	c := connect(t, old)
	if n := count(t, c, `SELECT count(*) FROM restore`); n != int64(len(want)) || n == 0 {
		t.Fatalf("%d restores at schema 34, want %d", n, len(want))
	}
	db, err := postgres.Open(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.WarehouseSchema(ctx); err != nil || v != postgres.SchemaVersion() {
		t.Fatalf("schema %d, %v", v, err)
	}
	if err := db.Check(ctx); err != nil {
		t.Fatal(err)
	}
	got := byID(t, db)
	if !sameByID(got, want) {
		t.Fatalf("after the migration: %d restores, want the %d before it, ids and all", len(got), len(want))
	}
	for _, table := range []string{"history_row", "log_restore", "restore"} {
		parts := partitions(t, c, table)
		if len(parts) < 3 || !slices.Contains(parts, table+"_default") {
			t.Errorf("%s has partitions %v: want a month's each and DEFAULT", table, parts)
		}
		// Every dated row sits in its month's partition; DEFAULT holds
		// only undated log lines (month 0).
		if n := count(t, c, `SELECT count(*) FROM `+table+`_default WHERE part_month <> 0`); n != 0 {
			t.Errorf("%d rows of %s in DEFAULT with a month", n, table)
		}
		if n := count(t, c, `SELECT count(*) FROM `+table+` WHERE part_month = 0`); table != "log_restore" && n != 0 {
			t.Errorf("%d rows of %s without a month", n, table)
		}
	}
	// The restores' months are their natural facts' months, as
	// derivation computes them: deriving again matches every row.
	if err := db.ReconcileAll(ctx); err != nil {
		t.Fatal(err)
	}
	if again := byID(t, db); !sameByID(again, want) {
		t.Errorf("derived again: %d restores, want %d", len(again), len(want))
	}
	if n := count(t, c, `SELECT count(*) FROM restore`); n != int64(len(want)) {
		t.Errorf("%d restore rows after deriving again, want %d", n, len(want))
	}
	// New rows continue the identities.
	if n := count(t, c, `SELECT count(*) FROM (SELECT id FROM restore GROUP BY id HAVING count(*) > 1) AS d`); n != 0 {
		t.Errorf("%d restore ids twice", n)
	}
}

func byID(t *testing.T, db store.Warehouse) map[int64]store.Restore {
	t.Helper()
	rs, _, err := db.ListRestores(context.Background(), store.RestoreFilter{Limit: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]store.Restore{}
	for _, r := range rs {
		if _, dup := out[r.ID]; dup {
			t.Errorf("restore %d listed twice", r.ID)
		}
		out[r.ID] = r
	}
	return out
}

func sameByID(a, b map[int64]store.Restore) bool {
	if len(a) != len(b) {
		return false
	}
	for id, r := range a {
		o, ok := b[id]
		if !ok || o.Database != r.Database || o.Instance != r.Instance || o.Kind != r.Kind || !o.At.Equal(r.At) {
			return false
		}
	}
	return true
}
