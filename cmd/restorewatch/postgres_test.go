package main

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store/keep"
	"github.com/restorewatch/restorewatch/store/postgres"
	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

// --db and RW_DB take a postgres:// URL: the same commands on the shared
// warehouse, its password never printed.
func TestPostgresWarehouse(t *testing.T) {
	u := pgtest.URL(t)
	out, errs, code := runMain(t, "--db", u, "token", "create", "zone-a")
	if code != 0 || !strings.Contains(out, "rwc_") {
		t.Fatalf("token create on PostgreSQL: %d, %q, %q", code, out, errs)
	}
	t.Setenv("RW_DB", u)
	out, errs, code = runMain(t, "token", "list")
	if code != 0 || !strings.Contains(out, "zone-a") {
		t.Fatalf("token list through RW_DB: %d, %q, %q", code, out, errs)
	}
	// An import derives and analyses on PostgreSQL as on SQLite; again, it
	// adds nothing.
	logs, _ := filepath.Glob("../../ingest/errorlog/testdata/full_diff_log_norecovery_2023.log")
	for i, want := range []string{"added 3,", "added 0, duplicates 3"} {
		out, errs, code := runMain(t, "import", "errorlog", "--instance", "LNX01", "--reread="+strconv.FormatBool(i > 0), logs[0])
		if code != 0 || !strings.Contains(out+errs, want) {
			t.Errorf("import %d on PostgreSQL: %d, %q, %q; want %q", i+1, code, out, errs, want)
		}
	}
	out, errs, code = runMain(t, "restores", "--instance", "LNX01")
	if code != 0 || !strings.Contains(out, "LNX01") {
		t.Errorf("restores on PostgreSQL: %d, %q, %q", code, out, errs)
	}
	if out, errs, code = runMain(t, "analyze"); code != 0 {
		t.Errorf("analyze on PostgreSQL: %d, %q, %q", code, out, errs)
	}
}

// A password in the URL never reaches a message.
func TestPostgresURLPasswordNotPrinted(t *testing.T) {
	_, errs, code := runMain(t, "--db", "postgres://rw:hunter2@127.0.0.1:1/rw?sslmode=disable&connect_timeout=2", "token", "list")
	if code == 0 || strings.Contains(errs, "hunter2") {
		t.Errorf("unreachable server: %d, %q: want a failure without the password", code, errs)
	}
}

// migrate copies a SQLite warehouse whole, checks the counts, and the copy
// goes on from there (new ids after the copied ones); a second migrate into
// the same database refuses and keeps nothing of its own.
func TestMigrateSQLiteToPostgres(t *testing.T) {
	file := filepath.Join(t.TempDir(), "w.db")
	logs, _ := filepath.Glob("../../ingest/errorlog/testdata/full_diff_log_norecovery_2023.log")
	if _, errs, code := runMain(t, "import", "errorlog", "--db", file, "--instance", "LNX01", logs[0]); code != 0 {
		t.Fatalf("import: %s", errs)
	}
	if _, errs, code := runMain(t, "--db", file, "token", "create", "zone-a"); code != 0 {
		t.Fatalf("token: %s", errs)
	}
	// Nothing kept in the file (a warehouse an older release wrote): the
	// copy must not start without its aggregates.
	execSQL(t, file, "DELETE FROM aggregate_snapshot")
	u := pgtest.URL(t)
	out, errs, code := runMain(t, "migrate", "--from", file, "--to", u)
	if code != 0 {
		t.Fatalf("migrate: %d %s", code, errs)
	}
	for _, want := range []string{"restore ", "log_restore ", "collector_token ", "every table holds what"} {
		if !strings.Contains(out, want) {
			t.Errorf("migrate's report lacks %q:\n%s", want, out)
		}
	}
	ctx := context.Background()
	src, err := sqlite.Open(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := postgres.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, table := range []string{"instance", "restore", "log_restore", "history_row", "import_run", "collector_token"} {
		n, _ := src.CountRows(ctx, table)
		var m int64
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&m); err != nil || m != n {
			t.Errorf("%s: %d rows on PostgreSQL (%v), %d on SQLite", table, m, err, n)
		}
	}
	// The dashboard's aggregates are kept at the copy's own data version:
	// its first start reads them instead of computing them.
	if v, err := dst.DataVersion(ctx); err != nil {
		t.Fatal(err)
	} else if _, ok, err := keep.Kept(ctx, dst, keep.NameFigures, Version, v); err != nil || !ok {
		t.Errorf("after migrate the overview's figures are not kept at the copy's version %s (%v)", v, err)
	}
	if n, _ := src.CountRows(ctx, "restore"); n != 3 {
		t.Errorf("the SQLite warehouse holds %d restores, want the 3 imported", n)
	}
	// The copied rows sit in their months' partitions (migration 0035),
	// a restore in its fact's: deriving again matches each, adding none.
	var unmonthed, parts int64
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM restore WHERE part_month = 0),
		(SELECT count(*) FROM pg_inherits WHERE inhparent = 'restore'::regclass)`).Scan(&unmonthed, &parts); err != nil || unmonthed != 0 || parts < 2 {
		t.Errorf("%d restores without a month, %d partitions (%v)", unmonthed, parts, err)
	}
	if err := dst.ReconcileAll(ctx); err != nil {
		t.Fatal(err)
	}
	var held int64
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM restore`).Scan(&held); err != nil || held != 3 {
		t.Errorf("%d restores after deriving again (%v), want 3", held, err)
	}
	// Ids continue after the copied ones.
	if _, err := dst.StartRun(ctx, "LNX01", time.Now()); err != nil {
		t.Errorf("a new row after the copy: %v", err)
	}
	if _, errs, code := runMain(t, "migrate", "--from", file, "--to", u); code == 0 || !strings.Contains(errs, "already holds") {
		t.Errorf("migrating into a filled warehouse: %d %q, want a refusal", code, errs)
	}
}

// A restore plan on a warehouse migrated to PostgreSQL is the plan of the
// SQLite file it came from, word for word, in every format.
func TestPlanOnPostgresEqualsSQLite(t *testing.T) {
	file := filepath.Join(t.TempDir(), "w.db")
	for _, in := range []string{"../../ingest/backups/testdata/export_sqlcmd.csv", "../../ingest/backups/testdata/dbatools_raw_en-US.csv"} {
		if _, errs, code := runMain(t, "import", "--db", file, in); code != 0 {
			t.Fatalf("import %s: %s", in, errs)
		}
	}
	u := pgtest.URL(t)
	if _, errs, code := runMain(t, "migrate", "--from", file, "--to", u); code != 0 {
		t.Fatalf("migrate: %s", errs)
	}
	for _, args := range [][]string{
		{"--instance", `SQL01\PROD`, "--database", "Sales, EU", "--format", "sql", "--data-path", `E:\Data`, "--log-path", `F:\Log`},
		{"--instance", `SQL01\PROD`, "--database", "Sales, EU", "--format", "json", "--at", "2026-01-01T00:00:00Z"},
		{"--instance", "SQL02", "--database", "Sales"},
		{"--instance", "SQL02", "--database", "Nope"},
	} {
		lite, lerr, lcode := runMain(t, append([]string{"plan", "--db", file}, args...)...)
		pg, perr, pcode := runMain(t, append([]string{"plan", "--db", u}, args...)...)
		if lcode != pcode || lite != pg || lerr != perr {
			t.Errorf("plan %v:\nSQLite     %d %q %q\nPostgreSQL %d %q %q", args, lcode, lite, lerr, pcode, pg, perr)
		}
	}
}

// The CLI's lists read the same on a migrated warehouse.
func TestListsOnPostgresEqualSQLite(t *testing.T) {
	file := filepath.Join(t.TempDir(), "w.db")
	logs, _ := filepath.Glob("../../ingest/errorlog/testdata/*.log")
	if len(logs) < 3 {
		t.Fatalf("%d error logs in testdata", len(logs))
	}
	if _, errs, code := runMain(t, append([]string{"import", "errorlog", "--db", file, "--instance", "LNX01"}, logs[0])...); code != 0 {
		t.Fatalf("import: %s", errs)
	}
	u := pgtest.URL(t)
	if _, errs, code := runMain(t, "migrate", "--from", file, "--to", u); code != 0 {
		t.Fatalf("migrate: %s", errs)
	}
	for _, args := range [][]string{
		{"restores"}, {"restores", "--format", "json"}, {"restores", "--format", "csv", "--all"}, {"restores", "--instance", "lnx"},
		{"restores", "--database", "nope"}, {"regressions"}, {"regressions", "--format", "json"},
	} {
		lite, lerr, lcode := runMain(t, append(args, "--db", file)...)
		pg, perr, pcode := runMain(t, append(args, "--db", u)...)
		if lcode != pcode || lite != pg || lerr != perr {
			t.Errorf("%v:\nSQLite     %d %q %q\nPostgreSQL %d %q %q", args, lcode, lite, lerr, pcode, pg, perr)
		}
	}
}
