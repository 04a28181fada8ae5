package collector_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/errorlog"
	"github.com/restorewatch/restorewatch/ingest/mssql/mssqltest"
	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// fixtureHistory is what msdb holds for the Sales restores of the fixture.
func fixtureHistory() []store.HistoryRow {
	row := func(id int64, at string, rtype, first, last string, size int64) store.HistoryRow {
		t, _ := time.Parse(time.DateTime, at)
		f, _ := store.LSNFromLog(first)
		l, _ := store.LSNFromLog(last)
		return store.HistoryRow{RestoreHistoryID: id, RestoreDate: t, Database: "Sales", RestoreType: rtype,
			BackupType: rtype, FirstLSN: f, LastLSN: l, BackupSize: &size, SourceServer: "SQLPROD02", SourceDatabase: "Sales",
			Devices: []string{`\\backup01\sql\Sales\Sales_FULL_1.bak`}}
	}
	return []store.HistoryRow{
		row(101, "2024-03-02 07:20:00", "D", "39:1152:1", "39:1176:1", 53687091200),
		row(102, "2024-03-02 09:00:00", "I", "41:8800:1", "41:8840:1", 2147483648),
		row(103, "2024-03-02 09:05:00", "L", "41:8840:1", "41:9312:1", 245768192),
	}
}

// dumpRows renders a query's rows as text for comparison.
func dumpRows(t *testing.T, d *sql.DB, q string) []string {
	t.Helper()
	rows, err := d.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for i, v := range vals {
			if bs, ok := v.([]byte); ok {
				v = string(bs)
			}
			fmt.Fprintf(&b, "%s=%v ", cols[i], v)
		}
		out = append(out, b.String())
	}
	return out
}

// TestErrorLogMatchesFileImport collects, through xp_readerrorlog rows split
// over an archive and the current log, the same error log that a second
// warehouse imports as a file: both must hold the same restores.
func TestErrorLogMatchesFileImport(t *testing.T) {
	ctx := context.Background()
	b, err := os.ReadFile("testdata/errorlog_full_diff_log.log")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	const name = `SQLPROD01\PROD` // as the log's "Server name is" line says

	filePath := storetest.Location(t, "file.db")
	fileDB := storetest.OpenLocation(t, filePath)
	im, err := fileDB.NewImport(ctx, "errorlog", "ERRORLOG")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := errorlog.Parse(ctx, strings.NewReader(text), errorlog.Options{File: "ERRORLOG", Instance: name}, im); err != nil {
		t.Fatal(err)
	}
	for _, h := range fixtureHistory() {
		h.Instance, h.Origin = name, store.Origin{Source: "history", File: "history.csv"}
		if err := im.History(h); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := im.CommitAndReconcile(); err != nil {
		t.Fatal(err)
	}

	f := newFleet(t)
	in := f.add(name, "16.0.4115.5")
	rows, err := mssqltest.RowsFromErrorLog(text)
	if err != nil {
		t.Fatal(err)
	}
	split := 0
	for split < len(rows) && rows[split].At.Before(time.Date(2024, 3, 2, 8, 40, 0, 0, time.UTC)) {
		split++
	}
	in.Log(rows[:split]...)
	in.CycleErrorLog()
	in.Log(rows[split:]...)
	in.AddHistory(fixtureHistory()...)
	in.SetClock(time.Date(2024, 3, 2, 12, 0, 0, 0, time.UTC))
	f.once()
	if r := f.runs()[name]; r.Status != store.RunOK || r.Rows["errorlog_lines"] != int64(len(rows)) {
		t.Fatalf("run %s rows %v errors %v", r.Status, r.Rows, r.Errors)
	}

	fileSQL, liveSQL := openSQLite(t, filePath), f.sqlite()
	const logQ = `SELECT database_name, kind, message_id, completed_local, utc_offset, first_lsn, last_lsn, device_count,
		device_type, devices, has_3014, statement, pages, seconds, mbps, upper_bound_s, buffer, phases, recovery, dedupe_key
		FROM log_restore ORDER BY completed_local, database_name, kind`
	const restoreQ = `SELECT database_name, kind, at_utc, started_local, finished_local, duration_s, duration_source,
		backup_bytes, pages, engine_mbps, logical_mibps, instance_build, source_server, devices, device_kind, stripes,
		buffer_count, max_transfer_kib, io_alignment, ifi, cpu_count, memory_mb, trace_flags
		FROM restore ORDER BY at_utc, database_name, kind`
	for _, q := range []string{logQ, restoreQ} {
		want, got := dumpRows(t, fileSQL, q), dumpRows(t, liveSQL, q)
		if len(want) < 6 {
			t.Fatalf("the file import found only %d rows for %s", len(want), q[:40])
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("live and file differ for\n%s\nfile:\n%s\nlive:\n%s", q, strings.Join(want, "\n"), strings.Join(got, "\n"))
		}
	}
	// The matched Sales restores carry engine durations.
	if n := count(t, liveSQL, `SELECT COUNT(*) FROM restore WHERE database_name = 'Sales' AND history_id IS NOT NULL
		AND duration_source = ?`, store.DurationEngine); n != 3 {
		t.Errorf("%d Sales restores matched to history with engine durations, want 3", n)
	}

	// The full restore's trace-flag 3213 block, written 50 minutes before its
	// completion line and in the archive, is still attached to it.
	if n := count(t, liveSQL, `SELECT COUNT(*) FROM restore WHERE database_name = 'Sales' AND kind = 'full'
		AND buffer_count = 14 AND max_transfer_kib = 4096 AND io_alignment = 4096`); n != 1 {
		t.Errorf("the full Sales restore lost its buffer configuration")
	}

	// A second pass over an unchanged log reads the look-back again and adds nothing.
	before := count(t, liveSQL, `SELECT COUNT(*) FROM log_restore`)
	in.SetClock(time.Date(2024, 3, 2, 12, 15, 0, 0, time.UTC))
	f.once()
	if r := f.runs()[name]; r.Rows["errorlog"] != 0 || count(t, liveSQL, `SELECT COUNT(*) FROM log_restore`) != before {
		t.Errorf("second pass: rows %v, log restores %d (was %d)", r.Rows, count(t, liveSQL, `SELECT COUNT(*) FROM log_restore`), before)
	}
}

// TestErrorLogArchivesWithoutEnumeration reads the archives by probing when
// the login may not list them (xp_enumerrorlogs needs securityadmin), and
// hands each restore over once although passes overlap.
func TestErrorLogArchivesWithoutEnumeration(t *testing.T) {
	f := newFleet(t)
	in := f.add("SQL01", "14.0.3048.4")
	in.Fail("errorlog/archives", tdstest.Error{Number: 15003, Class: 16, Message: "Only members of the securityadmin role can execute this stored procedure."})
	in.Startup(base.Add(-96 * time.Hour))
	scriptRestores(in, "A", base.Add(-90*time.Hour), 2, 20)
	in.Startup(base.Add(-72 * time.Hour)) // ERRORLOG.1 holds A's restores now
	scriptRestores(in, "B", base.Add(-70*time.Hour), 3, 20)
	// A restore that completes 5 s before the pass: its lines are too fresh
	// to hand over yet (the 3014 line could still be coming).
	in.AddRestore(mssqltest.Restore{Database: "C", Kind: store.KindLog, Start: base.Add(-25 * time.Second), Seconds: 20, Bytes: 1 << 20})
	f.once()
	r := f.runs()["SQL01"]
	if r.Status != store.RunOK || r.Rows["errorlog"] != 5 || r.Rows["errorlog_startups"] != 2 {
		t.Errorf("first pass: %s rows %v errors %v", r.Status, r.Rows, r.Errors)
	}
	if !strings.Contains(strings.Join(r.Notes, " "), "found by reading ERRORLOG.1") {
		t.Errorf("notes %v do not say the archives were probed", r.Notes)
	}
	in.SetClock(base.Add(10 * time.Minute))
	f.once()
	if r := f.runs()["SQL01"]; r.Rows["errorlog"] != 1 {
		t.Errorf("second pass handed over %d restores, want only C's", r.Rows["errorlog"])
	}
	d := f.sqlite()
	if n := count(t, d, `SELECT COUNT(*) FROM log_restore`); n != 6 {
		t.Errorf("%d log restores, want 6", n)
	}
	if n := count(t, d, `SELECT COUNT(*) FROM log_restore WHERE database_name = 'C' AND has_3014 = 1`); n != 1 {
		t.Errorf("C's restore stored %d times with its 3014 line, want once", n)
	}
}
