package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store/human"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// TestReadCommandsNeedAWarehouse: a command that only reads (or analyses
// what is there) says how to make a warehouse and leaves no file behind.
func TestReadCommandsNeedAWarehouse(t *testing.T) {
	storetest.SQLiteOnly(t, "a warehouse file that does not exist yet and must not be left behind; a PostgreSQL warehouse's database exists before any command runs")
	dir := t.TempDir()
	db := filepath.Join(dir, "missing.db")
	for _, args := range [][]string{
		{"restores"},
		{"restores", "--format", "json"},
		{"regressions"},
		{"analyze"},
		{"report", "--regression", "1", "-o", filepath.Join(dir, "r.html")},
		{"backup", "-o", filepath.Join(dir, "copy.db")},
	} {
		_, stderr, code := runMain(t, append(args, "--db", db)...)
		want := `no warehouse at ` + db + `: run "restorewatch import …" or "restorewatch demo"`
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", args, code, stderr, want)
		}
		if _, err := os.Stat(db); err == nil {
			t.Fatalf("%v created %s", args, db)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files left behind: %v", entries)
	}
	// A command that writes still creates one.
	if _, stderr, code := runMain(t, "import", "errorlog", "--db", db, "--instance", "LNX01",
		"../../ingest/errorlog/testdata/full_diff_log_norecovery_2023.log"); code != 0 {
		t.Fatalf("import exit %d: %s", code, stderr)
	}
	if out, stderr, code := runMain(t, "restores", "--db", db); code != 0 || !strings.Contains(out, "SQLTestDB") {
		t.Errorf("restores after import: exit %d, %s%s", code, out, stderr)
	}
}

// TestUsage: bare restorewatch and restorewatch help print the usage and
// exit 0; report's usage says --regression and --builds are alternatives.
func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"help"}} {
		out, stderr, code := runMain(t, args...)
		if code != 0 {
			t.Errorf("%q: exit %d (%s), want 0", args, code, stderr)
		}
		for _, want := range []string{"Usage: restorewatch <command>", "Commands:", "restores [flags]", "import <kind-or-path>",
			"report (--regression=ID | --builds=A,B) --out=FILE"} {
			if !strings.Contains(out, want) {
				t.Errorf("%q: usage lacks %q:\n%s", args, want, out)
			}
		}
	}
	for _, args := range [][]string{{"help", "report"}, {"report", "--help"}} {
		out, _, code := runMain(t, args...)
		if code != 0 || !strings.Contains(out, "Usage: restorewatch report (--regression=ID | --builds=A,B) --out=FILE [flags]") {
			t.Errorf("%q: exit %d, usage:\n%s", args, code, out)
		}
	}
	if _, stderr, code := runMain(t, "report", "-o", "x.html"); code != 2 || !strings.Contains(stderr, "--regression=ID or --builds=A,B") {
		t.Errorf("report without either: exit %d, %q", code, stderr)
	}
	if _, _, code := runMain(t, "bogus"); code != 2 {
		t.Errorf("unknown command: exit %d, want 2", code)
	}
}

// restoreJSON is the part of a restore row these tests read.
type restoreJSON struct {
	ID        int64    `json:"id"`
	Instance  string   `json:"instance"`
	Database  string   `json:"database"`
	Kind      string   `json:"kind"`
	At        string   `json:"at"`
	DurationS *float64 `json:"duration_s"`
}

func listJSON(t *testing.T, args ...string) ([]restoreJSON, string) {
	t.Helper()
	out, stderr, code := runMain(t, append([]string{"restores", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("restores %v: exit %d: %s", args, code, stderr)
	}
	var rs []restoreJSON
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatalf("restores %v: %v", args, err)
	}
	return rs, stderr
}

// tableRows splits the restores table into its cells (tabwriter pads with
// at least two spaces; no cell holds two in a row).
func tableRows(out string) [][]string {
	var rows [][]string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n")[1:] {
		if strings.HasPrefix(l, "showing ") || strings.HasPrefix(l, "(") {
			continue
		}
		rows = append(rows, regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(l), -1))
	}
	return rows
}

// TestRestoresList runs the list over the demo fleet: the newest 50 by
// default with a line saying how many there are, --limit and --all, one
// duration format, filters by prefix and case, and messages that say what
// exists when a filter matches nothing.
func TestRestoresList(t *testing.T) {
	db := newDB(t, "w.db")
	if _, stderr, code := runMain(t, "demo", "--db", db); code != 0 {
		t.Fatalf("demo: exit %d: %s", code, stderr)
	}
	all, note := listJSON(t, "--db", db, "--all")
	if len(all) <= defaultRestores || note != "" {
		t.Fatalf("--all: %d restores, note %q", len(all), note)
	}
	instances := map[string]int{}
	for _, r := range all {
		instances[r.Instance]++
	}

	t.Run("default 50", func(t *testing.T) {
		out, _, code := runMain(t, "restores", "--db", db)
		rows := tableRows(out)
		want := "showing the newest 50 of " + human.Count(int64(len(all))) + " (--all for every one, --limit N for more)"
		if code != 0 || len(rows) != 50 || !strings.Contains(out, want) {
			t.Errorf("exit %d, %d rows; want 50 and %q:\n%s", code, len(rows), want, out)
		}
		rs, note := listJSON(t, "--db", db)
		if len(rs) != 50 || !strings.Contains(note, want) {
			t.Errorf("json: %d rows, stderr %q", len(rs), note)
		}
		for i := range rs { // the newest, newest first
			if rs[i].ID != all[i].ID {
				t.Fatalf("json row %d is restore %d, want %d (the newest first)", i, rs[i].ID, all[i].ID)
			}
		}
		// One duration format: the table's durations are human.Duration of
		// the JSON's seconds, never "6:16".
		for i, cells := range rows {
			d := "unknown"
			if rs[i].DurationS != nil {
				d = human.Duration(*rs[i].DurationS)
			}
			if len(cells) < 5 || cells[4] != d {
				t.Errorf("row %d: duration cell %q, want %q", i, cells[4], d)
			}
			if regexp.MustCompile(`^\d+:\d\d`).MatchString(cells[4]) {
				t.Errorf("row %d: clock-style duration %q", i, cells[4])
			}
		}
	})

	t.Run("limit and all", func(t *testing.T) {
		if rs, note := listJSON(t, "--db", db, "--limit", "7"); len(rs) != 7 || note == "" {
			t.Errorf("--limit 7: %d rows, note %q", len(rs), note)
		}
		if out, _, _ := runMain(t, "restores", "--db", db, "--all"); len(tableRows(out)) != len(all) || strings.Contains(out, "showing") {
			t.Errorf("--all: %d rows, want %d and no note", len(tableRows(out)), len(all))
		}
		if _, _, code := runMain(t, "restores", "--db", db, "--all", "--limit", "5"); code != 2 {
			t.Errorf("--all with --limit: exit %d, want 2", code)
		}
		if _, stderr, code := runMain(t, "restores", "--db", db, "--limit=-1"); code != 2 || !strings.Contains(stderr, "--limit -1") {
			t.Errorf("--limit -1: exit %d, %q", code, stderr)
		}
	})

	t.Run("instance by case and prefix", func(t *testing.T) {
		var name string
		for n := range instances {
			if name == "" || n < name {
				name = n
			}
		}
		typed := strings.ToLower(name[:len(name)-2]) // a prefix, in the wrong case
		var want []string
		for n := range instances {
			if strings.HasPrefix(strings.ToLower(n), typed) {
				want = append(want, n)
			}
		}
		rs, _ := listJSON(t, "--db", db, "--all", "--instance", typed)
		got := map[string]int{}
		for _, r := range rs {
			got[r.Instance]++
		}
		for _, n := range want {
			if got[n] != instances[n] {
				t.Errorf("--instance %s: %d restores of %s, want %d", typed, got[n], n, instances[n])
			}
		}
		if len(got) != len(want) {
			t.Errorf("--instance %s: instances %v, want %v", typed, got, want)
		}
	})

	t.Run("prefix of several instances", func(t *testing.T) {
		byFirst := map[string][]string{}
		for n := range instances {
			k := strings.ToLower(n[:1])
			byFirst[k] = append(byFirst[k], n)
		}
		var typed string
		for k, ns := range byFirst {
			if len(ns) >= 2 && (typed == "" || k < typed) {
				typed = k
			}
		}
		if typed == "" {
			t.Fatal("the demo has no two instances sharing a first letter")
		}
		rs, _ := listJSON(t, "--db", db, "--all", "--instance", typed)
		want := 0
		for _, n := range byFirst[typed] {
			want += instances[n]
		}
		if len(rs) != want {
			t.Errorf("--instance %s (%v): %d restores, want %d", typed, byFirst[typed], len(rs), want)
		}
		for i := 1; i < len(rs); i++ {
			if rs[i].At > rs[i-1].At {
				t.Fatalf("--instance %s: restore %d (%s) after %d (%s): want newest first", typed, rs[i].ID, rs[i].At, rs[i-1].ID, rs[i-1].At)
			}
		}
		limited, note := listJSON(t, "--db", db, "--limit", "10", "--instance", typed)
		if len(limited) != 10 || !slices.EqualFunc(limited, rs[:10], func(a, b restoreJSON) bool { return a.ID == b.ID }) ||
			!strings.Contains(note, "of "+human.Count(int64(want))) {
			t.Errorf("--limit 10 --instance %s: not the 10 newest of the %d (note %q)", typed, want, note)
		}
	})

	t.Run("database by case and prefix", func(t *testing.T) {
		r0 := all[0]
		typed := strings.ToUpper(r0.Database[:len(r0.Database)-1])
		rs, _ := listJSON(t, "--db", db, "--all", "--instance", r0.Instance, "--database", typed)
		want := 0
		for _, r := range all {
			if r.Instance == r0.Instance && strings.HasPrefix(strings.ToUpper(r.Database), typed) {
				want++
			}
		}
		if len(rs) == 0 || len(rs) != want {
			t.Errorf("--database %s: %d restores, want %d", typed, len(rs), want)
		}
	})

	t.Run("no match says what exists", func(t *testing.T) {
		_, stderr, code := runMain(t, "restores", "--db", db, "--instance", "NOPE")
		if code != 1 || !strings.Contains(stderr, "no instance NOPE; instances: ") {
			t.Fatalf("--instance NOPE: exit %d, %q", code, stderr)
		}
		for n := range instances {
			if !strings.Contains(stderr, n) {
				t.Errorf("--instance NOPE does not list %s: %q", n, stderr)
			}
		}
		for _, blank := range []string{" ", "\x01"} {
			if _, stderr, code := runMain(t, "restores", "--db", db, "--instance", blank); code != 2 || !strings.Contains(stderr, "give a name") {
				t.Errorf("--instance %q: exit %d, %q; want 2, not every instance", blank, code, stderr)
			}
			if _, stderr, code := runMain(t, "restores", "--db", db, "--database", blank); code != 2 || !strings.Contains(stderr, "give a name") {
				t.Errorf("--database %q: exit %d, %q; want 2, not every database", blank, code, stderr)
			}
		}
		name := all[0].Instance
		// A near miss is suggested first.
		miss := name[:len(name)-1] + "Z"
		if _, stderr, _ := runMain(t, "restores", "--db", db, "--instance", miss); !strings.Contains(stderr, "instances: "+name+",") {
			t.Errorf("--instance %s: %q; want %s first", miss, stderr, name)
		}
		_, stderr, code = runMain(t, "restores", "--db", db, "--instance", name, "--database", "NOPE")
		if code != 1 || !strings.Contains(stderr, "no database NOPE on "+name+"; databases: ") || !strings.Contains(stderr, all[0].Database) {
			t.Errorf("--database NOPE: exit %d, %q", code, stderr)
		}
		// An instance without some kind of restore: the empty list says
		// which kinds it has.
		kinds := map[string]map[string]bool{}
		for _, r := range all {
			if kinds[r.Instance] == nil {
				kinds[r.Instance] = map[string]bool{}
			}
			kinds[r.Instance][r.Kind] = true
		}
		var missing string
		for n, ks := range kinds {
			for _, k := range []string{"page", "file", "diff", "log", "full"} {
				if !ks[k] && missing == "" {
					name, missing = n, k
				}
			}
		}
		if missing == "" {
			t.Fatal("every demo instance has every kind of restore")
		}
		out, _, code := runMain(t, "restores", "--db", db, "--instance", name, "--kind", missing)
		if code != 0 || !strings.Contains(out, "(no restores of kind "+missing+" on "+name+" (kinds there: ") {
			t.Errorf("--kind %s: exit %d, %q", missing, code, out)
		}
	})

	t.Run("from and to", func(t *testing.T) {
		newest, _ := time.Parse(time.RFC3339Nano, all[0].At)
		day := newest.Format(time.DateOnly)
		rs, _ := listJSON(t, "--db", db, "--all", "--from", day, "--to", day)
		want := 0
		for _, r := range all {
			if strings.HasPrefix(r.At, day) {
				want++
			}
		}
		if len(rs) == 0 || len(rs) != want {
			t.Errorf("--from %s --to %s: %d restores, want %d", day, day, len(rs), want)
		}
		_, stderr, code := runMain(t, "restores", "--db", db, "--from", "2026-05-01", "--to", "2026-04-01")
		if code != 2 || !strings.Contains(stderr, "--from 2026-05-01 is after --to 2026-04-01") {
			t.Errorf("--from after --to: exit %d, %q", code, stderr)
		}
		if _, stderr, code := runMain(t, "restores", "--db", db, "--from", "May 1"); code != 2 || !strings.Contains(stderr, "not a date") {
			t.Errorf("--from May 1: exit %d, %q", code, stderr)
		}
	})
}

// TestRegressionsInWords: the regressions table names factors in words and
// its cost as a duration; JSON and CSV keep the keys and add the words.
func TestRegressionsInWords(t *testing.T) {
	db := newDB(t, "w.db")
	if _, stderr, code := runMain(t, "demo", "--db", db); code != 0 {
		t.Fatalf("demo: exit %d: %s", code, stderr)
	}
	out, stderr, code := runMain(t, "regressions", "--db", db, "--format", "json")
	if code != 0 {
		t.Fatalf("regressions: exit %d: %s", code, stderr)
	}
	var regs []struct {
		ID               int64   `json:"id"`
		HoursLostPerYear float64 `json:"hours_lost_per_year"`
		ChangedFactors   []struct {
			Factor      string `json:"factor"`
			FactorLabel string `json:"factor_label"`
		} `json:"changed_factors"`
	}
	if err := json.Unmarshal([]byte(out), &regs); err != nil {
		t.Fatal(err)
	}
	table, _, _ := runMain(t, "regressions", "--db", db)
	labelled := 0
	for _, r := range regs {
		for _, f := range r.ChangedFactors {
			labelled++
			if f.FactorLabel != human.FactorLabel(f.Factor) || f.FactorLabel == f.Factor {
				t.Errorf("regression %d: factor %q labelled %q", r.ID, f.Factor, f.FactorLabel)
			}
			if !strings.Contains(table, f.FactorLabel+": ") {
				t.Errorf("table lacks %q", f.FactorLabel)
			}
			if strings.Contains(table, f.Factor+": ") {
				t.Errorf("table shows the key %q", f.Factor)
			}
		}
		// Hours lost read as on the web ("2,090 h", never "87 d 2 h").
		if r.HoursLostPerYear > 0 && !strings.Contains(table, human.Hours(r.HoursLostPerYear)) {
			t.Errorf("table lacks regression %d's %s a year", r.ID, human.Hours(r.HoursLostPerYear))
		}
	}
	if labelled == 0 {
		t.Fatal("the demo's regressions changed no factor")
	}
	out, _, _ = runMain(t, "regressions", "--db", db, "--format", "csv")
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(recs[0], "changed_factor_labels")
	keys := slices.Index(recs[0], "changed_factors")
	if col < 0 || keys != 14 {
		t.Fatalf("CSV header %v: want changed_factors at 14 (unchanged) and changed_factor_labels", recs[0])
	}
	for i, r := range regs {
		for _, f := range r.ChangedFactors {
			if !strings.Contains(recs[i+1][col], f.FactorLabel+": ") || !strings.Contains(recs[i+1][keys], f.Factor+": ") {
				t.Errorf("CSV row %d: %q / %q lacks %s", i+1, recs[i+1][keys], recs[i+1][col], f.Factor)
			}
		}
	}
}
