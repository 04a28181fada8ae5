package messages_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/restorewatch/restorewatch/ingest/messages"
	"github.com/restorewatch/restorewatch/store"
)

// The fixtures of testdata/realworld/messages are real client output (see
// the README there for each file's origin).
const realworld = "../../testdata/realworld/messages"

func parseReal(t *testing.T, name string, opt messages.Options) (*store.Collect, messages.Stats) {
	t.Helper()
	if opt.Instance == "" {
		opt.Instance = `SQL01\PROD`
	}
	opt.File = name
	return parsePath(t, filepath.Join(realworld, name), name, opt)
}

func noRejects(t *testing.T, c *store.Collect) {
	t.Helper()
	if len(c.Rejects) != 0 {
		t.Errorf("rejects %v", c.Rejects)
	}
}

// TestRecoveryStepIsNoRestore: "RESTORE DATABASE d WITH RECOVERY" after a
// NORECOVERY chain prints "successfully processed 0 pages in N seconds" and
// reads no backup. It is neither a restore nor a reject telling the user to
// give a database name; its seconds go to the restore it completes.
func TestRecoveryStepIsNoRestore(t *testing.T) {
	c, st := parseReal(t, "tail_log_then_recovery_dbmaint2012.txt", messages.Options{At: sampleAt})
	noRejects(t, c)
	got := briefs(c.LogRestores)
	want := []brief{
		{9, "DBMaint2012", store.KindFullOrDiff, "RESTORE DATABASE", 285, 0.191, 11.634},
		{19, "DBMaint2012", store.KindLog, "RESTORE LOG", 7, 0.074, 0.666},
	}
	if !equalBriefs(got, want) {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
	if st.Ignored[messages.RuleRecoveryStep] != 1 || st.Restores != 2 {
		t.Errorf("stats %+v", st)
	}
	if len(c.LogRestores) == 2 {
		if r := c.LogRestores[1].Recovery; r == nil || r.Seconds != 1 {
			t.Errorf("recovery of the tail-log restore = %+v, want the step's 0.908 s (rounded to 1)", r)
		}
		if c.LogRestores[0].Recovery != nil {
			t.Errorf("the full restore took the recovery step: %+v", c.LogRestores[0].Recovery)
		}
	}

	// Echoed script first, output after: the step still names no backup.
	c, st = parseReal(t, "norecovery_chain_northwind.txt", messages.Options{At: sampleAt})
	noRejects(t, c)
	if len(c.LogRestores) != 3 || st.Ignored[messages.RuleRecoveryStep] != 1 {
		t.Errorf("restores %+v stats %+v", briefs(c.LogRestores), st)
	}
	for _, l := range c.LogRestores {
		if l.Pages == 0 {
			t.Errorf("a 0-page step became a restore: %+v", l)
		}
	}
}

// TestFailedUpgradeThenRecovery is a restore that failed after "100 percent
// processed" (3013, then the buffer-latch timeout 845) and the RESTORE ...
// WITH RECOVERY that then upgraded the database in 289.8 s: no restore at
// all, where the old parser stored a 0-page "full restore" of 289.8 s.
func TestFailedUpgradeThenRecovery(t *testing.T) {
	c, st := parseReal(t, "recovery_after_failed_upgrade_temprestore.txt", messages.Options{At: sampleAt})
	noRejects(t, c)
	if len(c.LogRestores) != 0 {
		t.Errorf("restores %+v, want none", briefs(c.LogRestores))
	}
	if st.Failed != 1 || st.Ignored[messages.RuleFailed(3013)] != 1 || st.Ignored[messages.RuleRecoveryStep] != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestFailedAttempts: each RESTORE that ends in 3013 is a failed attempt,
// counted under the error that caused it, never a restore or a reject.
func TestFailedAttempts(t *testing.T) {
	c, st := parseReal(t, "failed_restores.txt", messages.Options{})
	noRejects(t, c)
	if got := briefs(c.LogRestores); len(got) != 1 || got[0].Database != "Sales" || got[0].Pages != 1005 {
		t.Errorf("restores %+v, want the one that succeeded", got)
	}
	for _, msg := range []int{3201, 3241, 3154, 3159, 4305, 4330, 3203} {
		if st.Ignored[messages.RuleFailed(msg)] != 1 {
			t.Errorf("%s = %d, want 1 (ignored %v)", messages.RuleFailed(msg), st.Ignored[messages.RuleFailed(msg)], st.Ignored)
		}
	}
	if st.Failed != 7 {
		t.Errorf("failed = %d, want 7", st.Failed)
	}
}

// TestPageRestore: a page restore prints the file restore's 3014 text
// ("RESTORE DATABASE ... FILE=<name>"); its echoed PAGE = clause makes it a
// page restore.
func TestPageRestore(t *testing.T) {
	c, _ := parseReal(t, "page_restore_examplesdb.txt", messages.Options{})
	noRejects(t, c)
	var kinds []store.Kind
	for _, l := range c.LogRestores {
		kinds = append(kinds, l.Kind)
	}
	if want := []store.Kind{store.KindPage, store.KindLog, store.KindLog}; !equalKinds(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
}

// TestUntimedAreRejectedWithAdvice: captured output without stamps and
// without --at cannot be placed in time; each such restore is a reject that
// says how to date it, and the stats carry the count and the advice.
func TestUntimedAreRejectedWithAdvice(t *testing.T) {
	c, st := parseReal(t, "norecovery_chain_northwind.txt", messages.Options{})
	if len(c.LogRestores) != 0 || st.Untimed != 3 || st.UntimedAdvice == "" {
		t.Fatalf("restores %d, stats %+v", len(c.LogRestores), st)
	}
	var lines []int
	for _, r := range c.Rejects {
		lines = append(lines, r.Line)
		if !strings.Contains(r.Reason, "re-import with --at ") || !strings.Contains(r.Reason, "Northwind") {
			t.Errorf("reject %v does not say how to date it", r)
		}
	}
	if !equalInts(lines, []int{17, 20, 23}) {
		t.Errorf("reject lines %v, want the three 3014 lines", lines)
	}
}

// TestMixedEncodings: two UTF-16LE outputs concatenated (the second BOM
// lands in mid-file) and a UTF-16LE output appended to a UTF-8 file.
func TestMixedEncodings(t *testing.T) {
	c, st := parseReal(t, "concat_two_utf16_outputs.txt", messages.Options{})
	noRejects(t, c)
	var kinds []store.Kind
	for _, l := range c.LogRestores {
		kinds = append(kinds, l.Kind)
	}
	if want := []store.Kind{store.KindFullOrDiff, store.KindPage, store.KindLog, store.KindLog}; !equalKinds(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	if len(c.LogRestores) > 1 && c.LogRestores[1].Database != "ExamplesDB_PageRestore" {
		t.Errorf("second file's first restore %+v", c.LogRestores[1])
	}
	_ = st

	c, _ = parseReal(t, "utf16_pasted_into_utf8.txt", messages.Options{})
	got := briefs(c.LogRestores)
	if len(got) != 1 || got[0].Database != "IronOreSilicaPrediction_2" || got[0].Pages != 51650 {
		t.Errorf("restores %+v, want the pasted UTF-16 one (the UTF-8 part has no stamp)", got)
	}
	if len(c.Rejects) != 2 {
		t.Errorf("rejects %v, want the two undated restores of the UTF-8 part", c.Rejects)
	}

	// Non-ASCII text in the pasted UTF-16 part (the Agent text of a
	// Russian server) keeps its letters.
	head, err := os.ReadFile(filepath.Join(realworld, "tail_log_then_recovery_dbmaint2012.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tail, err := os.ReadFile(filepath.Join("testdata", "agent_localized.txt"))
	if err != nil {
		t.Fatal(err)
	}
	in := append(head, utf16LE(string(tail))...)
	var col store.Collect
	if _, err := messages.Parse(context.Background(), bytes.NewReader(in), messages.Options{File: "x", Instance: "S", At: sampleAt}, &col); err != nil {
		t.Fatal(err)
	}
	var dbs []string
	for _, l := range col.LogRestores {
		dbs = append(dbs, l.Database)
	}
	if want := []string{"DBMaint2012", "DBMaint2012", "Lager", "Склад"}; strings.Join(dbs, ",") != strings.Join(want, ",") || len(col.Rejects) != 0 {
		t.Errorf("databases %q, want %q; rejects %v", dbs, want, col.Rejects)
	}
}

// utf16LE writes s as SSMS saves "Unicode": a byte-order mark, UTF-16LE, CRLF.
func utf16LE(s string) []byte {
	out := []byte{0xFF, 0xFE}
	for _, u := range utf16.Encode([]rune(strings.ReplaceAll(s, "\n", "\r\n"))) {
		out = append(out, byte(u), byte(u>>8))
	}
	return out
}

// TestLocalizedRealworld runs the parser over H4b's localized fixtures: every
// RESTORE 3014 line of expect.tsv in a messages or Agent file is a restore,
// and every "stat" line of unrecognised.txt a reject that says why.
func TestLocalizedRealworld(t *testing.T) {
	dir := "../../testdata/realworld/localized"
	f, err := os.Open(filepath.Join(dir, "expect.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]int{}
	stats := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		col := strings.Split(sc.Text(), "\t")
		if len(col) < 5 || strings.HasPrefix(col[0], "#") {
			continue
		}
		switch {
		case col[4] == "stat":
			stats[col[0]]++
		case col[3] == "3014" && strings.HasPrefix(col[4], "RESTORE ") &&
			(strings.HasSuffix(col[0], ".messages.txt") || strings.HasSuffix(col[0], ".agent.txt")):
			want[col[0]]++
		}
	}
	if len(want) == 0 {
		t.Fatal("expect.tsv lists no restores")
	}
	for name, n := range want {
		c, _ := parsePath(t, filepath.Join(dir, name), name, messages.Options{Instance: "S", At: sampleAt})
		if len(c.LogRestores) != n {
			t.Errorf("%s: %d restores, want %d (rejects %v)", name, len(c.LogRestores), n, c.Rejects)
		}
	}
	for name, n := range stats {
		c, _ := parsePath(t, filepath.Join(dir, name), name, messages.Options{Instance: "S", At: sampleAt})
		got := 0
		for _, r := range c.Rejects {
			if strings.Contains(r.Reason, "unrecognised language") {
				got++
			}
		}
		if got != n || len(c.LogRestores) != 0 {
			t.Errorf("%s: %d unrecognised-language rejects (want %d), restores %d; rejects %v", name, got, n, len(c.LogRestores), c.Rejects)
		}
	}
}

func equalBriefs(a, b []brief) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalKinds(a, b []store.Kind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
