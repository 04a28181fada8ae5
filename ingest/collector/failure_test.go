package collector_test

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/collector"
	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/postgres"
)

func TestWrongPasswordFailsOnlyThatInstance(t *testing.T) {
	f := newFleet(t)
	for _, name := range []string{"SQL01", "SQL02", "SQL03", "SQL04"} {
		in := f.add(name, "16.0.4135.4")
		in.Startup(base.Add(-72 * time.Hour))
		scriptRestores(in, "Sales", base.Add(-48*time.Hour), 2, 30)
	}
	f.cfg.Instances[1].PasswordEnv = wrongEnv
	f.cfg.Instances[3].PasswordEnv = "RW_TEST_NOT_SET"
	f.once()
	runs := f.runs()
	for _, name := range []string{"SQL01", "SQL03"} {
		if r := runs[name]; r.Status != store.RunOK {
			t.Errorf("%s: status %s %v", name, r.Status, r.Errors)
		}
	}
	r := runs["SQL02"]
	if r.Status != store.RunFailed || !strings.Contains(r.Errors["connect"], "Login failed") || !strings.Contains(r.Errors["connect"], "18456") {
		t.Errorf("SQL02: status %s errors %v, want a failed login", r.Status, r.Errors)
	}
	r = runs["SQL04"]
	if r.Status != store.RunFailed || !strings.Contains(r.Errors["connect"], "RW_TEST_NOT_SET is not set") {
		t.Errorf("SQL04: status %s errors %v, want the unset variable named", r.Status, r.Errors)
	}
	if !strings.Contains(f.logs.String(), "Login failed") {
		t.Errorf("the log does not report the failed login:\n%s", f.logs.String())
	}

	// No form of either password is anywhere the collector writes: the
	// warehouse files (before and after the WAL is folded in), the run
	// records as the /collector page would read them, and the log.
	runsJSON, _ := json.Marshal(runs)
	places := map[string]string{"run records": string(runsJSON), "log": f.logs.String()}
	read := func(tag string) {
		if postgres.IsURL(f.path) {
			places[tag+" warehouse"] = tablesText(t, f.path)
			return
		}
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if b, err := os.ReadFile(f.path + suffix); err == nil {
				places[tag+" warehouse"+suffix] = string(b)
			}
		}
	}
	read("open")
	f.db.Close()
	read("closed")
	for _, pw := range []string{testPass, wrongPass} {
		for _, form := range []string{pw, url.QueryEscape(pw), url.PathEscape(pw), pw[:12]} {
			for where, text := range places {
				if strings.Contains(text, form) {
					t.Errorf("%s holds the password (as %q)", where, form)
				}
			}
		}
	}
}

func TestHungInstanceCostsOnlyItsTimeout(t *testing.T) {
	f := newFleet(t)
	f.cfg.Collector.Timeout = 3 * time.Second
	for _, name := range []string{"SQL01", "SQL02", "HUNG", "MIDPASS", "SQL05"} {
		in := f.add(name, "16.0.4135.4")
		in.Startup(base.Add(-72 * time.Hour))
		scriptRestores(in, "Sales", base.Add(-48*time.Hour), 2, 30)
	}
	f.srv["HUNG"].Hang(true)                                 // accepts TCP, never answers the login
	f.inst["MIDPASS"].Delay("errorlog/read", 30*time.Second) // hangs after host and history
	start := time.Now()
	f.once()
	elapsed := time.Since(start)
	// What matters is one timeout, not the driver's login timeout plus
	// its 5 s attention wait: the bound leaves 4 s to a busy machine and
	// still catches those 5 s.
	if elapsed >= f.cfg.Collector.Timeout+4*time.Second {
		t.Errorf("the pass took %v with a %v timeout", elapsed, f.cfg.Collector.Timeout)
	}
	runs := f.runs()
	for _, name := range []string{"SQL01", "SQL02", "SQL05"} {
		r := runs[name]
		if r.Status != store.RunOK {
			t.Errorf("%s: %s %v", name, r.Status, r.Errors)
		}
		// Waiting for the hung instance's slot would finish it after.
		if !r.Finished.Before(*runs["HUNG"].Finished) {
			t.Errorf("%s finished at %v, not before the hung instance (%v): it waited for it", name, r.Finished, runs["HUNG"].Finished)
		}
	}
	if r := runs["HUNG"]; r.Status != store.RunTimeout || !strings.Contains(r.Errors["connect"], "timed out after 3s") {
		t.Errorf("HUNG: %s %v", r.Status, r.Errors)
	}
	r := runs["MIDPASS"]
	if r.Status != store.RunTimeout || !strings.Contains(r.Errors["errorlog"], "timed out") {
		t.Errorf("MIDPASS: %s %v", r.Status, r.Errors)
	}
	// What finished before the deadline is written, with its watermark; the
	// error log is not, and keeps none.
	if r.Rows["history"] != 2 {
		t.Errorf("MIDPASS: history rows %v, want the 2 read before the deadline", r.Rows)
	}
	if _, ok, _ := f.db.Watermark(context.Background(), "MIDPASS", mssql.SourceHistory); !ok {
		t.Error("MIDPASS: history watermark not stored")
	}
	if _, ok, _ := f.db.Watermark(context.Background(), "MIDPASS", mssql.SourceErrorLog); ok {
		t.Error("MIDPASS: error-log watermark stored for a source that did not finish")
	}
}

func TestPermissionErrorDegradesOneSource(t *testing.T) {
	f := newFleet(t)
	a, b := f.add("NOLOG", "15.0.4236.7"), f.add("NOAGENT", "15.0.4236.7")
	f.add("FINE", "15.0.4236.7")
	for _, name := range []string{"NOLOG", "NOAGENT", "FINE"} {
		f.inst[name].Startup(base.Add(-72 * time.Hour))
		scriptRestores(f.inst[name], "Sales", base.Add(-48*time.Hour), 3, 45)
	}
	a.Fail("errorlog/archives", tdstest.Error{Number: 15003, Class: 16, Message: "Only members of the securityadmin role can execute this stored procedure."})
	a.Fail("errorlog/read", tdstest.Error{Number: 297, Class: 16, Message: "The user does not have permission to perform this action."})
	b.Fail("agent_history/check", tdstest.Error{Number: 229, Class: 14, Message: "The SELECT permission was denied on the object 'sysjobhistory', database 'msdb', schema 'dbo'."})
	b.Fail("host/modules", tdstest.Error{Number: 300, Class: 14, Message: "VIEW SERVER STATE permission was denied on object 'server', database 'master'."})
	f.once()
	runs := f.runs()
	r := runs["NOLOG"]
	if r.Status != store.RunPartial || !strings.Contains(r.Errors["errorlog"], "error 297") || !strings.Contains(r.Errors["errorlog"], "permissions.sql") {
		t.Errorf("NOLOG: %s %v", r.Status, r.Errors)
	}
	if r.Rows["history"] != 3 || r.Rows["host"] != 1 {
		t.Errorf("NOLOG: rows %v, want history and host collected", r.Rows)
	}
	// Without the error log the restores are known from msdb, without an
	// engine-measured duration.
	for _, x := range f.restores("NOLOG") {
		if x.DurationSource == store.DurationEngine {
			t.Errorf("NOLOG restore %d has an engine duration without an error log", x.ID)
		}
	}
	r = runs["NOAGENT"]
	if r.Status != store.RunPartial || !strings.Contains(r.Errors["agent"], "error 229") || !strings.Contains(r.Errors["host/modules"], "error 300") {
		t.Errorf("NOAGENT: %s %v", r.Status, r.Errors)
	}
	if r.Rows["errorlog"] != 3 || r.Rows["history"] != 3 {
		t.Errorf("NOAGENT: rows %v", r.Rows)
	}
	if r := runs["FINE"]; r.Status != store.RunOK {
		t.Errorf("FINE: %s %v", r.Status, r.Errors)
	}
}

func TestStopsCleanlyOnCancel(t *testing.T) {
	f := newFleet(t)
	for _, name := range []string{"SQL01", "SLOW"} {
		in := f.add(name, "16.0.4135.4")
		in.Startup(base.Add(-72 * time.Hour))
		scriptRestores(in, "Sales", base.Add(-48*time.Hour), 2, 30)
	}
	f.inst["SLOW"].Delay("errorlog/read", time.Minute)
	f.cfg.Collector.Timeout = 30 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- collector.Run(ctx, f.db, f.cfg, collector.Options{Logger: f.logger()}) }()
	waitFor(t, "SQL01's pass and SLOW's error-log read", func() bool {
		r, ok := f.runs()["SQL01"]
		return ok && r.Finished != nil && f.inst["SLOW"].Calls("errorlog/read") > 0
	})
	cancel()
	// SLOW's error log is delayed a minute and the timeout is 30 s: Run
	// returns before either only because it stops on cancel.
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	runs := f.runs()
	if r := runs["SQL01"]; r.Status != store.RunOK {
		t.Errorf("SQL01: %s %v", r.Status, r.Errors)
	}
	r := runs["SLOW"]
	if r.Status != store.RunCanceled || r.Finished == nil {
		t.Errorf("SLOW: %s finished %v errors %v", r.Status, r.Finished, r.Errors)
	}
	if _, ok, _ := f.db.Watermark(context.Background(), "SLOW", mssql.SourceErrorLog); ok {
		t.Error("SLOW: error-log watermark stored although the source was cut off")
	}
}

// In continuous mode an instance that cannot be reached is tried again
// after [collector] retry, then twice as long, not only after the interval.
func TestUnreachableInstanceIsRetriedWithBackOff(t *testing.T) {
	f := newFleet(t)
	for _, name := range []string{"UP", "DOWN"} {
		f.add(name, "16.0.4135.4").Startup(base.Add(-time.Hour))
	}
	f.srv["DOWN"].Close() // connection refused from now on
	retry := 300 * time.Millisecond
	f.cfg.Collector.Retry = retry
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- collector.Run(ctx, f.db, f.cfg, collector.Options{Logger: f.logger()}) }()
	var down []store.CollectorRun
	waitFor(t, "four finished passes over DOWN", func() bool {
		down, _ = f.db.Runs(context.Background(), "DOWN", 10)
		return len(down) >= 4 && down[0].Finished != nil
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(down) < 4 {
		t.Fatalf("DOWN was tried %d times", len(down))
	}
	for _, r := range down {
		if r.Status == store.RunFailed && !strings.Contains(r.Errors["connect"], "connection refused") || r.Status != store.RunFailed && r.Status != store.RunCanceled {
			t.Errorf("DOWN run: %s %v", r.Status, r.Errors)
		}
	}
	// Runs come newest first; the gap between starts grows: the first
	// retry waits the retry, the next twice as long. Load only lengthens a
	// gap, so each is held to its floor rather than to the gap before it
	// (a slow first pass once made 227 ms then 202 ms look like no
	// back-off); without back-off the second would be ~300 ms.
	g1, g2 := down[2].Started.Sub(*down[3].Finished), down[1].Started.Sub(*down[2].Finished)
	if g1 < retry-10*time.Millisecond || g2 < 2*retry-10*time.Millisecond {
		t.Errorf("retry gaps %v then %v: want at least %v then %v", g1, g2, retry, 2*retry)
	}
	if up, _ := f.db.Runs(context.Background(), "UP", 10); len(up) != 1 {
		t.Errorf("UP collected %d times within its interval", len(up))
	}
}
