package alert_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/alert"
	"github.com/restorewatch/restorewatch/ingest/demo"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// TestConditionsOnTheDemoFleet: on the demo fleet, imported and analysed
// as a user would, the outbox holds the confirmed regressions the analysis
// found; the conditions add the RTO breaches the overview lists (DW_Sales
// on the warehouse server), the knee of the 16 TB restore still in flight,
// the instances the collector has not visited for three passes and one
// whose collector failed three passes in a row. Evaluated again, they add
// nothing.
func TestConditionsOnTheDemoFleet(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	fleet, err := demo.Generate(demo.Config{Seed: 1, Dir: filepath.Join(t.TempDir(), "fleet")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := demo.Import(ctx, db, fleet, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := analysis.Run(ctx, db, nil, analysis.Options{Config: analysis.DefaultConfig(), Now: demo.DefaultNow}); err != nil {
		t.Fatal(err)
	}
	regs, err := db.ListRegressions(ctx, store.RegressionFilter{Status: "active"})
	if err != nil {
		t.Fatal(err)
	}
	confirmed, _ := db.Alerts(ctx, store.AlertFilter{Kind: store.AlertRegressionConfirmed, Limit: 1000})
	slow := 0
	for _, a := range confirmed {
		if a.Fields["direction"] == "regression" {
			slow++
		}
	}
	if len(regs) == 0 || slow != len(regs) {
		t.Errorf("%d active regressions, %d confirmed-regression alerts; want one each", len(regs), slow)
	}

	// The anchor of the demo's live part: its restore in flight's last sample.
	curves, err := db.InflightCurves(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var anchor time.Time
	for _, c := range curves {
		if c.LastSeen.After(anchor) {
			anchor = c.LastSeen
		}
	}
	// One instance whose collector failed three passes in a row.
	for i := range 3 {
		at := anchor.Add(time.Duration(i-3) * 15 * time.Minute)
		id, err := db.StartRun(ctx, "SQL-DOWN", at)
		if err != nil {
			t.Fatal(err)
		}
		end := at.Add(30 * time.Second)
		if err := db.FinishRun(ctx, store.CollectorRun{ID: id, Instance: "SQL-DOWN", Finished: &end, Status: store.RunFailed,
			Errors: map[string]string{"login": "Login failed for user 'restorewatch' (18456)"}}); err != nil {
			t.Fatal(err)
		}
	}
	c := &alert.Conditions{DB: db, Analysis: analysis.Options{Config: analysis.DefaultConfig()},
		Now: func() time.Time { return anchor.Add(time.Minute) }}
	if err := c.Evaluate(ctx); err != nil {
		t.Fatal(err)
	}
	byKind := func(kind string) []store.Alert {
		as, err := db.Alerts(ctx, store.AlertFilter{Kind: kind, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return as
	}
	rto := byKind(store.AlertRTOBreach)
	found := false
	for _, a := range rto {
		found = found || a.Database == "DW_Sales" && strings.Contains(a.Title, "over its RTO") && strings.HasSuffix(a.Link, "/plan")
	}
	if !found {
		t.Errorf("no RTO breach for DW_Sales: %+v", rto)
	}
	knees := byKind(store.AlertKnee)
	if len(knees) != 1 || !strings.Contains(knees[0].Title, "slowed") || knees[0].NextStep == "" {
		t.Errorf("knees in flight: %+v", knees)
	}
	failing := byKind(store.AlertCollectorFailing)
	if len(failing) != 1 || failing[0].Instance != "SQL-DOWN" || !strings.Contains(failing[0].Summary, "18456") {
		t.Errorf("failing collectors: %+v", failing)
	}
	if s := byKind(store.AlertSilent); len(s) != 0 {
		t.Errorf("silent right after the passes: %+v", s)
	}
	// Three passes later nothing has been heard: every instance is silent,
	// once; the conditions found again add nothing.
	c.Now = func() time.Time { return anchor.Add(2 * time.Hour) }
	for range 2 {
		if err := c.Evaluate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	runs, _ := db.LatestRuns(ctx)
	if s := byKind(store.AlertSilent); len(s) != len(runs) || len(runs) < 2 {
		t.Errorf("%d silent alerts for %d instances", len(s), len(runs))
	}
	if n := len(byKind(store.AlertRTOBreach)); n != len(rto) {
		t.Errorf("RTO breaches went from %d to %d on re-evaluation", len(rto), n)
	}
	if n := len(byKind(store.AlertCollectorFailing)); n != 1 {
		t.Errorf("failing alerts: %d after re-evaluation", n)
	}
}

// TestSilentZone: a push zone whose last batch is older than three
// collector intervals is silent, once; a revoked one is not.
func TestSilentZone(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	for _, name := range []string{"zone-b", "zone-c"} {
		if _, err := db.CreateCollectorToken(ctx, name); err != nil {
			t.Fatal(err)
		}
		if err := db.RecordPush(ctx, name, "batch-1-"+name, 10, 10); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.RevokeCollectorToken(ctx, "zone-c"); err != nil {
		t.Fatal(err)
	}
	c := &alert.Conditions{DB: db, CollectorInterval: 10 * time.Minute, Now: func() time.Time { return time.Now().Add(20 * time.Minute) }}
	if es, err := c.Silent(ctx); err != nil || len(es) != 0 {
		t.Fatalf("after two intervals: %v %v", es, err)
	}
	c.Now = func() time.Time { return time.Now().Add(31 * time.Minute) }
	for range 2 {
		if err := c.Evaluate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	as, _ := db.Alerts(ctx, store.AlertFilter{Kind: store.AlertSilent})
	if len(as) != 1 || as[0].Fields["zone"] != "zone-b" || !strings.Contains(as[0].Title, "Zone collector zone-b") {
		t.Errorf("silent zones: %+v", as)
	}
}
