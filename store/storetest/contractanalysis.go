package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
)

// contractAnalysis: a series that slows down threefold, imported and
// derived, then analysed through store/analysis (LoadSeries, SaveFindings):
// the warehouse keeps the series, the regression and its alert, and no
// analysis is left pending; a second analysis finds the same regression,
// not a second one.
func contractAnalysis(t *testing.T, db store.Warehouse) {
	ctx := context.Background()
	im, err := db.NewImport(ctx, "test", "fleet")
	built(t, "NewImport", err)
	start := time.Date(2026, 6, 1, 2, 0, 0, 0, time.UTC)
	size := int64(8 << 30)
	for day := range 60 {
		at := start.Add(time.Duration(day) * 24 * time.Hour)
		secs := 100.0 + float64(day%3)
		if day >= 40 {
			secs *= 3
		}
		lsn := fmt.Sprintf("%d00000001", 1000+day)
		if err := im.History(store.HistoryRow{Instance: "SQL01", RestoreHistoryID: int64(day + 1), RestoreDate: at, Database: "Sales",
			RestoreType: "D", BackupType: "D", BackupSize: &size, FirstLSN: lsn, LastLSN: lsn,
			Origin: store.Origin{Source: "history", File: "h.csv", Line: day + 2}}); err != nil {
			t.Fatal(err)
		}
		if err := im.LogRestore(store.LogRestore{Instance: "SQL01", Database: "Sales", Kind: store.KindFull, MessageID: 18267,
			CompletedAt: at.Add(time.Duration(secs) * time.Second), FirstLSN: lsn, LastLSN: lsn, Has3014: true,
			Statement: "RESTORE DATABASE", Pages: 1 << 20, Seconds: secs, MBps: 8192 / secs,
			Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: day + 2}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := im.CommitAndReconcile(); err != nil {
		built(t, "Reconcile", err)
	}
	ids, err := db.InstanceIDs(ctx)
	if err != nil || len(ids) != 1 {
		t.Fatalf("InstanceIDs = %v, %v", ids, err)
	}
	series, err := db.LoadSeries(ctx, ids)
	built(t, "LoadSeries", err)
	if len(series) != 1 || len(series[0].Points) != 60 || series[0].Instance != "SQL01" {
		t.Fatalf("LoadSeries: %d series, want SQL01's one of 60 points", len(series))
	}
	opt := analysis.Options{Now: start.Add(70 * 24 * time.Hour)}
	for pass := range 2 {
		if _, err := analysis.Run(ctx, db, ids, opt); err != nil {
			built(t, "SaveFindings", err)
		}
		regs, err := db.ListRegressions(ctx, store.RegressionFilter{})
		if err != nil || len(regs) != 1 || regs[0].Database != "Sales" || regs[0].Ratio > 0.5 {
			t.Fatalf("pass %d: regressions %+v, %v; want Sales about 3× slower", pass, regs, err)
		}
		if ss, err := db.ListSeries(ctx, store.SeriesFilter{}); err != nil || len(ss) != 1 || ss[0].Verdict != "regression" {
			t.Errorf("pass %d: series %+v, %v", pass, ss, err)
		}
		if p, err := db.AnalysisPending(ctx); err != nil || len(p) != 0 {
			t.Errorf("pass %d: analysis still pending: %v, %v", pass, p, err)
		}
	}
	as, err := db.Alerts(ctx, store.AlertFilter{})
	if err != nil || len(as) != 1 || as[0].Kind != store.AlertRegressionConfirmed {
		t.Errorf("alerts %+v, %v; want the regression's one", as, err)
	}
}
