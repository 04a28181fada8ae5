package storetest

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// Contract holds an engine to store.Warehouse (issue 41): the same checks,
// group by group, whatever the engine. open returns a new, empty warehouse
// closed when its test ends.
//
// A method the engine does not build yet (an error wrapping
// errors.ErrUnsupported) skips its check with a message that starts
// "MISSING", so `go test -v ... | grep MISSING` lists what is left; with
// RW_CONTRACT_STRICT=1 it fails instead.
func Contract(t *testing.T, open func(testing.TB) store.Warehouse) {
	t.Run("Admin", func(t *testing.T) { contractAdmin(t, open(t)) })
	t.Run("Tokens", func(t *testing.T) { contractTokens(t, open(t)) })
	t.Run("Collector", func(t *testing.T) { contractCollector(t, open(t)) })
	t.Run("Push", func(t *testing.T) { contractPush(t, open(t)) })
	t.Run("ImportSink", func(t *testing.T) { contractImport(t, open(t)) })
	t.Run("Derivation", func(t *testing.T) { contractDerivation(t, open(t)) })
	t.Run("Analysis", func(t *testing.T) { contractAnalysis(t, open(t)) })
	t.Run("Retention", func(t *testing.T) { contractRetention(t, open(t)) })
	t.Run("Orders", func(t *testing.T) { contractOrders(t, open(t)) })
	t.Run("Pages", func(t *testing.T) { contractPages(t, open(t)) })
	t.Run("Alerts", func(t *testing.T) { contractAlerts(t, open(t)) })
}

// built fails t on err, or skips it saying MISSING when err says the
// engine has not built the method yet.
func built(t *testing.T, what string, err error) {
	t.Helper()
	switch {
	case err == nil:
	case errors.Is(err, errors.ErrUnsupported):
		if strictContract() {
			t.Fatalf("MISSING %s: %v", what, err)
		}
		t.Skipf("MISSING %s: %v", what, err)
	default:
		t.Fatalf("%s: %v", what, err)
	}
}

func strictContract() bool { return getenv("RW_CONTRACT_STRICT") == "1" }

func contractAdmin(t *testing.T, db store.Warehouse) {
	ctx := context.Background()
	if e := db.Engine(); e == "" || strings.Contains(e, "password") {
		t.Errorf("Engine() = %q: want the engine and where, no secret", e)
	}
	built(t, "Ping", db.Ping(ctx))
	ok, err := db.HasTable(ctx, "restore")
	built(t, "HasTable", err)
	if !ok {
		t.Error("HasTable(restore) = false")
	}
	if ok, _ := db.HasTable(ctx, "no_such_table"); ok {
		t.Error("HasTable(no_such_table) = true")
	}
	var got []store.Progress
	db.SetProgress(func(p store.Progress) { got = append(got, p) })
	db.Report(store.Progress{Phase: store.PhaseDerive, Done: 1, Total: 2})
	if len(got) != 1 || got[0].Done != 1 {
		t.Errorf("progress reports %+v, want the one reported", got)
	}
	db.SetProgress(nil)
	db.Report(store.Progress{Phase: store.PhaseDerive})
	v1, err := db.DataVersion(ctx)
	built(t, "DataVersion", err)
	if v1 == "" {
		t.Error("DataVersion is empty")
	}
	built(t, "Check", db.Check(ctx))
}

func contractTokens(t *testing.T, db store.Warehouse) {
	ctx := context.Background()
	tok, err := db.CreateCollectorToken(ctx, "zone-a", "SQL-A-*")
	built(t, "CreateCollectorToken", err)
	if !strings.HasPrefix(tok, "rwc_") {
		t.Errorf("token %q: want the rwc_ prefix", tok)
	}
	if _, err := db.CreateCollectorToken(ctx, "ZONE-A"); store.ErrorCode(err) != store.ECONFLICT {
		t.Errorf("second token for the same name (any case): %v, want a conflict", err)
	}
	if _, err := db.CreateCollectorToken(ctx, "bad name"); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("bad collector name: %v, want invalid", err)
	}
	name, err := db.CollectorForToken(ctx, tok)
	if err != nil || name != "zone-a" {
		t.Errorf("CollectorForToken = %q, %v; want zone-a", name, err)
	}
	if _, err := db.CollectorForToken(ctx, tok[:len(tok)-1]+"x"); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("a wrong token: %v, want not found", err)
	}
	if err := db.SetCollectorAGs(ctx, "zone-a", []string{"AG1", "ag1", " AG2 "}); err != nil {
		t.Fatal(err)
	}
	ts, err := db.CollectorTokens(ctx)
	if err != nil || len(ts) != 1 {
		t.Fatalf("CollectorTokens = %+v, %v", ts, err)
	}
	if got := ts[0]; got.Name != "zone-a" || len(got.Instances) != 1 || got.Instances[0] != "SQL-A-*" || len(got.AGs) != 2 || got.Revoked != nil {
		t.Errorf("token listed as %+v", got)
	}
	if err := db.RevokeCollectorToken(ctx, "zone-a"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CollectorForToken(ctx, tok); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("a revoked token: %v, want not found", err)
	}
	if err := db.RevokeCollectorToken(ctx, "zone-a"); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("revoking twice: %v, want not found", err)
	}
	if _, err := db.CreateCollectorToken(ctx, "zone-a"); err != nil {
		t.Errorf("a new token after revoking: %v", err)
	}
}

func contractCollector(t *testing.T, db store.Warehouse) {
	ctx := context.Background()
	start := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	var last int64
	for i := range 3 {
		id, err := db.StartRun(ctx, "sql01", start.Add(time.Duration(i)*15*time.Minute))
		built(t, "StartRun", err)
		fin := start.Add(time.Duration(i)*15*time.Minute + time.Minute)
		if err := db.FinishRun(ctx, store.CollectorRun{ID: id, Status: store.RunOK, Finished: &fin,
			Rows: map[string]int64{"history": int64(i)}}); err != nil {
			t.Fatal(err)
		}
		last = id
	}
	if _, err := db.StartRun(ctx, "SQL02", start); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishRun(ctx, store.CollectorRun{ID: last + 1000, Status: store.RunOK}); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("finishing an unknown run: %v, want not found", err)
	}
	runs, err := db.Runs(ctx, "SQL01", 2)
	if err != nil || len(runs) != 2 || runs[0].ID != last || runs[0].Rows["history"] != 2 || runs[0].Finished == nil {
		t.Fatalf("Runs(SQL01, 2) = %+v, %v; want the newest two, newest first", runs, err)
	}
	latest, err := db.LatestRuns(ctx)
	if err != nil || len(latest) != 2 || latest[0].ID != last || latest[1].Status != store.RunRunning {
		t.Fatalf("LatestRuns = %+v, %v; want SQL01's last run and SQL02's running one", latest, err)
	}

	if _, ok, err := db.Watermark(ctx, "SQL01", "history"); err != nil || ok {
		t.Fatalf("no watermark yet: ok %v, %v", ok, err)
	}
	for _, v := range []string{`{"id":1}`, `{"id":2}`} {
		if err := db.SetWatermark(ctx, "SQL01", "history", v); err != nil {
			t.Fatal(err)
		}
	}
	if v, ok, err := db.Watermark(ctx, "sql01", "history"); err != nil || !ok || v != `{"id":2}` {
		t.Errorf("Watermark = %q, %v, %v; want the last one set, found by any case", v, ok, err)
	}

	if err := db.SetInstanceTags(ctx, "SQL01", map[string]string{"env": "prod"}); err != nil {
		t.Fatal(err)
	}
	tags, err := db.InstanceTags(ctx, "sql01")
	if err != nil || tags["env"] != "prod" {
		t.Errorf("InstanceTags = %v, %v", tags, err)
	}
	if tags, err := db.InstanceTags(ctx, "nowhere"); err != nil || len(tags) != 0 {
		t.Errorf("tags of an unknown instance = %v, %v; want none", tags, err)
	}

	// A change of an existing instance's tags alone moves the data version
	// (the overview's RTO targets and the instances page show them), within
	// the same millisecond too; setting the same tags again (every collector
	// pass does) leaves it, so the dashboard's cache survives the passes.
	version := func() string {
		t.Helper()
		v, err := db.DataVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := version()
	for _, env := range []string{"test", "prod"} {
		if err := db.SetInstanceTags(ctx, "SQL01", map[string]string{"env": env, "rto": "1h"}); err != nil {
			t.Fatal(err)
		}
		after := version()
		if after == before {
			t.Errorf("SQL01's tags set to env=%s: the data version stayed %s", env, before)
		}
		before = after
	}
	if err := db.SetInstanceTags(ctx, "SQL01", map[string]string{"env": "prod", "rto": "1h"}); err != nil {
		t.Fatal(err)
	}
	if after := version(); after != before {
		t.Errorf("the same tags set again (every collector pass does): the data version moved from %s to %s", before, after)
	}
}

func contractPush(t *testing.T, db store.Warehouse) {
	ctx := context.Background()
	if _, err := db.CreateCollectorToken(ctx, "zone-a", "SQL-A-*"); err != nil {
		built(t, "CreateCollectorToken", err)
	}
	if _, err := db.CreateCollectorToken(ctx, "zone-b"); err != nil {
		t.Fatal(err)
	}
	built(t, "AuthorizePush", db.AuthorizePush(ctx, "zone-a", []string{"SQL-A-01", "sql-a-01"}))
	if err := db.AuthorizePush(ctx, "zone-b", []string{"SQL-A-01"}); store.ErrorCode(err) != store.EFORBIDDEN {
		t.Errorf("another zone's instance: %v, want forbidden", err)
	}
	if err := db.AuthorizePush(ctx, "zone-a", []string{"SQL-B-01"}); store.ErrorCode(err) != store.EFORBIDDEN {
		t.Errorf("outside the token's patterns: %v, want forbidden", err)
	}
	if _, err := db.StartRun(ctx, "LOCAL01", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := db.AuthorizePush(ctx, "zone-b", []string{"LOCAL01"}); store.ErrorCode(err) != store.EFORBIDDEN {
		t.Errorf("an instance this server collects: %v, want forbidden", err)
	}
	ts, err := db.CollectorTokens(ctx)
	if err != nil || len(ts) != 2 || len(ts[0].Claimed) != 1 || ts[0].Claimed[0] != "SQL-A-01" {
		t.Errorf("claims listed as %+v, %v", ts, err)
	}

	applied, err := db.PushApplied(ctx, "zone-a", "b1")
	built(t, "PushApplied", err)
	if applied {
		t.Error("a new batch is applied already")
	}
	fin := time.Date(2026, 11, 30, 8, 1, 0, 0, time.UTC)
	run := store.CollectorRun{Instance: "SQL-A-01", Started: fin.Add(-time.Minute), Finished: &fin, Status: store.RunOK}
	for range 2 { // a resend records nothing twice
		if err := db.RecordPush(ctx, "zone-a", "b1", 10, 7, run); err != nil {
			t.Fatal(err)
		}
	}
	if applied, err := db.PushApplied(ctx, "zone-a", "b1"); err != nil || !applied {
		t.Errorf("after RecordPush: applied %v, %v", applied, err)
	}
	runs, err := db.Runs(ctx, "SQL-A-01", 10)
	if err != nil || len(runs) != 1 {
		t.Errorf("runs of a batch recorded twice: %+v, %v; want one", runs, err)
	}
}

// contractFixture is one full restore seen by msdb and the error log, and
// a startup banner (store/sqlite's store_test fixture).
func contractFixture() (store.HistoryRow, store.LogRestore, store.HostSnapshot) {
	at := func(s string) time.Time {
		t, err := time.Parse("2006-01-02 15:04:05.000", s)
		if err != nil {
			panic(err)
		}
		return t
	}
	i64 := func(v int64) *int64 { return &v }
	off := func(v int) *int { return &v }
	h := store.HistoryRow{
		Instance: "SQL01", RestoreHistoryID: 7, RestoreDate: at("2023-11-24 13:03:10.000"), Database: "SQLTestDB",
		RestoreType: "D", SourceServer: "SRC01", SourceDatabase: "SQLTestDB", BackupType: "D",
		FirstLSN: "39000000100000001", LastLSN: "39000000102400001", BackupSize: i64(100 << 20),
		CompressedSize: i64(40 << 20), SoftwareMajor: i64(13), SoftwareMinor: i64(0), SoftwareBuild: i64(4474),
		MediaFamilies: i64(2), Devices: []string{`\\nas\b\a.bak`, `\\nas\b\b.bak`},
		Origin: store.Origin{Source: "history", File: "h.csv", Line: 2},
	}
	l := store.LogRestore{
		Instance: "sql01", Database: "SQLTestDB", Kind: store.KindFull, MessageID: 18267,
		CompletedAt: at("2023-11-24 13:04:00.470"), UTCOffset: off(-300),
		FirstLSN: "39000000100000001", LastLSN: "39000000102400001", DeviceCount: 2, DeviceType: "DISK",
		Devices: []string{`\\nas\b\a.bak`, `\\nas\b\b.bak`}, Has3014: true, Statement: "RESTORE DATABASE",
		Pages: 12800, Seconds: 50, MBps: 2.0,
		Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: 40},
	}
	hs := store.HostSnapshot{Instance: "SQL01", ObservedAt: at("2023-11-01 08:00:00.000"), UTCOffset: off(-300),
		Version: "13.0.4474.0", Cores: i64(8), Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: 1}}
	return h, l, hs
}

func contractImportAll(t *testing.T, db store.Warehouse, reconcile bool) store.ImportSummary {
	t.Helper()
	h, l, hs := contractFixture()
	im, err := db.NewImport(context.Background(), "test", "t")
	built(t, "NewImport", err)
	for _, err := range []error{im.History(h), im.LogRestore(l), im.Host(hs)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	im.Reject(store.Reject{File: "t", Line: 9, Reason: "not a restore"})
	var sum store.ImportSummary
	if reconcile {
		sum, err = im.CommitAndReconcile()
	} else {
		sum, err = im.Commit()
	}
	built(t, "Import.Commit", err)
	return sum
}

func contractImport(t *testing.T, db store.Warehouse) {
	ctx := context.Background()
	sum := contractImportAll(t, db, false)
	if sum.Added != 3 || sum.Duplicates != 0 || len(sum.Rejects) != 1 || len(sum.InstanceIDs) != 1 {
		t.Errorf("first import: %+v; want 3 added, 1 reject, 1 instance", sum)
	}
	sum = contractImportAll(t, db, false)
	if sum.Added != 0 || sum.Duplicates != 3 {
		t.Errorf("the same facts again: added %d duplicates %d, want 0 and 3", sum.Added, sum.Duplicates)
	}
	f := store.ImportedFile{Fingerprint: "abc", Path: "/x/ERRORLOG", Size: 10, Records: 3, ImportedAt: time.Unix(1700000000, 0)}
	if _, ok, err := db.ImportedFile(ctx, "abc"); err != nil || ok {
		t.Fatalf("ImportedFile before: %v, %v", ok, err)
	}
	if err := db.MarkImported(ctx, []store.ImportedFile{f}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := db.ImportedFile(ctx, "abc")
	if err != nil || !ok || got.Path != f.Path || got.Records != 3 {
		t.Errorf("ImportedFile = %+v, %v, %v", got, ok, err)
	}
}

func contractDerivation(t *testing.T, db store.Warehouse) {
	ctx := context.Background()
	contractImportAll(t, db, true)
	rs, n, err := db.ListRestores(ctx, store.RestoreFilter{})
	built(t, "ListRestores", err)
	if n != 1 || len(rs) != 1 {
		t.Fatalf("%d restores (%d counted), want 1: the history row and the log line are one restore", len(rs), n)
	}
	r := rs[0]
	if r.DurationSource != store.DurationEngine || r.DurationS == nil || *r.DurationS != 50 {
		t.Errorf("duration %v from %s, want 50 s from the 3014 line", r.DurationS, r.DurationSource)
	}
	if want := time.Date(2023, 11, 24, 18, 4, 0, 470e6, time.UTC); !r.FinishedAt.Equal(want) {
		t.Errorf("finished %v, want %v (13:04 local at UTC-5)", r.FinishedAt, want)
	}
	if got, err := db.CountAllRestores(ctx); err != nil || got != 1 {
		t.Errorf("CountAllRestores = %d, %v", got, err)
	}
	pending, err := db.AnalysisPending(ctx)
	if err != nil || len(pending) != 1 {
		t.Errorf("AnalysisPending = %v, %v; want the one instance", pending, err)
	}
	if p, err := db.Pending(ctx); err != nil || p.Derive != 0 {
		t.Errorf("Pending after CommitAndReconcile = %+v, %v; want nothing to derive", p, err)
	}
}

func contractPages(t *testing.T, db store.Warehouse) {
	ctx := context.Background()
	contractImportAll(t, db, true)
	tot, err := db.Totals(ctx)
	built(t, "Totals", err)
	// Totals counts restores by their analysed series: none before an analysis.
	if tot.Instances != 1 || tot.LastImport.IsZero() {
		t.Errorf("Totals = %+v, want 1 instance and the import's time", tot)
	}
	insts, err := db.ListInstances(ctx, "")
	built(t, "ListInstances", err)
	if len(insts) != 1 || insts[0].Name != "SQL01" {
		t.Errorf("ListInstances = %+v", insts)
	}
	if _, err := db.GetInstance(ctx, "nowhere"); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("GetInstance(nowhere): %v, want not found", err)
	}
	p, err := db.Restores(ctx, store.RestoreQuery{Filter: store.RestoreFilter{Instance: "sql01"}})
	built(t, "Restores", err)
	if len(p.Restores) != 1 {
		t.Errorf("Restores of sql01: %d, want 1", len(p.Restores))
	}
}

func contractAlerts(t *testing.T, db store.Warehouse) {
	ctx := context.Background()
	since := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	ev := func(key string) store.AlertEvent {
		return store.AlertEvent{Key: key, Kind: store.AlertRegressionConfirmed, Severity: "warning", Instance: "SQL01",
			Title: "slower", Summary: "2x", NextStep: "look", Since: since}
	}
	built(t, "EnqueueAlerts", db.EnqueueAlerts(ctx, ev("k1"), ev("k1"), ev("k2")))
	as, err := db.Alerts(ctx, store.AlertFilter{})
	built(t, "Alerts", err)
	if len(as) != 2 || as[0].Key != "k2" || as[1].Key != "k1" || as[0].Routed {
		t.Fatalf("Alerts = %+v: want k2 and k1, newest first, once each, not routed", as)
	}
	if as, _ := db.Alerts(ctx, store.AlertFilter{Instance: "sql01"}); len(as) != 2 {
		t.Errorf("alerts of sql01 (any case): %d, want 2", len(as))
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	n, err := db.RouteAlerts(ctx, 10, func(a *store.Alert) []store.AlertDelivery {
		return []store.AlertDelivery{{Channel: "mail", Mode: "now", NextAt: now}}
	})
	if err != nil || n != 2 {
		t.Fatalf("RouteAlerts = %d, %v; want 2", n, err)
	}
	if n, err := db.RouteAlerts(ctx, 10, nil); err != nil || n != 0 {
		t.Errorf("routing again = %d, %v; want nothing left", n, err)
	}
	if c, err := db.AlertDeliveryCounts(ctx); err != nil || c[store.DeliveryPending] != 2 {
		t.Errorf("AlertDeliveryCounts = %v, %v", c, err)
	}
	due, err := db.ClaimDeliveries(ctx, "mail", "now", now, now, time.Minute, 10)
	if err != nil || len(due) != 2 {
		t.Fatalf("ClaimDeliveries = %d, %v; want 2", len(due), err)
	}
	if again, err := db.ClaimDeliveries(ctx, "mail", "now", now, now, time.Minute, 10); err != nil || len(again) != 0 {
		t.Errorf("claimed twice within the lease: %d, %v", len(again), err)
	}
	if err := db.MarkDeliveries(ctx, "mail", []store.DeliveryResult{{AlertID: due[0].ID, State: store.DeliverySent},
		{AlertID: due[1].ID, State: store.DeliveryRetrying, NextAt: now.Add(time.Hour), Error: "refused"}}); err != nil {
		t.Fatal(err)
	}
	a, err := db.AckAlert(ctx, "k1", "ann", "known")
	if err != nil || a.AckedBy != "ann" {
		t.Fatalf("AckAlert = %+v, %v", a, err)
	}
	if _, err := db.AckAlert(ctx, "nope", "ann", "x"); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("acknowledging an unknown alert: %v", err)
	}
	as, _ = db.Alerts(ctx, store.AlertFilter{})
	states := map[string]string{}
	for _, a := range as {
		if len(a.Deliveries) == 1 {
			states[a.Key] = a.Deliveries[0].State
		}
	}
	if states["k1"] == states["k2"] || (states["k1"] != store.DeliverySent && states["k1"] != store.DeliverySilenced) {
		t.Errorf("delivery states %v: want one sent, the other silenced by the acknowledgement or sent", states)
	}
	id, err := db.AddSilence(ctx, store.AlertSilence{Instance: "SQL-*", By: "ann", Why: "patching", Until: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if ss, err := db.Silences(ctx, now); err != nil || len(ss) != 1 || ss[0].ID != id {
		t.Errorf("Silences = %+v, %v", ss, err)
	}
	if err := db.EndSilence(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := db.EndSilence(ctx, id+100); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("ending an unknown silence: %v", err)
	}
	q, err := db.SyncAlertConditions(ctx, store.AlertRTOBreach, []store.AlertEvent{ev("rto_breach/SQL01/Sales")})
	if err != nil || q != 1 {
		t.Errorf("a condition starting: queued %d, %v; want 1", q, err)
	}
	if q, _ := db.SyncAlertConditions(ctx, store.AlertRTOBreach, []store.AlertEvent{ev("rto_breach/SQL01/Sales")}); q != 0 {
		t.Errorf("a condition still holding queued %d, want 0", q)
	}
	if _, err := db.PruneAlerts(ctx, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
}

var getenv = os.Getenv
