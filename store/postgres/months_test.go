package postgres_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/postgres"
	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
	"github.com/restorewatch/restorewatch/store/storetest"
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

// monthsFleet is SQL01's history over the 200 days before end: a log
// restore of Shipped every 6 hours and a full restore of Nightly a day.
func monthsFleet(end time.Time) []store.HistoryRow {
	size := int64(1 << 30)
	var out []store.HistoryRow
	add := func(db, typ string, at time.Time) {
		n := int64(len(out) + 1)
		out = append(out, store.HistoryRow{Instance: "SQL01", RestoreHistoryID: n, RestoreDate: at, Database: db,
			RestoreType: typ, BackupType: typ, BackupSize: &size, FirstLSN: "1000", LastLSN: "2000",
			Origin: store.Origin{Source: "history", File: "h.csv", Line: int(n)}})
	}
	for at := end.Add(-200 * 24 * time.Hour); at.Before(end); at = at.Add(6 * time.Hour) {
		add("Shipped", "L", at)
		if at.Hour() == 0 {
			add("Nightly", "D", at)
		}
	}
	return out
}

func importHistory(t *testing.T, db store.Warehouse, rows []store.HistoryRow) store.ImportSummary {
	t.Helper()
	im, err := db.NewImport(context.Background(), "history", "h.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range rows {
		if err := im.History(h); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := im.CommitAndReconcile()
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// Retention on PostgreSQL drops the months wholly before its cut: their
// partitions leave pg_inherits, DEFAULT holds what had to stay of them (a
// regression's evidence and its facts, the full restores), and a
// re-import of the dropped months' file adds back only what was rolled up,
// never a second copy of a kept restore.
// throughMonths opens a new warehouse that has run through the 200 days
// before end (its months' partitions made as a running warehouse makes
// them), closed when t ends, and its URL.
func throughMonths(t *testing.T) (u string, db *postgres.DB, end time.Time) {
	t.Helper()
	ctx := context.Background()
	u = pgtest.URL(t)
	db, err := postgres.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	end = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	for at := end.Add(-200 * 24 * time.Hour); at.Before(end); at = at.AddDate(0, 1, 0) {
		if err := db.EnsureMonths(ctx, at); err != nil {
			t.Fatal(err)
		}
	}
	return u, db, end
}

func TestRetentionDropsWholeMonths(t *testing.T) {
	ctx := context.Background()
	u, db, end := throughMonths(t)
	fleet := monthsFleet(end)
	importHistory(t, db, fleet)
	shipped, _, err := db.ListRestores(ctx, store.RestoreFilter{Database: "Shipped", Sort: "at", Asc: true, Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	// A regression changed in July, judged against the 12 restores before.
	change := shipped[200]
	inst, err := db.GetInstance(ctx, "SQL01")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SaveFindings(ctx, inst.ID, 0, nil, []store.Regression{{InstanceID: inst.ID, Instance: "SQL01", Database: "Shipped",
		Kind: store.KindLog, Direction: "regression", ChangedAt: change.At, ChangeRestoreID: change.ID, BaselineMiBps: 100,
		CurrentMiBps: 40, Ratio: 0.4, BaselineN: 12, CurrentN: 4, PValue: 0.001, Status: "open", FirstSeen: change.At,
		LastSeen: change.At}}, nil); err != nil {
		t.Fatal(err)
	}
	var cited []int64
	for _, r := range shipped[200-12 : 204] {
		cited = append(cited, r.ID)
	}
	c := connect(t, u)
	before := partitions(t, c, "restore")
	dropped := []string{"202605", "202606", "202607"}
	heaps := map[string]int64{}
	for _, table := range []string{"history_row", "log_restore", "restore"} {
		for _, m := range dropped {
			heaps[table+"_p"+m] = count(t, c, `SELECT oid::bigint FROM pg_class WHERE relname = $1`, table+"_p"+m)
		}
	}
	ret := store.Retention{Restores: 90 * 24 * time.Hour, KeepLast: 4}
	st, err := db.Prune(ctx, ret, end)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("prune: %+v", st)
	if st.Months != int64(len(dropped)) {
		t.Errorf("%d months dropped, want %d", st.Months, len(dropped))
	}
	// Each month's partitions are new tables holding what stayed; the old
	// ones, with the rolled-up facts, are gone, and so are the tables the
	// kept rows were copied into.
	for name, oid := range heaps {
		if n := count(t, c, `SELECT count(*) FROM pg_class WHERE oid = $1`, oid); n != 0 {
			t.Errorf("%s's old table (oid %d) is still there", name, oid)
		}
		if n := count(t, c, `SELECT count(*) FROM pg_class WHERE relname = $1`, strings.Replace(name, "_p", "_k", 1)); n != 0 {
			t.Errorf("the copy of %s's kept rows is still a table of its own", name)
		}
	}
	for _, table := range []string{"history_row", "log_restore", "restore"} {
		parts := partitions(t, c, table)
		for _, m := range dropped {
			if !slices.Contains(parts, table+"_p"+m) {
				t.Errorf("%s_p%s is not a partition", table, m)
			}
		}
		if table == "restore" && !slices.Equal(parts, before) {
			t.Errorf("restore's partitions %v, were %v", parts, before)
		}
	}
	if n := count(t, c, `SELECT count(*) FROM pruned_month WHERE part_month BETWEEN 202605 AND 202607`); n != int64(len(dropped)) {
		t.Errorf("%d months recorded as pruned, want %d", n, len(dropped))
	}
	// The months' partitions hold the kept restores and the history rows
	// they stand on; the regression's evidence among them. DEFAULT holds
	// none.
	kept := count(t, c, `SELECT count(*) FROM restore WHERE part_month BETWEEN 202605 AND 202607`)
	if n := count(t, c, `SELECT (SELECT count(*) FROM restore_default) + (SELECT count(*) FROM history_row_default)
		+ (SELECT count(*) FROM log_restore_default)`); kept == 0 || n != 0 {
		t.Errorf("%d restores of the pruned months kept, %d rows in DEFAULT", kept, n)
	}
	if n := count(t, c, `SELECT count(*) FROM history_row WHERE part_month BETWEEN 202605 AND 202607`); n != kept {
		t.Errorf("%d history rows of the pruned months kept, want the %d of the kept restores", n, kept)
	}
	if n := count(t, c, `SELECT count(*) FROM restore WHERE id = ANY($1) AND part_month BETWEEN 202605 AND 202607`, cited); n != int64(len(cited)) {
		t.Errorf("%d of the regression's %d restores kept in their months", n, len(cited))
	}
	// A pruned month is not taken for a month to drop again: the next
	// prune drops nothing and rolls nothing up.
	again, err := db.Prune(ctx, ret, end)
	if err != nil {
		t.Fatal(err)
	}
	if again.Months != 0 || again.RolledUp != 0 || again.History != 0 {
		t.Errorf("the same prune again: %+v, want nothing dropped or rolled up", again)
	}
	if n := count(t, c, `SELECT count(*) FROM restore WHERE part_month BETWEEN 202605 AND 202607`); n != kept {
		t.Errorf("%d restores of the pruned months after the same prune again, want %d", n, kept)
	}
	want := byID(t, db)

	// The dropped months' file again: the kept rows are there already.
	sum := importHistory(t, db, fleet)
	if sum.Added != st.History {
		t.Errorf("the re-import added %d records, want the %d rolled up", sum.Added, st.History)
	}
	got := byID(t, db)
	for id, r := range want {
		if o, ok := got[id]; !ok || !o.At.Equal(r.At) {
			t.Errorf("kept restore %d of %s is gone after the re-import", id, r.At)
		}
	}
	if n := count(t, c, `SELECT count(*) FROM (SELECT database_name, at_utc FROM restore
		GROUP BY 1, 2 HAVING count(*) > 1) AS d`); n != 0 {
		t.Errorf("%d restores twice after the re-import", n)
	}
	if n := count(t, c, `SELECT count(*) FROM (SELECT restore_history_id FROM history_row
		GROUP BY 1 HAVING count(*) > 1) AS d`); n != 0 {
		t.Errorf("%d history rows twice after the re-import", n)
	}
	if got, want := int64(len(got)), int64(len(fleet)); got != want {
		t.Errorf("%d restores after the re-import, want each of the %d rows' once", got, want)
	}
}

// Two replicas making the same months' partitions at once both succeed and
// make each once; a row written while its month had none (in DEFAULT)
// moves into it.
func TestReplicasMakeMonthsOnce(t *testing.T) {
	ctx := context.Background()
	u := pgtest.URL(t)
	var dbs [2]*postgres.DB
	for i := range dbs {
		db, err := postgres.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		dbs[i] = db
	}
	early := time.Date(2025, 3, 10, 8, 0, 0, 0, time.UTC)
	importHistory(t, dbs[0], []store.HistoryRow{{Instance: "SQL01", RestoreHistoryID: 1, RestoreDate: early, Database: "Sales",
		RestoreType: "D", BackupType: "D", Origin: store.Origin{Source: "history", File: "h.csv", Line: 1}}})
	c := connect(t, u)
	if n := count(t, c, `SELECT count(*) FROM history_row_default`); n != 1 {
		t.Fatalf("%d history rows in DEFAULT before March 2025 has a partition, want 1", n)
	}
	errs := make(chan error, len(dbs))
	for _, db := range dbs {
		go func() {
			var err error
			for at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC); at.Year() < 2026 && err == nil; at = at.AddDate(0, 1, 0) {
				err = db.EnsureMonths(ctx, at)
			}
			errs <- err
		}()
	}
	for range dbs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, table := range []string{"history_row", "log_restore", "restore"} {
		// 2024-01 … 2026-01, this month and the next (Open), and DEFAULT.
		if n := count(t, c, `SELECT count(*) FROM pg_inherits WHERE inhparent = $1::regclass AND inhrelid::regclass::text ~ '_p(2024..|2025..|202601)$'`,
			table); n != 25 {
			t.Errorf("%s: %d partitions of 2024-01 to 2026-01, want 25", table, n)
		}
	}
	if n := count(t, c, `SELECT count(*) FROM history_row_p202503`); n != 1 {
		t.Errorf("%d history rows in March 2025's partition, want the one DEFAULT held", n)
	}
	if n := count(t, c, `SELECT count(*) FROM restore_p202503`); n != 1 {
		t.Errorf("%d restores in March 2025's partition, want 1", n)
	}
	if n := count(t, c, `SELECT count(*) FROM restore_default`) + count(t, c, `SELECT count(*) FROM history_row_default`); n != 0 {
		t.Errorf("%d rows left in DEFAULT", n)
	}
}

// A month's prune does not queue every page behind a long reader: when it
// cannot lock the tables in time it rolls the instances up one by one (the
// same roll-ups), and a later prune drops the months, moving what stayed.
func TestRetentionBehindALongReader(t *testing.T) {
	ctx := context.Background()
	u, db, end := throughMonths(t)
	importHistory(t, db, monthsFleet(end))
	all := byID(t, db)
	reader := connect(t, u)
	tx, err := reader.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT count(*) FROM restore`); err != nil {
		t.Fatal(err)
	}
	ret := store.Retention{Restores: 90 * 24 * time.Hour, KeepLast: 4}
	// The roll-up takes no table lock: it goes on beside the reader, only
	// the drop waits for it, and not for long.
	st, err := db.Prune(ctx, ret, end)
	if err != nil {
		t.Fatal(err)
	}
	if st.Months != 0 || st.RolledUp == 0 || st.History >= st.RolledUp {
		t.Errorf("prune behind a reader: %+v; want every instance rolled up, no month dropped, its facts listed", st)
	}
	// The dropped months' facts are listed, still raw: every restore
	// is still there.
	c := connect(t, u)
	listed := count(t, c, `SELECT count(*) FROM prune_gone_history`)
	if listed == 0 || len(byID(t, db)) != len(all)-int(st.History) {
		t.Errorf("%d facts listed, %d restores of %d left after deleting %d; want the listed ones still raw",
			listed, len(byID(t, db)), len(all), st.History)
	}
	if _, err := tx.Exec(ctx, `SELECT count(*) FROM restore`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := db.Prune(ctx, ret, end)
	if err != nil {
		t.Fatal(err)
	}
	if again.Months != 3 || again.RolledUp != 0 || again.History != listed || st.History+again.History != st.RolledUp {
		t.Errorf("the next prune: %+v after %+v with %d listed; want 3 months dropped, the listed facts gone, nothing rolled up again",
			again, st, listed)
	}
	if n := count(t, c, `SELECT (SELECT count(*) FROM prune_gone_history) + (SELECT count(*) FROM prune_gone_log)
		+ (SELECT count(*) FROM prune_stamp)`); n != 0 {
		t.Errorf("%d rows left in the prune's lists after the drop", n)
	}
	same := oncePruned(t, ret, end)
	if got := byID(t, db); !sameByID(got, same.restores) {
		t.Errorf("%d restores after the months dropped late, %d after a prune uninterrupted", len(got), len(same.restores))
	}
	if got := pgRollups(t, c); !reflect.DeepEqual(got, same.rollups) {
		t.Errorf("roll-ups after the late drop differ from an uninterrupted prune's: %d rows, %d", len(got), len(same.rollups))
	}
}

// pruned is what a prune left: its counts, the restores by id, the
// roll-up rows.
type pruned struct {
	stats    store.PruneStats
	restores map[int64]store.Restore
	rollups  []string
}

// oncePruned imports monthsFleet into a new warehouse and prunes it once,
// uninterrupted.
func oncePruned(t *testing.T, ret store.Retention, end time.Time) pruned {
	t.Helper()
	u, db, _ := throughMonths(t)
	importHistory(t, db, monthsFleet(end))
	st, err := db.Prune(context.Background(), ret, end)
	if err != nil {
		t.Fatal(err)
	}
	return pruned{st, byID(t, db), pgRollups(t, connect(t, u))}
}

func pgRollups(t *testing.T, c *pgx.Conn) []string {
	t.Helper()
	return rollups(t, func(q string) ([][]any, error) {
		rows, err := c.Query(context.Background(), q)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, func(r pgx.CollectableRow) ([]any, error) {
			vals, err := r.Values()
			return normalise(vals), err
		})
	})
}

// A prune stopped between its phases (a crash after the roll-up) leaves
// every restore raw and the facts rolled up listed; the next prune drops
// the months without rolling anything up twice, and leaves what one
// uninterrupted prune leaves. With retention turned off meanwhile, the
// listed facts are deleted row by row instead: the same restores again.
func TestMonthPruneStoppedBetweenPhases(t *testing.T) {
	ctx := context.Background()
	ret := store.Retention{Restores: 90 * 24 * time.Hour, KeepLast: 4}
	var end time.Time
	_, _, end = throughMonths(t)
	want := oncePruned(t, ret, end)
	for _, next := range []store.Retention{ret, {}} {
		u, db, _ := throughMonths(t)
		importHistory(t, db, monthsFleet(end))
		all := len(byID(t, db))
		crash := errors.New("stopped between the phases")
		db.BetweenPrunePhases(func(context.Context) error { return crash })
		if _, err := db.Prune(ctx, ret, end); !errors.Is(err, crash) {
			t.Fatalf("prune: %v, want %v", err, crash)
		}
		c := connect(t, u)
		listed := count(t, c, `SELECT count(*) FROM prune_gone_history`)
		rolled := pgRollups(t, c)
		if listed == 0 || len(rolled) != len(want.rollups) {
			t.Errorf("after the stop: %d facts listed, %d roll-up rows; want the facts listed and every roll-up (%d) written",
				listed, len(rolled), len(want.rollups))
		}
		if n := count(t, c, `SELECT count(*) FROM history_row`); n != int64(all)-(want.stats.History-listed) {
			t.Errorf("%d history rows after the stop, want the %d not deleted row by row", n, int64(all)-(want.stats.History-listed))
		}
		db.BetweenPrunePhases(nil)
		st, err := db.Prune(ctx, next, end)
		if err != nil {
			t.Fatal(err)
		}
		if st.RolledUp != 0 || st.History != listed {
			t.Errorf("the prune after the stop (retention %v): %+v; want the %d listed facts gone and nothing rolled up again",
				next.Restores, st, listed)
		}
		if got := byID(t, db); !sameByID(got, want.restores) {
			t.Errorf("retention %v after the stop: %d restores, %d after an uninterrupted prune", next.Restores, len(got), len(want.restores))
		}
		if got := pgRollups(t, c); !reflect.DeepEqual(got, want.rollups) {
			t.Errorf("retention %v after the stop: roll-ups differ from an uninterrupted prune's", next.Restores)
		}
		if n := count(t, c, `SELECT (SELECT count(*) FROM prune_gone_history) + (SELECT count(*) FROM prune_stamp)`); n != 0 {
			t.Errorf("retention %v after the stop: %d rows left in the prune's lists", next.Restores, n)
		}
	}
}

// A restore that becomes evidence between the phases (a regression found
// meanwhile whose change and baseline lie in a month about to drop) stays
// raw: the drop computes again the evidence of an instance whose findings
// moved since its roll-up.
func TestEvidenceFoundBetweenPhasesStaysRaw(t *testing.T) {
	ctx := context.Background()
	u, db, end := throughMonths(t)
	importHistory(t, db, monthsFleet(end))
	shipped, _, err := db.ListRestores(ctx, store.RestoreFilter{Database: "Shipped", Sort: "at", Asc: true, Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	change := shipped[40] // in the first month, which drops
	var cited []int64
	for _, r := range shipped[40-6 : 40+3] {
		cited = append(cited, r.ID)
	}
	inst, err := db.GetInstance(ctx, "SQL01")
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, u)
	db.BetweenPrunePhases(func(ctx context.Context) error {
		if n := count(t, c, `SELECT count(*) FROM prune_gone_history AS g JOIN restore AS r ON r.natural_key = g.id
			WHERE r.id = ANY($1)`, cited); n != int64(len(cited)) {
			t.Errorf("%d of the %d restores listed before the regression was found", n, len(cited))
		}
		return db.SaveFindings(ctx, inst.ID, 0, nil, []store.Regression{{InstanceID: inst.ID, Instance: "SQL01",
			Database: "Shipped", Kind: store.KindLog, Direction: "regression", ChangedAt: change.At, ChangeRestoreID: change.ID,
			BaselineMiBps: 100, CurrentMiBps: 40, Ratio: 0.4, BaselineN: 6, CurrentN: 3, PValue: 0.001, Status: "open",
			FirstSeen: change.At, LastSeen: change.At}}, nil)
	})
	st, err := db.Prune(ctx, store.Retention{Restores: 90 * 24 * time.Hour, KeepLast: 4}, end)
	if err != nil {
		t.Fatal(err)
	}
	if st.Months != 3 {
		t.Errorf("prune: %+v, want 3 months dropped", st)
	}
	if n := count(t, c, `SELECT count(*) FROM restore WHERE id = ANY($1)`, cited); n != int64(len(cited)) {
		t.Errorf("%d of the regression's %d restores left after the drop", n, len(cited))
	}
}

// rollups reads a warehouse's roll-up rows, in one order, as text.
func rollups(t *testing.T, q func(string) ([][]any, error)) []string {
	t.Helper()
	rows, err := q(`SELECT database_name, day, instance_build, source_server, restores, measured, total_duration_s,
		max_duration_s, total_bytes, p50_duration_s, p95_duration_s, p50_mibps, p95_mibps, first_utc, last_utc, merged
		FROM restore_rollup ORDER BY database_name, day, instance_build, source_server`)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprint(r...))
	}
	return out
}

// Retention with months dropped on PostgreSQL leaves what retention leaves
// on SQLite for the same facts and the same regression: the same restores,
// the same counts, the same roll-up rows.
func TestRetentionAsOnSQLite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	lite := storetest.OpenAt(t, path)
	u, pg, end := throughMonths(t)
	ret := store.Retention{Restores: 90 * 24 * time.Hour, KeepLast: 4}
	var stats [2]store.PruneStats
	for i, db := range []store.Warehouse{lite, pg} {
		importHistory(t, db, monthsFleet(end))
		shipped, _, err := db.ListRestores(ctx, store.RestoreFilter{Database: "Shipped", Sort: "at", Asc: true, Limit: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		change := shipped[300]
		inst, err := db.GetInstance(ctx, "SQL01")
		if err != nil {
			t.Fatal(err)
		}
		if err := db.SaveFindings(ctx, inst.ID, 0, nil, []store.Regression{{InstanceID: inst.ID, Instance: "SQL01",
			Database: "Shipped", Kind: store.KindLog, Direction: "regression", ChangedAt: change.At, ChangeRestoreID: change.ID,
			BaselineMiBps: 100, CurrentMiBps: 40, Ratio: 0.4, BaselineN: 20, CurrentN: 6, PValue: 0.001, Status: "open",
			FirstSeen: change.At, LastSeen: change.At}}, nil); err != nil {
			t.Fatal(err)
		}
		if stats[i], err = db.Prune(ctx, ret, end); err != nil {
			t.Fatal(err)
		}
	}
	if stats[1].Months == 0 || stats[1].Locked <= 0 {
		t.Fatalf("PostgreSQL dropped no month, or held no lock to: %+v", stats[1])
	}
	stats[1].Months, stats[1].Locked = 0, 0
	if stats[0] != stats[1] {
		t.Errorf("prune on SQLite %+v, on PostgreSQL %+v", stats[0], stats[1])
	}
	a, b := restoresOf(t, lite), restoresOf(t, pg)
	if len(a) == 0 || !reflect.DeepEqual(a, b) {
		t.Errorf("after the retention SQLite holds %d restores, PostgreSQL %d, or they differ", len(a), len(b))
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	c := connect(t, u)
	fromLite := rollups(t, func(q string) ([][]any, error) {
		rows, err := raw.QueryContext(ctx, q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out [][]any
		for rows.Next() {
			vals := make([]any, 16)
			ptrs := make([]any, len(vals))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return nil, err
			}
			out = append(out, normalise(vals))
		}
		return out, rows.Err()
	})
	fromPG := rollups(t, func(q string) ([][]any, error) {
		rows, err := c.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, func(r pgx.CollectableRow) ([]any, error) {
			vals, err := r.Values()
			return normalise(vals), err
		})
	})
	if len(fromLite) == 0 || !reflect.DeepEqual(fromLite, fromPG) {
		t.Errorf("roll-ups: SQLite %d rows, PostgreSQL %d, or they differ", len(fromLite), len(fromPG))
		for i := range min(len(fromLite), len(fromPG)) {
			if fromLite[i] != fromPG[i] {
				t.Fatalf("first difference:\nSQLite     %s\nPostgreSQL %s", fromLite[i], fromPG[i])
			}
		}
	}
}

// normalise puts both engines' values in one form: integers as int64,
// reals as text to 12 digits (the percentiles are computed in Go alike,
// stored in REAL and DOUBLE PRECISION), bytes as text.
func normalise(vals []any) []any {
	for i, v := range vals {
		switch x := v.(type) {
		case int32:
			vals[i] = int64(x)
		case float64:
			vals[i] = strconv.FormatFloat(x, 'g', 12, 64)
		case int64:
			vals[i] = x
		case []byte:
			vals[i] = string(x)
		}
	}
	return vals
}

// Imports and their derivations keep arriving through another handle (a
// collector pushing to a replica) while a month's prune runs: none fails,
// the prune drops the months, and the pruned instance ends as after a prune
// alone. The imports' writes wait for the copy of what stays (SHARE locks);
// a deadlock with the swap is the prune's to retry.
func TestMonthPruneBesideImports(t *testing.T) {
	ctx := context.Background()
	ret := store.Retention{Restores: 90 * 24 * time.Hour, KeepLast: 4}
	u, db, end := throughMonths(t)
	want := oncePruned(t, ret, end)
	importHistory(t, db, monthsFleet(end))
	other, err := postgres.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	size := int64(1 << 20)
	done := make(chan struct{})
	imported := make(chan int)
	go func() {
		n := 0
		defer func() { imported <- n }()
		for batch := 0; ; batch++ {
			select {
			case <-done:
				return
			default:
			}
			im, err := other.NewImport(ctx, "history", "beside.csv")
			if err != nil {
				t.Error(err)
				return
			}
			for i := range 5 {
				id := int64(batch*5 + i + 1)
				if err := im.History(store.HistoryRow{Instance: "SQL02", RestoreHistoryID: id,
					RestoreDate: end.Add(-time.Duration(id) * time.Minute), Database: "Busy", RestoreType: "L", BackupType: "L",
					BackupSize: &size, FirstLSN: "1000", LastLSN: "2000",
					Origin: store.Origin{Source: "history", File: "beside.csv", Line: int(id)}}); err != nil {
					t.Error(err)
					return
				}
			}
			if _, err := im.CommitAndReconcile(); err != nil {
				t.Errorf("an import beside the prune: %v", err)
				return
			}
			n += 5
		}
	}()
	st, err := db.Prune(ctx, ret, end)
	close(done)
	n := <-imported
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("prune: %+v; %d history rows imported beside it", st, n)
	if st.Months != 3 {
		t.Errorf("prune: %+v, want 3 months dropped", st)
	}
	got := byID(t, db)
	var busy int
	for id, r := range got {
		if r.Instance == "SQL02" {
			busy++
			delete(got, id)
		}
	}
	if busy != n || n == 0 {
		t.Errorf("%d restores of SQL02, want the %d imported beside the prune", busy, n)
	}
	if !sameByID(got, want.restores) {
		t.Errorf("SQL01 after the prune beside imports: %d restores, %d after a prune alone", len(got), len(want.restores))
	}
}
