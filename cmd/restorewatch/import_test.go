package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store/postgres"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// handover lays out a folder as a DBA hands it over: one folder per server
// (an error log that does not name its server, captured output) and a CSV.
func handover(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for dst, src := range map[string]string{
		"LNX01/errorlog":           "../../ingest/errorlog/testdata/full_diff_log_norecovery_2023.log",
		"LNX01/restore-output.txt": "../../ingest/messages/testdata/ssms_completion.txt",
		"history.csv":              "../../ingest/csv/testdata/sqlcmd_w.csv",
	} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, dst)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

var summaryRE = regexp.MustCompile(`(\d+) files \(([^)]*)\), (\d+) skipped, (\d+) failed: read (\d+), added (\d+), duplicates (\d+), rejected (\d+)`)

func TestImportFolderInOneCommand(t *testing.T) {
	db := newDB(t, "w.db")
	dir := handover(t)
	out, stderr, code := runMain(t, "import", "--db", db, "--instance-from-dir", "--verbose", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	m := summaryRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no totals line:\n%s", out)
	}
	if m[1] != "3" || m[2] != "1 errorlog, 1 history, 1 messages" || m[4] != "0" || m[6] == "0" {
		t.Errorf("totals %q", m[0])
	}
	for _, want := range []string{"errorlog: error log (timestamped entries), instance LNX01 (from the folder)",
		"restore-output.txt: captured RESTORE output", "history.csv: history CSV", "instance names:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The same folder again adds nothing.
	out, _, code = runMain(t, "import", "--db", db, "--instance-from-dir", dir)
	if m := summaryRE.FindStringSubmatch(out); code != 0 || m == nil || m[6] != "0" {
		t.Errorf("re-import: exit %d, %s", code, out)
	}
}

func sum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestImportDryRunWritesNothing(t *testing.T) {
	dir := handover(t)
	db := newDB(t, "w.db")
	// No warehouse yet: a dry run does not create one (on PostgreSQL the
	// database is there, with no tables).
	dry, stderr, code := runMain(t, "import", "--db", db, "--instance-from-dir", "--dry-run", dir)
	if code != 0 {
		t.Fatalf("dry run exit %d: %s", code, stderr)
	}
	if postgres.IsURL(db) {
		if b := warehouseBytes(t, db); len(b) != 0 {
			t.Fatalf("a dry run wrote %d bytes of rows into the warehouse", len(b))
		}
		if !strings.Contains(stderr, "scratch database") {
			t.Errorf("a dry run on PostgreSQL does not say where it copies the warehouse: %q", stderr)
		}
	} else if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("a dry run created %s (%v)", db, err)
	}
	if !strings.Contains(dry, "dry run: nothing was written") {
		t.Errorf("dry run does not say so:\n%s", dry)
	}
	// What it reported is exactly what the real import then does.
	real, stderr, code := runMain(t, "import", "--db", db, "--instance-from-dir", dir)
	if code != 0 {
		t.Fatalf("import exit %d: %s", code, stderr)
	}
	d, r := summaryRE.FindString(dry), summaryRE.FindString(real)
	if d == "" || d != r {
		t.Errorf("dry run said %q, the import did %q", d, r)
	}
	// An existing warehouse is left byte for byte as it was.
	runMain(t, "analyze", "--db", db) // settle the WAL into the file
	before := warehouseSum(t, db)
	dry, _, code = runMain(t, "import", "--db", db, "--instance-from-dir", "--dry-run", dir)
	if code != 0 || !strings.Contains(dry, "added 0") || !strings.Contains(dry, " files (none read), ") {
		t.Errorf("dry run over the imported folder: exit %d\n%s", code, dry)
	}
	if warehouseSum(t, db) != before {
		t.Error("a dry run changed the warehouse")
	}
	// A new file: the dry run counts it as the import then adds it.
	more := t.TempDir()
	b, err := os.ReadFile("../../ingest/errorlog/testdata/restore_with_recovery_2024.log")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(more, "SQLNEW"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(more, "SQLNEW", "errorlog"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	dry, stderr, code = runMain(t, "import", "--db", db, "--instance-from-dir", "--dry-run", more)
	if code != 0 {
		t.Fatalf("dry run of a new folder: exit %d: %s", code, stderr)
	}
	if warehouseSum(t, db) != before {
		t.Error("a dry run of new files changed the warehouse")
	}
	real, stderr, code = runMain(t, "import", "--db", db, "--instance-from-dir", more)
	if code != 0 {
		t.Fatalf("import of a new folder: exit %d: %s", code, stderr)
	}
	if d, r := summaryRE.FindString(dry), summaryRE.FindString(real); d == "" || d != r || strings.Contains(d, "added 0") {
		t.Errorf("dry run of new files said %q, the import did %q", d, r)
	}
	if postgres.IsURL(db) {
		if left := scratchDatabases(t, db); len(left) != 0 {
			t.Errorf("dry runs left scratch databases behind: %v", left)
		}
		// A role that may not create databases is told why, and what to do.
		role := fmt.Sprintf("rw_dry_nocreatedb_%d", time.Now().UnixNano())
		execSQL(t, db, "CREATE ROLE "+role+" LOGIN NOCREATEDB")
		t.Cleanup(func() {
			if conn, err := pgx.Connect(context.Background(), db); err == nil {
				conn.Exec(context.Background(), "DROP ROLE IF EXISTS "+role) //nolint:errcheck // a role left behind in a test cluster harms nothing
				conn.Close(context.Background())
			}
		})
		u, err := url.Parse(db)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.User(role)
		_, stderr, code := runMain(t, "import", "--db", u.String(), "--instance-from-dir", "--dry-run", more)
		if code == 0 || !strings.Contains(stderr, "CREATEDB") || !strings.Contains(stderr, "scratch") {
			t.Errorf("a dry run by a role without CREATEDB: exit %d, %q", code, stderr)
		}
	}
}

// warehouseSum is a digest of what the warehouse at a --db holds: its
// SQLite file, or its PostgreSQL tables' rows.
func warehouseSum(t *testing.T, where string) [32]byte {
	t.Helper()
	if postgres.IsURL(where) {
		return sha256.Sum256(warehouseBytes(t, where))
	}
	return sum(t, where)
}

// scratchDatabases lists the dry runs' databases made from the one at u.
func scratchDatabases(t *testing.T, u string) []string {
	t.Helper()
	cfg, err := postgres.Config(u)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	queryPostgres(t, u, func(ctx context.Context, conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, `SELECT datname::text FROM pg_database WHERE starts_with(datname, $1)`,
			cfg.ConnConfig.Database+postgres.ScratchPrefix)
		if err != nil {
			return err
		}
		names, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	return names
}

// A dry run copies the warehouse first: a temporary folder without room for
// the copy stops it before it starts, naming the folder and the sizes, and
// leaves nothing behind (a large warehouse's copy is tens of GB).
func TestImportDryRunNeedsRoomForItsCopy(t *testing.T) {
	storetest.SQLiteOnly(t, "the room asked of TMPDIR for the copy of a warehouse file; on PostgreSQL the copy is a scratch database on the server (TestImportDryRunWritesNothing)")
	dir := handover(t)
	db := newDB(t, "w.db")
	if _, stderr, code := runMain(t, "import", "--db", db, "--instance-from-dir", dir); code != 0 {
		t.Fatalf("import exit %d: %s", code, stderr)
	}
	runMain(t, "analyze", "--db", db) // settle the WAL into the file
	before := sum(t, db)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var asked string
	scratchFree = func(dir string) (int64, bool) { asked = dir; return 4096, true }
	t.Cleanup(func() { scratchFree = freeSpace })
	_, stderr, code := runMain(t, "import", "--db", db, "--instance-from-dir", "--dry-run", dir)
	if code == 0 || !strings.Contains(stderr, "--dry-run copies the warehouse") || !strings.Contains(stderr, "4.00 KiB free") ||
		!strings.Contains(stderr, tmp) || !strings.Contains(stderr, "TMPDIR") {
		t.Errorf("exit %d, %q", code, stderr)
	}
	if !strings.HasPrefix(asked, tmp) {
		t.Errorf("free space asked of %q, not under TMPDIR %q", asked, tmp)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left behind in TMPDIR: %v", left)
	}
	if sum(t, db) != before {
		t.Error("the refused dry run changed the warehouse file")
	}
	// With room, the same dry run runs.
	scratchFree = func(string) (int64, bool) { return 1 << 40, true }
	if out, stderr, code := runMain(t, "import", "--db", db, "--instance-from-dir", "--dry-run", dir); code != 0 ||
		!strings.Contains(out, "dry run: nothing was written") {
		t.Errorf("with room: exit %d, %s %s", code, out, stderr)
	}
}

func TestImportUsage(t *testing.T) {
	db := newDB(t, "w.db")
	if _, stderr, code := runMain(t, "import", "--db", db, "history"); code != 2 || !strings.Contains(stderr, "give the files") {
		t.Errorf("a kind without files: exit %d, %q", code, stderr)
	}
	if _, stderr, code := runMain(t, "import", "--db", db, "backupz", "x.csv"); code != 2 || !strings.Contains(stderr, "want errorlog, history, messages or backups") {
		t.Errorf("an unknown kind: exit %d, %q", code, stderr)
	}
	out, _, code := runMain(t, "import", "--db", db, "../../ingest/messages/testdata/ssms_completion.txt")
	if code != 1 || !strings.Contains(out, "--instance-from-dir") {
		t.Errorf("captured output without an instance: exit %d, want 1 and how to name it:\n%s", code, out)
	}
}
