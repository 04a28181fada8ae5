package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/errorlog"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/plan"
	"github.com/restorewatch/restorewatch/store/sqlite"
	_ "modernc.org/sqlite"
)

// small is an estate small enough for a test: 6 instances over a few days,
// 2 of them secondaries restoring 2 databases' logs every 4 hours.
var small = []string{"-shape", "estate", "-instances", "6", "-logship", "2", "-logdbs", "2", "-every", "240"}

func fleetRun(t *testing.T, cmd string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(context.Background(), append([]string{cmd}, args...), &out, &errb); err != nil {
		t.Fatalf("fleet %s %s: %v\n%s", cmd, strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

func with(args []string, more ...string) []string { return append(slices.Clone(args), more...) }

// restoreRows reads every restore of a warehouse as text, without the
// columns that hold row ids (which depend on the order facts arrived in),
// sorted.
func restoreRows(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var cols string
	if err := db.QueryRow(`SELECT group_concat('quote(r.' || name || ')', ' || ''|'' || ') FROM pragma_table_info('restore')
		WHERE name NOT IN ('id', 'instance_id', 'natural_key', 'history_id', 'log_id', 'extra_log_id', 'content_hash')`).Scan(&cols); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT i.name || '|' || ` + cols + ` FROM restore r JOIN instance i ON i.id = r.instance_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// cli builds restorewatch's command.
func cli(t *testing.T) string {
	t.Helper()
	// The go on PATH, with the test's environment: GOTOOLCHAIN picks the
	// toolchain the tests run under.
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go build: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "restorewatch")
	cmd := exec.Command(goCmd, "build", "-o", bin, "github.com/restorewatch/restorewatch/cmd/restorewatch")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// The next day's files, imported through the real CLI onto a warehouse of
// N days, add exactly that day's restores, and the warehouse then holds the
// same restores as one built with N+1 days directly: the files carry the
// same facts as the build, in the formats the importers read.
func TestNextDayThroughTheCLIEqualsBuildingIt(t *testing.T) {
	dir := t.TempDir()
	nDays, built, direct, day := filepath.Join(dir, "n.db"), filepath.Join(dir, "n1.db"), filepath.Join(dir, "direct.db"), filepath.Join(dir, "day")
	fleetRun(t, "build", with(small, "-days", "3", "-end", "2025-06-30", "-db", nDays)...)
	out := fleetRun(t, "day", with(small, "-days", "3", "-end", "2025-06-30", "-o", day)...)
	fleetRun(t, "build", with(small, "-days", "4", "-end", "2025-07-01", "-db", direct)...)
	if !strings.Contains(out, "day 2025-07-01") {
		t.Errorf("day output %q names the wrong day", out)
	}
	b, err := os.ReadFile(nDays)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(built, b, 0o644); err != nil {
		t.Fatal(err)
	}
	before := restoreRows(t, built)

	var errb bytes.Buffer
	cmd := exec.Command(cli(t), "import", "--db", built, "--instance-from-dir", day)
	cmd.Stderr = &errb
	summary, err := cmd.Output()
	if err != nil {
		t.Fatalf("restorewatch import: %v\n%s\n%s", err, summary, errb.String())
	}
	if !strings.Contains(string(summary), "(6 errorlog, 1 history)") || !strings.Contains(string(summary), "rejected 0") {
		t.Errorf("import summary:\n%s", summary)
	}
	after := restoreRows(t, built)

	f := &fleet{seed: 1, shape: "estate", instances: 6, logship: 2, logDBs: 2, every: 240, days: 3,
		end: time.Date(2025, 6, 30, 0, 0, 0, 0, time.UTC)}
	want, logs := 0, 0
	for i := range f.instances {
		for _, r := range f.estateDay(i, 3, nil) {
			want++
			if r.kind == store.KindLog {
				logs++
			}
		}
	}
	if logs == 0 || logs == want {
		t.Fatalf("the day has %d restores, %d of them logs: want both kinds", want, logs)
	}
	if got := len(after) - len(before); got != want {
		t.Errorf("the import added %d restores, the day has %d", got, want)
	}
	for _, r := range before {
		if _, ok := slices.BinarySearch(after, r); !ok {
			t.Errorf("restore changed by the import: %s", r)
			break
		}
	}
	directRows := restoreRows(t, direct)
	if !slices.Equal(after, directRows) {
		n := 0
		for _, r := range after {
			if _, ok := slices.BinarySearch(directRows, r); !ok && n < 3 {
				t.Errorf("imported, not built: %s", r)
				n++
			}
		}
		for _, r := range directRows {
			if _, ok := slices.BinarySearch(after, r); !ok && n < 6 {
				t.Errorf("built, not imported: %s", r)
				n++
			}
		}
		t.Fatalf("N days + the next day's files: %d restores; N+1 days built: %d", len(after), len(directRows))
	}
}

// Each log-shipped database is one unbroken chain: a full restore WITH
// NORECOVERY at its start, then a log every f.every minutes whose first LSN
// is the previous log's last, the full restore's last LSN inside the first
// log; every restore has its msdb row and its error-log lines.
func TestEstateLogChains(t *testing.T) {
	f := &fleet{seed: 1, shape: "estate", instances: 8, logship: 2, logDBs: 3, every: 60, days: 3,
		end: time.Date(2025, 6, 30, 0, 0, 0, 0, time.UTC)}
	type chain struct {
		n       int
		last    string
		fullEnd string
	}
	chains := map[string]*chain{}
	full := 0
	for i := range f.instances {
		ids := map[int64]bool{}
		var prev time.Time
		err := f.each(i, func(r *restore) error {
			if ids[r.histID] {
				return fmt.Errorf("%s: restore_history_id %d twice", r.instance, r.histID)
			}
			ids[r.histID] = true
			if r.start.Before(prev) {
				return fmt.Errorf("%s: restores out of order at %v", r.instance, r.start)
			}
			prev = r.start
			h, l := r.history(), r.logRestore()
			if err := h.Validate(); err != nil {
				return err
			}
			if err := l.Validate(); err != nil {
				return err
			}
			key := r.instance + "/" + r.database
			switch {
			case strings.HasPrefix(r.database, "LS") && r.kind == store.KindFull:
				if chains[key] != nil || *h.Recovery || h.RestoreType != "D" || l.MessageID != 18267 {
					return fmt.Errorf("%s: chain start %+v", key, h)
				}
				chains[key] = &chain{fullEnd: r.lastLSN}
			case r.kind == store.KindLog:
				c := chains[key]
				if c == nil {
					return fmt.Errorf("%s: a log before the chain's full restore", key)
				}
				if c.n == 0 && !(lsnLE(r.firstLSN, c.fullEnd) && lsnLE(c.fullEnd, r.lastLSN)) {
					return fmt.Errorf("%s: first log %s–%s does not cover the full restore's last LSN %s", key, r.firstLSN, r.lastLSN, c.fullEnd)
				}
				if c.n > 0 && r.firstLSN != c.last {
					return fmt.Errorf("%s: log %d starts at %s, the previous ended at %s", key, c.n, r.firstLSN, c.last)
				}
				if *h.Recovery || h.RestoreType != "L" || l.MessageID != 18268 || l.Statement != "RESTORE LOG" {
					return fmt.Errorf("%s: log restore %+v / %+v", key, h, l)
				}
				c.n++
				c.last = r.lastLSN
			default:
				if !*h.Recovery || l.MessageID != 18267 {
					return fmt.Errorf("%s: test restore %+v", key, h)
				}
				full++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(chains) != f.logship*f.logDBs {
		t.Fatalf("%d chains, want %d", len(chains), f.logship*f.logDBs)
	}
	for key, c := range chains {
		if want := f.days*24 - 1; c.n != want {
			t.Errorf("%s: %d logs, want %d", key, c.n, want)
		}
	}
	if want := f.days * (f.instances + f.instances/2); full != want {
		t.Errorf("%d test restores, want %d", full, want)
	}
}

// One full series in twenty regresses and one log chain in twenty slows,
// as in the default shape.
func TestEstateRegressions(t *testing.T) {
	f := &fleet{seed: 1, shape: "estate", instances: 400, logship: 40, logDBs: 5, every: 30, days: 90}
	series, regressing, chains, slow := 0, 0, 0, 0
	for i := range f.instances {
		for k := range fullDBs(i) {
			series++
			if f.regresses(i, k) {
				regressing++
			}
		}
		if f.secondary(i) {
			for c := range f.logDBs {
				chains++
				if f.slows(i, c) {
					slow++
				}
			}
		}
	}
	if series != 600 || regressing != 30 || chains != 200 || slow != 10 {
		t.Errorf("%d of %d full series regress, %d of %d log chains slow; want 30 of 600 and 10 of 200", regressing, series, slow, chains)
	}
}

func lsnLE(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a <= b
}

// The error-log lines of a restore read back, through the real error-log
// reader, as the very record the build imports.
func TestLogLinesReadBackAsBuilt(t *testing.T) {
	f := &fleet{seed: 1, shape: "estate", instances: 2, logship: 1, logDBs: 1, every: 240, days: 1,
		end: time.Date(2025, 6, 30, 0, 0, 0, 0, time.UTC)}
	day := f.estateDay(0, 0, nil)
	var text bytes.Buffer
	lines := f.banner(0, 0)
	for _, r := range day {
		lines = append(lines, r.logLines()...)
	}
	slices.SortStableFunc(lines, func(a, b logLine) int { return a.at.Compare(b.at) })
	for _, l := range lines {
		l.write(&text)
	}
	var c store.Collect
	opt := errorlog.Options{File: "ERRORLOG", Instance: f.instanceName(0)}
	if _, err := errorlog.Parse(context.Background(), bytes.NewReader(utf16le(text.Bytes())), opt, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Rejects) > 0 || len(c.LogRestores) != len(day) || len(c.Hosts) != 1 {
		t.Fatalf("read %d restores, %d hosts, rejects %v; want %d restores", len(c.LogRestores), len(c.Hosts), c.Rejects, len(day))
	}
	for k, r := range day {
		want, got := r.logRestore(), c.LogRestores[k]
		got.Phases, got.Origin, want.Origin = nil, store.Origin{}, store.Origin{}
		got.Instance = want.Instance
		if !reflect.DeepEqual(got, want) {
			t.Errorf("restore %d:\nread  %+v\nbuilt %+v", k, got, want)
		}
	}
}

// The backup history the estate's source servers recorded makes a restore
// plan for each of their databases: a test-restored database's is its
// last full alone, a log-shipped one's is the last day's full on the
// primary and every log after it, with no break; the source servers have
// no restores, so each step rests on the fleet's rates.
func TestEstateBackupsMakePlans(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "estate.db")
	args := with(small, "-days", "3")
	fleetRun(t, "build", with(args, "-db", path)...)
	out := fleetRun(t, "backups", with(args, "-db", path, "-sources", "6")...)
	if !strings.Contains(out, "of 6 source servers") {
		t.Errorf("backups: %q", out)
	}
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f := &fleet{seed: 1, shape: "estate", instances: 6, logship: 2, logDBs: 2, every: 240, days: 3}
	perDay := 1440 / f.every
	plans := 0
	for i := range f.instances {
		src := fmt.Sprintf("PROD-SQL%04d", i)
		var dbs []string
		for k := range fullDBs(i) {
			dbs = append(dbs, fmt.Sprintf("App%02d_%s", k, dbNames[(i+k)%5]))
		}
		if f.secondary(i) {
			for c := range f.logDBs {
				dbs = append(dbs, fmt.Sprintf("LS%02d_%s", c, dbNames[c%5]))
			}
		}
		for _, name := range dbs {
			p, _, err := plan.Make(ctx, db, plan.Request{Instance: src, Database: name})
			if err != nil {
				t.Errorf("%s %s: %v", src, name, err)
				continue
			}
			plans++
			want := 1 // the last full
			if strings.HasPrefix(name, "LS") {
				// The last day's full comes before its first log: every
				// log of that day follows it.
				want = 1 + perDay
			}
			if len(p.Steps) != want || p.Steps[0].Kind != store.KindFull {
				t.Errorf("%s %s: %d steps, first %s; want %d from a full", src, name, len(p.Steps), p.Steps[0].Kind, want)
			}
			for _, st := range p.Steps {
				if !st.Estimate.Fleet || st.Estimate.Seconds <= 0 {
					t.Errorf("%s %s: step %+v not estimated from the fleet", src, name, st.Estimate)
					break
				}
			}
		}
	}
	if plans != 6+3+2*2 {
		t.Errorf("%d plans, want 13", plans)
	}
}
