package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/store/storetest"
)

// import backups, then plan in the three formats; an instant in a broken
// chain and a database without history are clear errors.
func TestImportBackupsThenPlan(t *testing.T) {
	db := newDB(t, "w.db")
	out, stderr, code := runMain(t, "import", "backups", "--db", db, "../../ingest/backups/testdata/export_sqlcmd.csv")
	if code != 0 || !strings.Contains(out, "added 4") {
		t.Fatalf("import exit %d: %s %s", code, stderr, out)
	}
	// Again: nothing new.
	if out, _, code = runMain(t, "import", "backups", "--reread", "--db", db, "../../ingest/backups/testdata/export_sqlcmd.csv"); code != 0 ||
		!strings.Contains(out, "added 0, duplicates 4") {
		t.Fatalf("re-import: %s", out)
	}
	// Detection tells a backup export from a restore history without the kind.
	if out, stderr, code = runMain(t, "import", "--db", db, "../../ingest/backups/testdata/dbatools_raw_en-US.csv"); code != 0 {
		t.Fatalf("auto-detected import exit %d: %s %s", code, stderr, out)
	}
	out, stderr, code = runMain(t, "plan", "--db", db, "--instance", `SQL01\PROD`, "--database", "Sales, EU", "--format", "sql",
		"--data-path", `E:\Data`, "--log-path", `F:\Log`)
	if code != 0 {
		t.Fatalf("plan exit %d: %s", code, stderr)
	}
	for _, want := range []string{"RESTORE DATABASE [Sales, EU] FROM DISK = N'\\\\backup01\\sql\\Sales_EU_FULL_1.bak', DISK = N'\\\\backup01\\sql\\Sales_EU_FULL_2.bak'",
		"MOVE N'Sales' TO N'E:\\Data\\Sales, EU.mdf'", "MOVE N'Sales_log' TO N'F:\\Log\\Sales, EU_log.ldf'",
		"RESTORE LOG [Sales, EU] FROM URL = N'https://acct.blob.core.windows.net/sql/Sales_EU_LOG_2215.trn'",
		"RESTORE DATABASE [Sales, EU] WITH RECOVERY;"} {
		if !strings.Contains(out, want) {
			t.Errorf("script lacks %s:\n%s", want, out)
		}
	}
	out, _, code = runMain(t, "plan", "--db", db, "--instance", `SQL01\PROD`, "--database", "Sales, EU", "--format", "json")
	var p struct {
		Steps []struct {
			Kind string `json:"kind"`
		} `json:"steps"`
		Script string `json:"script"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &p) != nil || len(p.Steps) != 4 || p.Steps[1].Kind != "diff" || p.Script == "" {
		t.Errorf("json: %d %.300s", code, out)
	}
	out, _, code = runMain(t, "plan", "--db", db, "--instance", "SQL02", "--database", "Sales")
	if code != 0 || !strings.Contains(out, "Restore plan for Sales") || !strings.Contains(out, "Total:") {
		t.Errorf("text (dbatools history): %d %s", code, out)
	}
	_, stderr, code = runMain(t, "plan", "--db", db, "--instance", "SQL02", "--database", "Nope")
	if code == 0 || !strings.Contains(stderr, "no backup history") {
		t.Errorf("unknown database: %d %s", code, stderr)
	}
	_, stderr, code = runMain(t, "plan", "--db", db, "--instance", "SQL02", "--database", "Sales", "--at", "someday")
	if code != 2 || !strings.Contains(stderr, "--at") {
		t.Errorf("bad --at: %d %s", code, stderr)
	}
	out, _, code = runMain(t, "import", "backups", "--db", db, "../../ingest/backups/testdata/dbatools_default.csv")
	if code == 0 || !strings.Contains(out, "-IncludeCopyOnly -Raw | Export-Csv") {
		t.Errorf("default dbatools export: %d %s", code, out)
	}
}

// Read-only means read-only: plan in a folder without a warehouse says so
// and creates none; after an import of backups alone (a new warehouse's
// first derivation) nothing is left pending, so the first plan completes
// nothing; and the names a user types reach the stored ones as SQL Server
// compares them (brackets, spaces at the ends, case).
func TestPlanIsReadOnlyAndMatchesNames(t *testing.T) {
	db := newDB(t, "w.db")
	// (A PostgreSQL warehouse's database exists before any command runs:
	// what is missing there is a file's matter.)
	if !storetest.OnPostgres() {
		_, stderr, code := runMain(t, "plan", "--db", db, "--instance", "X", "--database", "Y")
		if code == 0 || !strings.Contains(stderr, "no warehouse at") {
			t.Errorf("plan without a warehouse: exit %d, %s", code, stderr)
		}
		if _, err := os.Stat(db); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("plan created the warehouse: %v", err)
		}
	}
	if out, stderr, code := runMain(t, "import", "backups", "--db", db, "../../ingest/backups/testdata/export_sqlcmd.csv"); code != 0 {
		t.Fatalf("import exit %d: %s %s", code, stderr, out)
	}
	for _, name := range []string{"Sales, EU", "[Sales, EU]", "sales, eu ", " [SALES, EU] "} {
		out, stderr, code := runMain(t, "plan", "--db", db, "--instance", `sql01\prod`, "--database", name)
		if code != 0 || !strings.Contains(out, "Restore plan for Sales, EU") {
			t.Errorf("--database %q: exit %d: %s%s", name, code, stderr, out)
		}
		if strings.Contains(stderr, "completing what an interrupted run left") {
			t.Errorf("--database %q: the import left work pending: %s", name, stderr)
		}
	}
}

// TestPlanSeesTheRestoreInFlight: the demo's 14.6 TiB Warehouse restore,
// running and slowed after 55 %, informs its database's plan (issue 38):
// the plan names it and what its own recent pace says of its whole
// duration (about 11.5 h), beside the estimate from other instances.
func TestPlanSeesTheRestoreInFlight(t *testing.T) {
	db := newDB(t, "w.db")
	if _, stderr, code := runMain(t, "demo", "--db", db); code != 0 {
		t.Fatalf("demo: %s", stderr)
	}
	out, stderr, code := runMain(t, "plan", "--db", db, "--instance", `RPT-SQL01\REPORTING`, "--database", "Warehouse", "--format", "json")
	if code != 0 {
		t.Fatalf("plan: %s", stderr)
	}
	var p struct {
		InFlight *struct {
			Percent  float64 `json:"percent"`
			Expected float64 `json:"expected_s"`
			Sentence string  `json:"sentence"`
		} `json:"in_flight"`
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if p.InFlight == nil || p.InFlight.Percent < 55 || p.InFlight.Expected < 8*3600 || p.InFlight.Expected > 16*3600 {
		t.Fatalf("in flight: %+v, want the running restore past 55 %% taking 8–16 h at its recent pace", p.InFlight)
	}
	if !slices.ContainsFunc(p.Notes, func(n string) bool { return strings.Contains(n, "is in flight") }) {
		t.Errorf("the plan's notes do not name the restore in flight: %q", p.Notes)
	}
}
