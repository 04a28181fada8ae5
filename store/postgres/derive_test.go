package postgres_test

import (
	"cmp"
	"context"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/ingest/demo"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/postgres"
	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// smallFleet writes a small demo fleet (every source the demo writes: msdb
// history, error logs, client output, dbatools, backup history) once per
// test.
func smallFleet(t *testing.T) []ingest.File {
	t.Helper()
	f, err := demo.Generate(demo.Config{Instances: 4, Restores: 1200, Months: 2, Seed: 7, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	files := make([]ingest.File, len(f.Files))
	for i, file := range f.Files {
		files[i] = ingest.File{Path: file.Path, Kind: file.Kind}
		if file.Kind == ingest.Messages {
			files[i].Instance = file.Instance
		}
	}
	return files
}

// importFleet imports files into db (ingest's loader, as `import` does) and
// derives; it returns the records added. One worker: both engines then
// number instances and restores alike.
func importFleet(t *testing.T, db store.Warehouse, files []ingest.File) int64 {
	t.Helper()
	ctx := context.Background()
	run, err := ingest.NewLoader(db, ingest.LoaderOptions{}).StoreFiles(ctx, files, ingest.FilesOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range run.Files {
		if f.Err != nil {
			t.Fatalf("import %s: %v", f.Path, f.Err)
		}
	}
	if err := db.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	return run.Added
}

// restoresOf lists every restore of db in one order, without the ids each
// engine numbers its own way.
func restoresOf(t *testing.T, db store.Warehouse) []store.Restore {
	t.Helper()
	rs, _, err := db.ListRestores(context.Background(), store.RestoreFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		rs[i].ID = 0
	}
	slices.SortFunc(rs, func(a, b store.Restore) int {
		return cmp.Or(cmp.Compare(a.Instance, b.Instance), cmp.Compare(a.Database, b.Database), a.At.Compare(b.At),
			cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Sources, b.Sources))
	})
	return rs
}

// TestImportDerivesAsOnSQLite: the demo fleet's files imported into
// PostgreSQL derive exactly the restores they derive in SQLite, and
// importing them again (a new loader, as a second `import` run) adds
// nothing and changes no restore.
func TestImportDerivesAsOnSQLite(t *testing.T) {
	files := smallFleet(t)
	lite, pg := storetest.Open(t), open(t)
	want := importFleet(t, lite, files)
	if got := importFleet(t, pg, files); got != want || got == 0 {
		t.Fatalf("PostgreSQL added %d records, SQLite %d", got, want)
	}
	a, b := restoresOf(t, lite), restoresOf(t, pg)
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("SQLite derived %d restores, PostgreSQL %d", len(a), len(b))
	}
	t.Logf("%d records, %d restores on each engine", want, len(a))
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			t.Fatalf("restore %d:\nSQLite     %+v\nPostgreSQL %+v", i, a[i], b[i])
		}
	}
	analyseBoth(t, lite, pg)
	if added := importFleet(t, pg, files); added != 0 {
		t.Errorf("the same files again added %d records, want 0", added)
	}
	if again := restoresOf(t, pg); !reflect.DeepEqual(again, b) {
		t.Errorf("a second import changed the restores: %d, were %d", len(again), len(b))
	}
}

// TestConcurrentDerivation: two replicas (two pools on one database)
// reconciling at once derive every instance once, under its advisory
// lock, and leave exactly the restores one replica alone derives.
func TestConcurrentDerivation(t *testing.T) {
	ctx := context.Background()
	files := smallFleet(t)
	alone := open(t)
	importFleet(t, alone, files)
	want := restoresOf(t, alone)

	u := pgtest.URL(t)
	var dbs [2]*postgres.DB
	for i := range dbs {
		db, err := postgres.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	run, err := ingest.NewLoader(dbs[0], ingest.LoaderOptions{}).StoreFiles(ctx, files, ingest.FilesOptions{})
	if err != nil || run.Added == 0 {
		t.Fatalf("import: %d added, %v", run.Added, err)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(dbs))
	for i, db := range dbs {
		wg.Go(func() { errs[i] = db.Reconcile(ctx) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
	}
	if got := restoresOf(t, dbs[1]); !reflect.DeepEqual(got, want) {
		t.Errorf("two replicas derived %d restores, one alone %d (or others)", len(got), len(want))
	}
	// Each instance was derived once: its derived counter is 1.
	marks, err := dbs[0].AnalysisPending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for id, n := range marks {
		if n != 1 {
			t.Errorf("instance %d derived %d times, want once", id, n)
		}
	}
	if p, err := dbs[1].Pending(ctx); err != nil || p.Derive != 0 {
		t.Errorf("after both replicas: %+v, %v; want nothing left to derive", p, err)
	}
}

// analyseBoth runs the analysis on both warehouses, which hold the same
// restores, and wants the same series read and the same findings saved.
func analyseBoth(t *testing.T, lite, pg store.Warehouse) {
	t.Helper()
	ctx := context.Background()
	sa, err := lite.LoadSeries(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := pg.LoadSeries(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sa) == 0 || len(sa) != len(sb) {
		t.Fatalf("LoadSeries: SQLite %d series, PostgreSQL %d", len(sa), len(sb))
	}
	for i := range sa {
		a, b := sa[i], sb[i]
		a.Points, b.Points = nil, nil
		if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(sa[i].Points, sb[i].Points) {
			t.Fatalf("LoadSeries, series %d:\nSQLite     %+v %v\nPostgreSQL %+v %v", i, a, sa[i].Points[:3], b, sb[i].Points[:3])
		}
	}
	for _, w := range []store.Warehouse{lite, pg} {
		ids, err := w.InstanceIDs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := analysis.Run(ctx, w, ids, analysis.Options{Now: demo.DefaultNow}); err != nil {
			t.Fatal(err)
		}
	}
	same := func(what string, call func(w store.Warehouse) (any, error)) {
		t.Helper()
		a, aerr := call(lite)
		b, berr := call(pg)
		if aerr != nil || berr != nil || !reflect.DeepEqual(a, b) {
			t.Errorf("%s:\nSQLite     %+v (%v)\nPostgreSQL %+v (%v)", what, a, aerr, b, berr)
		}
	}
	same("ListSeries", func(w store.Warehouse) (any, error) { return w.ListSeries(ctx, store.SeriesFilter{}) })
	same("ListRegressions", func(w store.Warehouse) (any, error) {
		rs, err := w.ListRegressions(ctx, store.RegressionFilter{Direction: "any"})
		for i := range rs {
			rs[i].FirstSeen, rs[i].LastSeen = time.Time{}, time.Time{} // each engine's clock
		}
		return rs, err
	})
	same("ListExposures", func(w store.Warehouse) (any, error) { return w.ListExposures(ctx) })
	same("ListWatches", func(w store.Warehouse) (any, error) {
		ws, err := w.ListWatches(ctx, store.WatchFilter{})
		for i := range ws {
			ws[i].FirstSeen, ws[i].ClosedAt = time.Time{}, nil
		}
		return ws, err
	})
	same("alert keys", func(w store.Warehouse) (any, error) {
		as, err := w.Alerts(ctx, store.AlertFilter{})
		var keys []string
		for _, a := range as {
			keys = append(keys, a.Key)
		}
		slices.Sort(keys)
		if w == pg {
			t.Logf("%d alerts queued by the findings", len(keys))
		}
		return keys, err
	})
	same("AnalysisPending", func(w store.Warehouse) (any, error) { return w.AnalysisPending(ctx) })
}
