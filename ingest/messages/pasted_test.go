package messages_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/messages"
	"github.com/restorewatch/restorewatch/ingest/unwrap"
	"github.com/restorewatch/restorewatch/store"
)

// The fixtures of testdata/pasted are real output in the shapes DBAs paste
// it (the README there names each source).
const pasted = "../../testdata/pasted"

func parsePasted(t *testing.T, rel string, opt messages.Options) (*store.Collect, messages.Stats) {
	t.Helper()
	f, err := os.Open(filepath.Join(pasted, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opt.File = filepath.Base(rel)
	if opt.At.IsZero() {
		opt.At = sampleAt
	}
	var c store.Collect
	st, err := messages.Parse(context.Background(), f, opt, &c)
	if err != nil {
		t.Fatalf("Parse(%s): %v", rel, err)
	}
	return &c, st
}

// TestSqlcmdHeadersNameTheServer: sqlcmd -m-1 output, tab-indented, names
// its server in every header; no --instance is needed.
func TestSqlcmdHeadersNameTheServer(t *testing.T) {
	c, st := parsePasted(t, "handover/sqlcmd_m1_tabs_sahsuland.txt", messages.Options{})
	noRejects(t, c)
	if len(c.LogRestores) != 1 || c.LogRestores[0].Instance != `PETER-PC\SAHSU` || c.LogRestores[0].Database != "sahsuland" ||
		c.LogRestores[0].Pages != 45662 {
		t.Fatalf("restores %+v", c.LogRestores)
	}
	if st.Instance != `PETER-PC\SAHSU` || st.InstanceSource != "sqlcmd_header" {
		t.Errorf("instance %q from %q", st.Instance, st.InstanceSource)
	}
	// --instance still wins.
	c, _ = parsePasted(t, "handover/sqlcmd_m1_tabs_sahsuland.txt", messages.Options{Instance: "GIVEN"})
	if len(c.LogRestores) != 1 || c.LogRestores[0].Instance != "GIVEN" {
		t.Errorf("restores %+v", c.LogRestores)
	}
}

// TestWrappersRemoved: docker compose's service prefix inside a Markdown
// fence, and a blog's HTML (<pre>, <em>) around SSMS output.
func TestWrappersRemoved(t *testing.T) {
	c, st := parsePasted(t, "clinic-sqlserver/compose_logs_clinicdb.md", messages.Options{Instance: "S"})
	noRejects(t, c)
	if len(c.LogRestores) != 1 || c.LogRestores[0].Database != "ClinicDB" || c.LogRestores[0].Pages != 7777 {
		t.Errorf("restores %+v", c.LogRestores)
	}
	if strings.Join(st.Wrappers, "|") != unwrap.Fence+"|"+unwrap.Compose {
		t.Errorf("wrappers %q", st.Wrappers)
	}
	c, st = parsePasted(t, "mikefrobbins-sqlexpress/northwind_post.html", messages.Options{Instance: "S"})
	noRejects(t, c)
	got := briefs(c.LogRestores)
	want := []brief{
		{18, "Northwind", store.KindFullOrDiff, "RESTORE DATABASE", 394, 0.335, 9.168},
		{21, "Northwind", store.KindLog, "RESTORE LOG", 2, 0.012, 1.057},
		{24, "Northwind", store.KindLog, "RESTORE LOG", 9, 0.020, 3.515},
	}
	if !equalBriefs(got, want) {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
	if st.Ignored[messages.RuleRecoveryStep] != 1 || len(st.Wrappers) != 1 || st.Wrappers[0] != unwrap.HTML {
		t.Errorf("stats %+v", st)
	}
}

// TestZeroPageRestores: a 0-page RESTORE LOG of an empty log backup is a
// restore, and so is a METADATA_ONLY restore of a SQL Server 2022 snapshot
// backup (a full, 0 pages read); only the bare WITH RECOVERY is a step.
func TestZeroPageRestores(t *testing.T) {
	c, st := parsePasted(t, "mikefrobbins-sqlexpress/empty_log_backup_then_recovery.txt", messages.Options{Instance: "S"})
	noRejects(t, c)
	if got, want := briefs(c.LogRestores), []brief{{7, "Northwind", store.KindLog, "RESTORE LOG", 0, 0.011, 0}}; !equalBriefs(got, want) {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
	if st.Ignored[messages.RuleRecoveryStep] != 1 {
		t.Errorf("stats %+v", st)
	}
	// The lab builds the statement in $Query; its database is $DbName
	// (TPCC100), which --database supplies.
	c, st = parsePasted(t, "Windows1/snapshot_metadata_only_tpcc100.md", messages.Options{Instance: "S", Database: "TPCC100"})
	noRejects(t, c)
	if got, want := briefs(c.LogRestores), []brief{{11, "TPCC100", store.KindFull, "RESTORE DATABASE", 0, 0.350, 0}}; !equalBriefs(got, want) {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
	if st.Ignored[messages.RuleRecoveryStep] != 0 || !strings.Contains(strings.Join(st.Wrappers, "|"), unwrap.Verbose) {
		t.Errorf("stats %+v", st)
	}
}

// TestDifferentialAfterNoRecoveryFull: course notes that restore FILE = 1
// WITH NORECOVERY, then FILE = 9 of the same database before any log: the
// second is a differential, which makes the first its full base. The
// client printed the name inside doubled quotes (”dbVendas'); the MB/sec
// of the first line lost its decimal point, which the parser keeps as
// stated (derivation recomputes it).
func TestDifferentialAfterNoRecoveryFull(t *testing.T) {
	c, st := parsePasted(t, "W10-VILA22/alura_dbvendas_ptbr.txt", messages.Options{Instance: "S"})
	noRejects(t, c)
	want := []brief{
		{16, "dbVendas", store.KindFull, "RESTORE DATABASE", 1169, 0.089, 102544},
		{34, "dbVendas", store.KindDiff, "RESTORE DATABASE", 337, 0.198, 13.264},
	}
	if got := briefs(c.LogRestores); !equalBriefs(got, want) {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
	if st.Untimed != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestUntimedLogLineInClientText: an error-log completion line quoted
// without its stamp is rejected at its line, never skipped in silence.
func TestUntimedLogLineInClientText(t *testing.T) {
	c, _ := parsePasted(t, "kb940126/kb940126_placeholders.txt", messages.Options{Instance: "S"})
	if len(c.Rejects) != 1 || c.Rejects[0].Line != 2 || !strings.Contains(c.Rejects[0].Reason, "without a usable timestamp") {
		t.Errorf("rejects %v", c.Rejects)
	}
}
