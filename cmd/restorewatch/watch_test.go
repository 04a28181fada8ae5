package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// watchLog writes an error log of SQL Server 2022 (the lines of
// ingest/collector/testdata's real-looking log: version, UTC adjustment,
// server name, then per restore "Database was restored" and the 3014
// line) with one full restore of each database a day from day on, at the
// given seconds each (20 GiB restored: 2,621,440 pages).
func watchLog(t *testing.T, path string, day int, secs map[string][]float64) {
	t.Helper()
	t0 := time.Date(2026, 10, 1, 2, 0, 0, 0, time.UTC)
	var b strings.Builder
	stamp := func(at time.Time) string { return at.Format("2006-01-02 15:04:05.00") }
	start := t0.AddDate(0, 0, day).Add(-time.Hour)
	fmt.Fprintf(&b, "%s Server      Microsoft SQL Server 2022 (RTM-CU12) (KB5033663) - 16.0.4115.5 (X64) \n", stamp(start))
	fmt.Fprintf(&b, "%s Server      UTC adjustment: 0:00\n", stamp(start))
	fmt.Fprintf(&b, "%s Server      Server name is 'WATCH-SQL01'. This is an informational message only. No user action is required.\n", stamp(start))
	const pages = 2621440
	for dbi, name := range []string{"Billing", "HR"} {
		for i, s := range secs[name] {
			at := t0.AddDate(0, 0, day+i).Add(time.Duration(dbi) * time.Hour)
			lsn := 1000 + 10*(day+i)
			fmt.Fprintf(&b, "%s Backup      Database was restored: Database: %s, creation date(time): 2019/06/11(09:14:33), first LSN: 39:%d:1, last LSN: 39:%d:1, number of dump devices: 1, device information: (FILE=1, TYPE=DISK: {'D:\\Backup\\%s_FULL.bak'}). Informational message. No user action required.\n",
				stamp(at), name, lsn, lsn+5, name)
			fmt.Fprintf(&b, "%s Backup      RESTORE DATABASE successfully processed %d pages in %.3f seconds (%.3f MB/sec).\n",
				stamp(at.Add(10*time.Millisecond)), pages, s, float64(pages)*8192/1048576/s)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

type watchRow struct {
	State     string  `json:"state"`
	Database  string  `json:"database"`
	Direction string  `json:"direction"`
	ChangedAt string  `json:"changed_at"`
	RestoreID int64   `json:"restore_id"`
	Ratio     float64 `json:"ratio"`
	CurrentN  int     `json:"current_n"`
}

func regressionsJSON(t *testing.T, db string) []watchRow {
	t.Helper()
	out, stderr, code := runMain(t, "regressions", "--db", db, "--format", "json")
	var rows []watchRow
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil {
		t.Fatalf("regressions: exit %d: %s %s", code, stderr, out)
	}
	return rows
}

// Issue 37: a slowdown is watched at its first slow restore (regressions
// lists it, state "watch", with the restore that opened it) and confirmed
// a regression by the second, dated to the first; a one-off slow restore
// is a watch that closes at the next restore, never a regression.
func TestWatchedAtFirstSlowRestoreConfirmedAtSecond(t *testing.T) {
	dir := t.TempDir()
	db := newDB(t, "w.db")
	usual := make([]float64, 40)
	for i := range usual {
		usual[i] = 51.2 * (1 + 0.04*float64(i%5-2)) // 20 GiB at ~400 MB/s, ±8 %
	}
	steps := []map[string][]float64{
		{"Billing": usual, "HR": usual},
		{"Billing": {160}, "HR": {165}}, // both 3.1× slower
		{"Billing": {158}, "HR": {52}},  // Billing again; HR back to usual
	}
	day := 0
	var got [][]watchRow
	for i, s := range steps {
		f := filepath.Join(dir, fmt.Sprintf("ERRORLOG.%d", i))
		watchLog(t, f, day, s)
		day += len(s["Billing"])
		if out, stderr, code := runMain(t, "import", "--db", db, f); code != 0 {
			t.Fatalf("import %d: exit %d: %s %s", i, code, stderr, out)
		}
		got = append(got, regressionsJSON(t, db))
		if i == 1 {
			table, _, _ := runMain(t, "regressions", "--db", db)
			if !strings.Contains(table, "Watching (2") || !strings.Contains(table, "Billing on WATCH-SQL01: last restore 3.1× slower than usual (2026-11-10") {
				t.Errorf("the table does not list the watches:\n%s", table)
			}
		}
	}
	if len(got[0]) != 0 {
		t.Errorf("40 usual restores: %+v", got[0])
	}
	watched := map[string]watchRow{}
	for _, r := range got[1] {
		watched[r.Database] = r
	}
	for _, name := range []string{"Billing", "HR"} {
		w := watched[name]
		if w.State != "watch" || w.Direction != "regression" || w.RestoreID == 0 || w.Ratio > 0.4 || !strings.HasPrefix(w.ChangedAt, "2026-11-10") {
			t.Errorf("after the first slow restore, %s: %+v", name, w)
		}
	}
	if len(got[2]) != 1 {
		t.Fatalf("after the second restores: %+v, want Billing's regression alone", got[2])
	}
	if r := got[2][0]; r.State != "regression" || r.Database != "Billing" || r.ChangedAt != watched["Billing"].ChangedAt || r.CurrentN != 2 {
		t.Errorf("Billing's regression %+v, want one dated to the watched restore (%s) on 2 restores", r, watched["Billing"].ChangedAt)
	}
	// The history keeps both watches: Billing's confirmed, HR's closed.
	conn := rawDB(t, db)
	rows, err := conn.Query(`SELECT database_name, state FROM watch ORDER BY database_name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var states []string
	for rows.Next() {
		var d, s string
		rows.Scan(&d, &s)
		states = append(states, d+" "+s)
	}
	if strings.Join(states, ", ") != "Billing confirmed, HR closed" {
		t.Errorf("watch history: %v", states)
	}
}
