package messages_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/messages"
	"github.com/restorewatch/restorewatch/ingest/unwrap"
	"github.com/restorewatch/restorewatch/store"
)

// The fixtures of testdata/issue39 (its README names what each is modelled
// on).
func parseIssue39(t *testing.T, rel string) (*store.Collect, messages.Stats) {
	t.Helper()
	f, err := os.Open(filepath.Join("../../testdata/issue39", rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var c store.Collect
	st, err := messages.Parse(context.Background(), f, messages.Options{File: filepath.Base(rel), Instance: "S", At: sampleAt}, &c)
	if err != nil {
		t.Fatalf("Parse(%s): %v", rel, err)
	}
	return &c, st
}

// TestBatchPairsResultsInOrder: a batch echoes two RESTORE DATABASE
// statements, then prints two 3014 lines and no "Processed" line: each
// result is its statement's, in order.
func TestBatchPairsResultsInOrder(t *testing.T) {
	c, _ := parseIssue39(t, "SQL01/invoke_sqlcmd_two_statements.txt")
	noRejects(t, c)
	want := []brief{
		{7, "SalesA", store.KindFullOrDiff, "RESTORE DATABASE", 4521, 1.234, 28.617},
		{10, "SalesB", store.KindFullOrDiff, "RESTORE DATABASE", 1032, 0.412, 19.568},
	}
	if got := briefs(c.LogRestores); !equalBriefs(got, want) {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
}

// TestBatchThatCannotPairRejectsEach: the results come in another order
// than the statements (a RESTORE LOG result where the RESTORE DATABASE
// statement stands): neither is stored, each is rejected at its line.
func TestBatchThatCannotPairRejectsEach(t *testing.T) {
	c, _ := parseIssue39(t, "SQL01/invoke_sqlcmd_unpairable.txt")
	if len(c.LogRestores) != 0 {
		t.Errorf("restores %+v", c.LogRestores)
	}
	var lines []int
	for _, r := range c.Rejects {
		lines = append(lines, r.Line)
	}
	if !slices.Equal(lines, []int{5, 6}) || !strings.Contains(c.Rejects[0].Reason, "echoed at line 2") {
		t.Errorf("rejects %+v", c.Rejects)
	}
}

// TestClientPrefixesHideNothing: impacket's INFO(S): Line N: prefixes and
// SQL> prompt, and numbered Command N: labels, come off before the
// statement is read, so a _Full_ / _Diff_ file name gives the kind.
func TestClientPrefixesHideNothing(t *testing.T) {
	c, st := parseIssue39(t, "HRSQL/impacket_mssqlclient_restore.txt")
	noRejects(t, c)
	want := []brief{
		{4, "HR", store.KindFull, "RESTORE DATABASE", 346, 0.121, 22.337},
		{8, "HR", store.KindLog, "RESTORE LOG", 7, 0.010, 5.468},
		{10, "HR", store.KindLog, "RESTORE LOG", 0, 0.005, 0},
	}
	if got := briefs(c.LogRestores); !equalBriefs(got, want) {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
	if !slices.Contains(st.Wrappers, unwrap.Impacket) {
		t.Errorf("wrappers %q", st.Wrappers)
	}
	c, st = parseIssue39(t, "HRSQL/command_labels_full_bak.txt")
	noRejects(t, c)
	want = []brief{
		{8, "Payroll", store.KindFull, "RESTORE DATABASE", 1483, 0.402, 28.821},
		{12, "Payroll", store.KindDiff, "RESTORE DATABASE", 58, 0.031, 14.616},
	}
	if got := briefs(c.LogRestores); !equalBriefs(got, want) {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
	if !slices.Contains(st.Wrappers, unwrap.Command) || st.Ignored[messages.RuleRecoveryStep] != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestEmptyLogNamedByOrder: an empty log backup's restore prints no
// "Processed" line; after restores of one database only, it is that
// database's.
func TestEmptyLogNamedByOrder(t *testing.T) {
	c, _ := parseIssue39(t, "SQL01/empty_log_after_chain.txt")
	noRejects(t, c)
	want := []brief{
		{3, "Ledger", store.KindFullOrDiff, "RESTORE DATABASE", 1483, 0.402, 28.821},
		{6, "Ledger", store.KindLog, "RESTORE LOG", 9, 0.012, 5.859},
		{7, "Ledger", store.KindLog, "RESTORE LOG", 0, 0.004, 0},
	}
	if got := briefs(c.LogRestores); !equalBriefs(got, want) {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
	if n := len(c.LogRestores); n == 3 && !strings.Contains(c.LogRestores[2].Phases[0].Text, "named by the output's order") {
		t.Errorf("phases %+v", c.LogRestores[2].Phases)
	}
}

// TestOneLineBatch: statements echoed on one line, separated by ";", are
// paired with their results in order like statements on lines of their own.
func TestOneLineBatch(t *testing.T) {
	text := "RESTORE DATABASE [A] FROM DISK = N'a.bak' WITH REPLACE; RESTORE LOG [A] FROM DISK = N'a.trn' WITH NORECOVERY;\n" +
		"RESTORE DATABASE successfully processed 100 pages in 0.100 seconds (7.812 MB/sec).\n" +
		"RESTORE LOG successfully processed 0 pages in 0.010 seconds (0.000 MB/sec).\n"
	var c store.Collect
	if _, err := messages.Parse(context.Background(), strings.NewReader(text), messages.Options{File: "b", Instance: "S", At: sampleAt}, &c); err != nil {
		t.Fatal(err)
	}
	noRejects(t, &c)
	want := []brief{
		{2, "A", store.KindFullOrDiff, "RESTORE DATABASE", 100, 0.1, 7.812},
		{3, "A", store.KindLog, "RESTORE LOG", 0, 0.01, 0},
	}
	if got := briefs(c.LogRestores); !equalBriefs(got, want) {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
}

// TestScriptWithoutOutputIsSaid: statements alone (a script, dbatools'
// -OutputScriptOnly) import nothing, and the summary says why.
func TestScriptWithoutOutputIsSaid(t *testing.T) {
	text := "RESTORE DATABASE [A] FROM DISK = N'a.bak' WITH NORECOVERY, REPLACE\nRESTORE LOG [A] FROM DISK = N'a.trn' WITH RECOVERY\n"
	var c store.Collect
	st, err := messages.Parse(context.Background(), strings.NewReader(text), messages.Options{File: "s", Instance: "S", At: sampleAt}, &c)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.LogRestores) != 0 || len(c.Rejects) != 0 || st.Ignored[messages.RuleNoResult] != 2 {
		t.Errorf("restores %d, rejects %v, ignored %v", len(c.LogRestores), c.Rejects, st.Ignored)
	}
}
