package collector_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/ingest/mssql/mssqltest"
)

func TestSecondPassAddsOnlyNewRows(t *testing.T) {
	f := newFleet(t)
	a, b := f.add("SQL01", "15.0.4236.7"), f.add("SQL02", "15.0.4236.7")
	for _, in := range []*mssqltest.Instance{a, b} {
		in.Startup(base.Add(-72 * time.Hour))
		scriptRestores(in, "Sales", base.Add(-48*time.Hour), 4, 60)
	}
	f.once()
	d := f.sqlite()
	rowsBefore := count(t, d, `SELECT COUNT(*) FROM history_row`)
	logsBefore := count(t, d, `SELECT COUNT(*) FROM log_restore`)

	// Two more restores on SQL01 only, then the servers' clocks move on.
	scriptRestores(a, "Sales", base.Add(time.Hour), 2, 90)
	a.SetClock(base.Add(4 * time.Hour))
	b.SetClock(base.Add(4 * time.Hour))
	f.once()
	runs := f.runs()
	if r := runs["SQL01"]; r.Rows["history"] != 2 || r.Rows["errorlog"] != 2 {
		t.Errorf("SQL01 second pass read history %d, error-log restores %d; want 2 and 2", r.Rows["history"], r.Rows["errorlog"])
	}
	if r := runs["SQL02"]; r.Rows["history"] != 0 || r.Rows["errorlog"] != 0 || r.Rows["added"] != 0 {
		t.Errorf("SQL02 second pass read %v; want nothing new", r.Rows)
	}
	if got := count(t, d, `SELECT COUNT(*) FROM history_row`); got != rowsBefore+2 {
		t.Errorf("history rows %d, want %d", got, rowsBefore+2)
	}
	if got := count(t, d, `SELECT COUNT(*) FROM log_restore`); got != logsBefore+2 {
		t.Errorf("log restores %d, want %d", got, logsBefore+2)
	}
	if got := len(f.restores("SQL01")); got != 6 {
		t.Errorf("SQL01 has %d restores, want 6", got)
	}
	// A live snapshot that did not change is not stored again.
	if got := count(t, d, `SELECT COUNT(*) FROM host_snapshot WHERE source = 'live'`); got != 2 {
		t.Errorf("%d live host snapshots, want 2 (one per instance)", got)
	}
}

func TestMSDBRebuild(t *testing.T) {
	cases := []struct {
		name   string
		script func(in *mssqltest.Instance)
		want   string // in the run's notes; "" = no rebuild
		total  int    // restores in the warehouse after the second pass
	}{
		{"ids went back", func(in *mssqltest.Instance) {
			in.RebuildMSDB()
			scriptRestores(in, "Sales", base.Add(time.Hour), 2, 30)
		}, "below the watermark", 7},
		{"ids passed the watermark again", func(in *mssqltest.Instance) {
			in.RebuildMSDB()
			scriptRestores(in, "Sales", base.Add(time.Hour), 6, 30)
		}, "now has restore_date", 11},
		{"purge of old rows is no rebuild", func(in *mssqltest.Instance) {
			scriptRestores(in, "Sales", base.Add(time.Hour), 1, 30)
			in.PurgeHistoryBefore(base.Add(time.Hour))
		}, "", 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFleet(t)
			in := f.add("SQL01", "16.0.4135.4")
			in.Startup(base.Add(-72 * time.Hour))
			scriptRestores(in, "Sales", base.Add(-48*time.Hour), 5, 30)
			f.once()
			tc.script(in)
			in.SetClock(base.Add(12 * time.Hour))
			f.once()
			r := f.runs()["SQL01"]
			notes := strings.Join(r.Notes, "\n")
			if tc.want == "" && strings.Contains(notes, "rebuilt") {
				t.Errorf("rebuild reported: %s", notes)
			}
			if tc.want != "" && (!strings.Contains(notes, "msdb rebuilt") || !strings.Contains(notes, tc.want)) {
				t.Errorf("notes %q, want an msdb rebuild (%s)", notes, tc.want)
			}
			if got := len(f.restores("SQL01")); got != tc.total {
				t.Errorf("%d restores after the second pass, want %d (old history kept, new read once)", got, tc.total)
			}
			// A third pass reads nothing again: the watermark follows the new msdb.
			f.once()
			if r := f.runs()["SQL01"]; r.Rows["history"] != 0 || strings.Contains(strings.Join(r.Notes, ""), "rebuilt") {
				t.Errorf("third pass: rows %v notes %v", r.Rows, r.Notes)
			}
			v, _, _ := f.db.Watermark(context.Background(), "SQL01", mssql.SourceHistory)
			var m mssql.HistoryMark
			if err := json.Unmarshal([]byte(v), &m); err != nil || m.ID == 0 {
				t.Errorf("history watermark %q: %v", v, err)
			}
		})
	}
}

func TestAgentStepRestores(t *testing.T) {
	f := newFleet(t)
	in := f.add("SQL01", "14.0.3048.4")
	in.Startup(base.Add(-72 * time.Hour))
	msg := "Executed as user: CORP\\svc-agent. Processed 25376 pages for database 'AdventureWorks', file 'AdventureWorks2022' on file 1. [SQLSTATE 01000] (Message 4035)  " +
		"Processed 2 pages for database 'AdventureWorks', file 'AdventureWorks2022_log' on file 1. [SQLSTATE 01000] (Message 4035)  " +
		"RESTORE DATABASE successfully processed 25378 pages in 0.499 seconds (397.318 MB/sec). [SQLSTATE 01000] (Message 3014).  The step succeeded."
	in.AddAgentStep(mssqltest.AgentStep{Job: "Restore AW", Step: "restore", StepID: 1, Status: 1,
		RunDate: 20260301, RunTime: 93005, RunDurHMS: 102, Message: msg})
	in.AddAgentStep(mssqltest.AgentStep{Job: "Restore AW", Step: "(Job outcome)", StepID: 0, Status: 1,
		RunDate: 20260301, RunTime: 93005, RunDurHMS: 102, Message: "The job succeeded."})
	in.AddAgentStep(mssqltest.AgentStep{Job: "Index", Step: "rebuild", StepID: 1, Status: 1,
		RunDate: 20260301, RunTime: 100000, RunDurHMS: 5, Message: "Executed as user: x. The step succeeded."})
	f.once()
	r := f.runs()["SQL01"]
	if r.Rows["agent"] != 1 || r.Rows["agent_steps"] != 1 {
		t.Errorf("agent rows %v, want 1 restore from 1 step", r.Rows)
	}
	d := f.sqlite()
	var upper, secs float64
	var db, completed string
	err := d.QueryRow(`SELECT database_name, upper_bound_s, seconds, `+utcText(d, "completed_local")+`
		FROM log_restore WHERE source = 'agent'`).Scan(&db, &upper, &secs, &completed)
	if err != nil {
		t.Fatal(err)
	}
	// run_duration 102 = 1 min 02 s; the step started 09:30:05.
	if db != "AdventureWorks" || upper != 62 || secs != 0.499 || completed != "2026-03-01 09:31:07" {
		t.Errorf("agent restore %s upper %v seconds %v completed %s", db, upper, secs, completed)
	}
	v, _, _ := f.db.Watermark(context.Background(), "SQL01", mssql.SourceAgent)
	if v != `{"id":3}` {
		t.Errorf("agent watermark %s, want every step seen (id 3)", v)
	}
}
