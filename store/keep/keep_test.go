package keep_test

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/demo"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/keep"
	"github.com/restorewatch/restorewatch/store/sqlite"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// demoWarehouse is a small demo fleet imported and analysed.
func demoWarehouse(t *testing.T) *sqlite.DB {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db := storetest.OpenAt(t, filepath.Join(dir, "w.db"))
	fleet, err := demo.Generate(demo.Config{Seed: 3, Instances: 12, Restores: 2000, Dir: filepath.Join(dir, "fleet")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := demo.Import(ctx, db, fleet, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := analysis.Run(ctx, db, nil, analysis.Options{Config: analysis.DefaultConfig(), Now: demo.DefaultNow}); err != nil {
		t.Fatal(err)
	}
	return db
}

// equalFigures compares figures, NaN weeks equal to NaN weeks.
func equalFigures(a, b keep.Figures) bool {
	if len(a.Weeks) != len(b.Weeks) {
		return false
	}
	for i := range a.Weeks {
		if a.Weeks[i] != b.Weeks[i] && !(math.IsNaN(a.Weeks[i]) && math.IsNaN(b.Weeks[i])) {
			return false
		}
	}
	a.Weeks, b.Weeks = nil, nil
	return reflect.DeepEqual(a, b)
}

// What Refresh keeps equals what a fresh computation from every restore
// makes, under the current data version; a later change of the data makes
// it not current, and the next Refresh keeps the new figures.
func TestRefreshKeepsWhatAFreshComputationMakes(t *testing.T) {
	ctx := context.Background()
	db := demoWarehouse(t)
	now := time.Now()
	r, err := keep.Refresh(ctx, db, "v1", now, false) // none kept: all computed
	if err != nil {
		t.Fatal(err)
	}
	version, err := db.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != version || !r.OrdersSaved {
		t.Fatalf("refreshed %+v; want version %s and the orders saved", r, version)
	}

	fresh, err := db.RestoreOrders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantFigures := keep.FiguresOf(fresh, now)
	wantCohorts, err := keep.CohortsOf(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	a, ok, err := keep.Kept(ctx, db, keep.NameFigures, "v1", version)
	if err != nil || !ok {
		t.Fatalf("figures kept: %v, %v", ok, err)
	}
	var gotFigures keep.Figures
	if err := keep.Decode(a.Body, &gotFigures); err != nil {
		t.Fatal(err)
	}
	if !equalFigures(gotFigures, wantFigures) || gotFigures.Restores == 0 || !gotFigures.Settled() {
		t.Errorf("kept figures %+v; want %+v", gotFigures, wantFigures)
	}
	a, ok, err = keep.Kept(ctx, db, keep.NameCohorts, "v1", version)
	if err != nil || !ok {
		t.Fatalf("cohorts kept: %v, %v", ok, err)
	}
	var gotCohorts keep.Cohorts
	if err := keep.Decode(a.Body, &gotCohorts); err != nil {
		t.Fatal(err)
	}
	if gotCohorts.Seq != fresh.OrdersSeq() {
		t.Errorf("kept cohorts at change %d; the orders are at %d", gotCohorts.Seq, fresh.OrdersSeq())
	}
	gotCohorts.Seq = 0
	if !reflect.DeepEqual(gotCohorts, wantCohorts) || gotCohorts.Measured == 0 {
		t.Errorf("kept cohorts %+v; want %+v", gotCohorts, wantCohorts)
	}
	a, ok, err = keep.Kept(ctx, db, keep.NameRTO, "v1", version)
	if err != nil || !ok {
		t.Fatalf("RTO candidates kept: %v, %v", ok, err)
	}
	var gotRTO keep.RTO
	if err := keep.Decode(a.Body, &gotRTO); err != nil {
		t.Fatal(err)
	}
	wantRTO, err := db.RTOCandidates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(gotRTO.Candidates) != len(wantRTO) || len(wantRTO) == 0 {
		t.Fatalf("kept %d RTO candidates; want %d", len(gotRTO.Candidates), len(wantRTO))
	}
	for i := range wantRTO {
		g, w := gotRTO.Candidates[i], wantRTO[i]
		if len(g.Tags) == 0 && len(w.Tags) == 0 {
			g.Tags, w.Tags = nil, nil
		}
		if !g.LastFull.Equal(w.LastFull) {
			t.Errorf("candidate %d: last full %s; want %s", i, g.LastFull, w.LastFull)
		}
		g.LastFull, w.LastFull = time.Time{}, time.Time{}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("candidate %d: kept %+v; want %+v", i, g, w)
		}
	}
	a, ok, err = keep.Kept(ctx, db, keep.NameInstances, "v1", version)
	if err != nil || !ok {
		t.Fatalf("instances kept: %v, %v", ok, err)
	}
	gotInsts, err := keep.DecodeInstances(a.Body)
	if err != nil {
		t.Fatal(err)
	}
	wantInsts, err := db.ListInstances(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if g, w := mustJSON(t, gotInsts), mustJSON(t, wantInsts); g != w || len(wantInsts) == 0 {
		t.Errorf("kept instances %s; want %s", g, w)
	}
	if _, ok, _ := keep.Kept(ctx, db, keep.NameCohorts, "v2", version); ok {
		t.Error("another release reads what v1 kept")
	}

	// The kept orders load as the same orders.
	loaded, err := db.LoadOrders(ctx)
	if err != nil || loaded == nil {
		t.Fatalf("kept orders: %v, %v", loaded, err)
	}
	if got := keep.FiguresOf(loaded, now); !equalFigures(got, wantFigures) {
		t.Errorf("figures of the kept orders %+v; want %+v", got, wantFigures)
	}

	// New restores: what was kept is behind, and Refresh catches up
	// without saving the orders again (a few changes).
	if err := addRestores(ctx, db, 5); err != nil {
		t.Fatal(err)
	}
	later, err := db.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := keep.Kept(ctx, db, keep.NameFigures, "v1", later); ok {
		t.Fatal("figures current after new restores")
	}
	r, err = keep.Refresh(ctx, db, "v1", now, false)
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != later || r.OrdersSaved || r.CohortsKept {
		t.Errorf("refreshed %+v; want version %s, the orders not saved again, the cohorts left (5 new restores)", r, later)
	}
	if _, ok, _ := keep.Kept(ctx, db, keep.NameCohorts, "v1", later); ok {
		t.Error("cohorts current after 5 new restores without all")
	}
	if r, err := keep.Refresh(ctx, db, "v1", now, true); err != nil || !r.CohortsKept {
		t.Fatalf("refresh with all: %+v, %v", r, err)
	}
	if _, ok, _ := keep.Kept(ctx, db, keep.NameCohorts, "v1", later); !ok {
		t.Error("cohorts not current after a refresh with all")
	}
	a, ok, err = keep.Kept(ctx, db, keep.NameFigures, "v1", later)
	if err != nil || !ok {
		t.Fatalf("figures kept after the change: %v, %v", ok, err)
	}
	if err := keep.Decode(a.Body, &gotFigures); err != nil {
		t.Fatal(err)
	}
	if !gotFigures.Last.After(wantFigures.Last) {
		t.Errorf("figures after 5 new restores: %d restores, newest %s; before %d, %s",
			gotFigures.Restores, gotFigures.Last, wantFigures.Restores, wantFigures.Last)
	}
	fresh, err = db.RestoreOrders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := keep.FiguresOf(fresh, now); !equalFigures(gotFigures, want) {
		t.Errorf("figures kept after the change %+v; fresh %+v", gotFigures, want)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// addRestores imports n full restores of a new instance, a day apart,
// ending an hour after the newest restore of the warehouse.
func addRestores(ctx context.Context, db *sqlite.DB, n int) error {
	o, err := db.RestoreOrders(ctx)
	if err != nil {
		return err
	}
	_, last := o.Span()
	im, err := db.NewImport(ctx, "test", "added")
	if err != nil {
		return err
	}
	for i := range n {
		at := last.Add(time.Hour - time.Duration(n-1-i)*24*time.Hour)
		err := im.LogRestore(store.LogRestore{Instance: "ADDED-SQL01", Database: "Added", Kind: store.KindFull, MessageID: 18267,
			CompletedAt: at, Pages: 131072, Seconds: 20, MBps: 51.2, Origin: store.Origin{Source: "errorlog", File: "ERRORLOG"}})
		if err != nil {
			return err
		}
	}
	if _, err := im.Commit(); err != nil {
		return err
	}
	return db.Reconcile(ctx)
}

// headless is a warehouse whose orders' snapshot has no heads, as one an
// older release saved.
type headless struct{ *sqlite.DB }

func (headless) LoadOrderHeads(context.Context) (store.OrderHeads, error) { return nil, nil }

// A snapshot without heads is saved again, with them, by the next Refresh
// however little changed: a server's first restores page reads the heads.
func TestRefreshSavesASnapshotWithoutHeads(t *testing.T) {
	ctx := context.Background()
	db := demoWarehouse(t)
	if r, err := keep.Refresh(ctx, db, "v1", time.Now(), false); err != nil || !r.OrdersSaved {
		t.Fatalf("first refresh: %+v, %v", r, err)
	}
	if h, err := db.LoadOrderHeads(ctx); err != nil || h == nil {
		t.Fatalf("heads after a refresh: %v, %v", h, err)
	}
	if r, err := keep.Refresh(ctx, headless{db}, "v1", time.Now(), false); err != nil || !r.OrdersSaved {
		t.Fatalf("refresh of a snapshot without heads: %+v, %v; want the orders saved", r, err)
	}
	if r, err := keep.Refresh(ctx, db, "v1", time.Now(), false); err != nil || r.OrdersSaved {
		t.Fatalf("refresh with heads and nothing changed: %+v, %v; want the orders not saved", r, err)
	}
}
