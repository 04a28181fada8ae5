package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestAnalyzeRederivesOnlyWhenAsked tampers with derived restore rows behind
// the store's back (content_hash too, which reconciliation compares to skip
// unchanged rows): a plain analyze keeps the derived rows as every import
// left them (re-deriving a large warehouse takes long), and --rederive
// rebuilds them from the raw facts.
func TestAnalyzeRederivesOnlyWhenAsked(t *testing.T) {
	dbPath := newDB(t, "w.db")
	logs, _ := filepath.Glob("../../ingest/errorlog/testdata/full_diff_log_norecovery_2023.log")
	if _, stderr, code := runMain(t, "import", "errorlog", "--db", dbPath, "--instance", "LNX01", logs[0]); code != 0 {
		t.Fatalf("import exit %d: %s", code, stderr)
	}
	execSQL(t, dbPath, `UPDATE restore SET source_server = 'TAMPERED', content_hash = 0`)
	sources := func() []string {
		t.Helper()
		out, stderr, code := runMain(t, "restores", "--db", dbPath, "--format", "json")
		if code != 0 {
			t.Fatalf("restores exit %d: %s", code, stderr)
		}
		var rs []struct {
			SourceServer string `json:"source_server"`
		}
		if err := json.Unmarshal([]byte(out), &rs); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rs {
			got = append(got, r.SourceServer)
		}
		return got
	}
	summary := regexp.MustCompile(`^analyzed 3 restores in 3 series on 1 instances: 0 regressions, 0 improvements \(reconcile (?:< )?[0-9.]+ s, analysis (?:< )?[0-9.]+ s\)\n$`)

	out, stderr, code := runMain(t, "analyze", "--db", dbPath)
	if code != 0 {
		t.Fatalf("analyze exit %d: %s", code, stderr)
	}
	if !summary.MatchString(out) {
		t.Errorf("analyze printed %q", out)
	}
	if got := sources(); len(got) != 3 || strings.Join(got, ",") != "TAMPERED,TAMPERED,TAMPERED" {
		t.Errorf("after analyze, source servers %q: want the derived rows left as they were", got)
	}

	out, stderr, code = runMain(t, "analyze", "--rederive", "--db", dbPath)
	if code != 0 {
		t.Fatalf("analyze --rederive exit %d: %s", code, stderr)
	}
	if !summary.MatchString(out) {
		t.Errorf("analyze --rederive printed %q", out)
	}
	if got := sources(); len(got) != 3 || strings.Join(got, ",") != ",," {
		t.Errorf("after analyze --rederive, source servers %q: want them re-derived (empty: the log names none)", got)
	}

	help, _, _ := runMain(t, "analyze", "--help")
	if !strings.Contains(help, "--rederive") || !strings.Contains(help, "after an upgrade") {
		t.Errorf("analyze --help does not explain --rederive:\n%s", help)
	}
}
