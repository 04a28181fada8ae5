package postgres_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/postgres"
	"github.com/restorewatch/restorewatch/store/sqlite"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// analysedSQLite builds a SQLite warehouse with two instances' restores, a
// slowdown the analysis finds, tags, a host snapshot and an imported file.
func analysedSQLite(t *testing.T) *sqlite.DB {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	im, err := db.NewImport(ctx, "test", "fleet")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 6, 1, 2, 0, 0, 0, time.UTC)
	size := int64(8 << 30)
	var id int64
	for _, inst := range []string{"SQL01", "sql02"} {
		if err := im.Host(store.HostSnapshot{Instance: inst, ObservedAt: start.Add(-time.Hour), Version: "15.0.4236.7",
			Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: 1}}); err != nil {
			t.Fatal(err)
		}
		for day := range 60 {
			id++
			at := start.Add(time.Duration(day) * 24 * time.Hour)
			secs := 100.0 + float64(day%3)
			if inst == "SQL01" && day >= 40 {
				secs *= 3 // the slowdown
			}
			lsn := fmt.Sprintf("%d00000001", 1000+day)
			if err := im.History(store.HistoryRow{Instance: inst, RestoreHistoryID: id, RestoreDate: at, Database: "Sales",
				RestoreType: "D", BackupType: "D", BackupSize: &size, FirstLSN: lsn, LastLSN: lsn,
				Origin: store.Origin{Source: "history", File: "h.csv", Line: int(id)}}); err != nil {
				t.Fatal(err)
			}
			if err := im.LogRestore(store.LogRestore{Instance: inst, Database: "Sales", Kind: store.KindFull, MessageID: 18267,
				CompletedAt: at.Add(time.Duration(secs) * time.Second), FirstLSN: lsn, LastLSN: lsn, Has3014: true,
				Statement: "RESTORE DATABASE", Pages: 1 << 20, Seconds: secs, MBps: 8192 / secs,
				Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: int(id) + 1}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := im.CommitAndReconcile(); err != nil {
		t.Fatal(err)
	}
	ids, err := db.InstanceIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := analysis.Run(ctx, db, ids, analysis.Options{Now: start.Add(70 * 24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetInstanceTags(ctx, "SQL01", map[string]string{"env": "prod", "rto": "4h"}); err != nil {
		t.Fatal(err)
	}
	t0 := start.Add(10 * 24 * time.Hour)
	off := -300
	sets := []store.BackupSet{
		{Instance: "SQL01", Database: "Sales", UUID: "6C1B0E1E-0000-4A8E-9E1B-000000000001", Type: "D", Families: 2,
			FirstLSN: "39000000010000001", LastLSN: "39000000010500001", Start: t0, Finish: t0.Add(20 * time.Minute), UTCOffset: &off,
			Size: 40 << 30, CompressedSize: 12 << 30, Checksums: true,
			Media: []store.BackupMedia{{Family: 1, DeviceType: 2, Device: `D:\Backup\Sales_1.bak`}, {Family: 2, DeviceType: 2, Device: `D:\Backup\Sales_2.bak`}},
			Files: []store.BackupFile{{LogicalName: "Sales_z", PhysicalName: `D:\Data\Sales.mdf`, Type: "D", Size: 50 << 30, Filegroup: "PRIMARY"},
				{LogicalName: "Sales_a", PhysicalName: `D:\Data\Sales2.ndf`, Type: "D", Filegroup: "SECOND"},
				{LogicalName: "Sales_log", PhysicalName: `L:\Log\Sales_log.ldf`, Type: "L"}},
			Origin: store.Origin{File: "backups.csv", Line: 2}},
		{Instance: "SQL01", Database: "Sales", UUID: "6C1B0E1E-0000-4A8E-9E1B-000000000002", Type: "L",
			FirstLSN: "39000000010500001", LastLSN: "39000000010600001", Start: t0.Add(time.Hour), Finish: t0.Add(time.Hour + time.Minute),
			Origin: store.Origin{File: "backups.csv", Line: 3}},
		{Instance: "SQL01", Database: "HR", UUID: "6C1B0E1E-0000-4A8E-9E1B-000000000003", Type: "I",
			FirstLSN: "41000000010000001", LastLSN: "41000000010500001", Start: t0.Add(time.Hour), Finish: t0.Add(2 * time.Hour),
			Origin: store.Origin{File: "backups.csv", Line: 4}},
		{Instance: "sql02", Database: "Sales", UUID: "6C1B0E1E-0000-4A8E-9E1B-000000000004", Type: "D",
			FirstLSN: "39000000010000001", LastLSN: "39000000010500001", Start: t0, Finish: t0.Add(30 * time.Minute),
			Origin: store.Origin{File: "backups.csv", Line: 5}},
	}
	if _, err := storetest.BackupSets(ctx, db, sets); err != nil {
		t.Fatal(err)
	}
	if err := db.MarkImported(ctx, []store.ImportedFile{{Fingerprint: "f1", Path: "/x/h.csv", Size: 9, Records: 240}}); err != nil {
		t.Fatal(err)
	}
	return db
}

// migrated copies src into a new PostgreSQL warehouse (restorewatch
// migrate's way).
func migrated(t *testing.T, src *sqlite.DB) *postgres.DB {
	t.Helper()
	return migrateInto(t, src, open(t))
}

// migrateInto copies src into the empty PostgreSQL warehouse dst.
func migrateInto(t *testing.T, src *sqlite.DB, dst *postgres.DB) *postgres.DB {
	t.Helper()
	return loadInto(t, src, dst, true)
}

// loadInto copies src into the empty dst, telling it the facts' months
// or not.
func loadInto(t *testing.T, src *sqlite.DB, dst *postgres.DB, withMonths bool) *postgres.DB {
	t.Helper()
	ctx := context.Background()
	tables, err := src.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var months func() ([]int32, error)
	if withMonths {
		months = func() ([]int32, error) { return src.FactMonths(ctx) }
	}
	if _, err := dst.Load(ctx, tables, func(tb string) (int64, error) { return src.CountRows(ctx, tb) },
		func(tb string) ([]string, postgres.TableSource, error) {
			r, err := src.ReadTable(ctx, tb)
			if err != nil {
				return nil, nil, err
			}
			return r.Columns, r, nil
		}, months); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestPagesAnswerAsOnSQLite: on one warehouse migrated from SQLite, every
// page read built on PostgreSQL answers exactly what SQLite answers, and
// the writes among them change both alike.
func TestPagesAnswerAsOnSQLite(t *testing.T) {
	ctx := context.Background()
	lite := analysedSQLite(t)
	pg := migrated(t, lite)
	t0 := time.Date(2026, 6, 11, 2, 0, 0, 0, time.UTC) // the fixture's backups
	regs, err := lite.ListRegressions(ctx, store.RegressionFilter{})
	if err != nil || len(regs) == 0 {
		t.Fatalf("the fixture's analysis found no regression (%v): the comparison would be empty", err)
	}
	for _, w := range []store.Warehouse{lite, pg} {
		if err := w.SetRegressionStatus(ctx, regs[0].ID, store.StatusAcknowledged, "looking"); err != nil {
			t.Fatal(err)
		}
	}
	same := func(what string, call func(w store.Warehouse) (any, error)) {
		t.Helper()
		a, aerr := call(lite)
		b, berr := call(pg)
		if aerr != nil || berr != nil {
			if store.ErrorCode(aerr) != store.ErrorCode(berr) {
				t.Errorf("%s: SQLite %v, PostgreSQL %v", what, aerr, berr)
			}
			return
		}
		// status_at is each engine's own clock.
		if rs, ok := a.([]store.Regression); ok {
			for i := range rs {
				rs[i].StatusAt = nil
			}
			for i := range b.([]store.Regression) {
				b.([]store.Regression)[i].StatusAt = nil
			}
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s:\nSQLite     %+v\nPostgreSQL %+v", what, a, b)
		}
	}
	same("Totals", func(w store.Warehouse) (any, error) { return w.Totals(ctx) })
	same("CountAllRestores", func(w store.Warehouse) (any, error) { return w.CountAllRestores(ctx) })
	same("RestoresPerInstance", func(w store.Warehouse) (any, error) { return w.RestoresPerInstance(ctx) })
	same("InstanceIDs", func(w store.Warehouse) (any, error) { return w.InstanceIDs(ctx) })
	same("ListInstances", func(w store.Warehouse) (any, error) { return w.ListInstances(ctx, "") })
	same("GetInstance(sql01)", func(w store.Warehouse) (any, error) { return w.GetInstance(ctx, "sql01") })
	same("GetInstance(nowhere)", func(w store.Warehouse) (any, error) { return w.GetInstance(ctx, "nowhere") })
	same("HostHistory", func(w store.Warehouse) (any, error) { return w.HostHistory(ctx, "SQL02") })
	same("InstanceTags", func(w store.Warehouse) (any, error) { return w.InstanceTags(ctx, "sql01") })
	same("ListExposures", func(w store.Warehouse) (any, error) { return w.ListExposures(ctx) })
	for _, f := range []store.RegressionFilter{{}, {Direction: "any"}, {Status: "active"}, {Instance: "SQL01", Database: "Sales"}} {
		same(fmt.Sprintf("ListRegressions(%+v)", f), func(w store.Warehouse) (any, error) { return w.ListRegressions(ctx, f) })
	}
	same("GetRegression", func(w store.Warehouse) (any, error) {
		r, err := w.GetRegression(ctx, regs[0].ID)
		if r != nil {
			r.StatusAt = nil
		}
		return r, err
	})
	same("GetRegression(0)", func(w store.Warehouse) (any, error) { return w.GetRegression(ctx, 1<<40) })
	same("ListSeries", func(w store.Warehouse) (any, error) { return w.ListSeries(ctx, store.SeriesFilter{}) })
	same("ListSeries(SQL01)", func(w store.Warehouse) (any, error) { return w.ListSeries(ctx, store.SeriesFilter{Instance: "SQL01"}) })
	same("ListWatches", func(w store.Warehouse) (any, error) { return w.ListWatches(ctx, store.WatchFilter{}) })
	same("AnalysisPending", func(w store.Warehouse) (any, error) { return w.AnalysisPending(ctx) })
	same("Pending", func(w store.Warehouse) (any, error) { return w.Pending(ctx) })
	same("Untimed", func(w store.Warehouse) (any, error) { return w.Untimed(ctx) })
	same("UntimedIn", func(w store.Warehouse) (any, error) { return w.UntimedIn(ctx, []int64{1, 2}) })
	same("ImportedFile", func(w store.Warehouse) (any, error) {
		f, ok, err := w.ImportedFile(ctx, "f1")
		f.ImportedAt = time.Time{}
		return []any{f, ok}, err
	})
	if rs, n, err := pg.ListRestores(ctx, store.RestoreFilter{Build: "15.0", Limit: 3}); err != nil || n != 120 || len(rs) != 3 {
		t.Fatalf("PostgreSQL lists %d of %d restores on build 15.0 (%v), want 3 of the 120 imported", len(rs), n, err)
	}
	// The restores' lists: every filter and order, counted and capped,
	// by series with a cursor, streamed, by id.
	week := time.Date(2026, 6, 10, 0, 0, 0, 0, time.UTC)
	for _, f := range []store.RestoreFilter{{}, {Instance: "sql01"}, {Instance: "nowhere"}, {Database: "Sales", Kind: store.KindFull},
		{From: week, To: week.Add(7 * 24 * time.Hour)}, {Build: "15.0"}, {Build: "15.0.4236.7"}, {Build: "15.0.42"},
		{Sort: "duration", Limit: 10}, {Sort: "throughput", Asc: true, Limit: 5, Offset: 3}, {Sort: "instance", Limit: 7},
		{Sort: "database", Asc: true}, {Offset: 100}, {Limit: 2000}, {IDs: []int64{3, 1, 99999}}} {
		same(fmt.Sprintf("ListRestores(%+v)", f), func(w store.Warehouse) (any, error) {
			rs, n, err := w.ListRestores(ctx, f)
			return []any{rs, n}, err
		})
		same(fmt.Sprintf("Restores(%+v, cap 5)", f), func(w store.Warehouse) (any, error) {
			return w.Restores(ctx, store.RestoreQuery{Filter: f, CountCap: 5})
		})
	}
	for _, after := range []int64{0, 7, 61, 1 << 40} {
		same(fmt.Sprintf("Restores(series after %d)", after), func(w store.Warehouse) (any, error) {
			return w.Restores(ctx, store.RestoreQuery{Filter: store.RestoreFilter{Limit: 25}, Series: true, After: after})
		})
	}
	same("Restores(each)", func(w store.Warehouse) (any, error) {
		var ids []int64
		_, err := w.Restores(ctx, store.RestoreQuery{Filter: store.RestoreFilter{Kind: store.KindFull}, Series: true,
			Each: func(r *store.Restore) error { ids = append(ids, r.ID); return nil }})
		return ids, err
	})
	same("RestoresByID", func(w store.Warehouse) (any, error) { return w.RestoresByID(ctx, []int64{5, 2, 77, 4242}) })
	same("GetRestore", func(w store.Warehouse) (any, error) { return w.GetRestore(ctx, 9) })
	for _, id := range []int64{1, 2, 61, 120} {
		same(fmt.Sprintf("GetRestoreDetail(%d)", id), func(w store.Warehouse) (any, error) { return w.GetRestoreDetail(ctx, id) })
	}
	if d, err := pg.GetRestoreDetail(ctx, 1); err != nil || d.History == nil || d.History.FirstLSN == "" || len(d.Logs) != 1 {
		t.Fatalf("PostgreSQL's restore detail %+v, %v: want its history row and log line", d, err)
	}
	same("GetRestore(missing)", func(w store.Warehouse) (any, error) { return w.GetRestore(ctx, 1<<40) })
	same("RestoreFactors", func(w store.Warehouse) (any, error) { return w.RestoreFactors(ctx, []int64{1, 2, 3, 50, 99999}) })
	for _, dev := range []string{`\\nas\a.bak`, `d:\backup\sales_2.BAK`} {
		same("BackupOfDevices("+dev+")", func(w store.Warehouse) (any, error) { return w.BackupOfDevices(ctx, []string{dev}) })
	}
	if b, err := pg.BackupOfDevices(ctx, []string{`d:\backup\sales_2.BAK`}); err != nil || b == nil || b.Families != 2 {
		t.Fatalf("PostgreSQL's backup of a device: %+v, %v", b, err)
	}
	for _, from := range []time.Time{{}, t0.Add(30 * time.Minute), t0.Add(48 * time.Hour)} {
		same(fmt.Sprintf("BackupSets(from %v)", from), func(w store.Warehouse) (any, error) { return w.BackupSets(ctx, "sql01", "Sales", from) })
	}
	if bs, err := pg.BackupSets(ctx, "SQL01", "Sales", time.Time{}); err != nil || len(bs) != 2 || len(bs[0].Files) != 3 || bs[0].Files[0].LogicalName != "Sales_z" {
		t.Fatalf("PostgreSQL's backup sets %+v, %v: want two, the full's three files in msdb's order", bs, err)
	}
	for _, n := range [][2]string{{"SQL01", "Sales"}, {"sql02", "Sales"}, {"SQL01", "HR"}, {"AG1", "Sales"}} {
		same("BackupReplicas"+n[0]+"/"+n[1], func(w store.Warehouse) (any, error) { return w.BackupReplicas(ctx, n[0], n[1]) })
	}
	if r, err := pg.BackupReplicas(ctx, "SQL01", "Sales"); err != nil || len(r.Candidates) != 1 {
		t.Fatalf("PostgreSQL's replicas of SQL01's Sales: %+v, %v; want sql02 a candidate", r, err)
	}
	same("BackupDatabases", func(w store.Warehouse) (any, error) { return w.BackupDatabases(ctx) })
	same("InstanceBackups", func(w store.Warehouse) (any, error) { return w.InstanceBackups(ctx, "sql01") })
	same("FileFolders", func(w store.Warehouse) (any, error) {
		d, l, err := w.FileFolders(ctx, "SQL01")
		return []string{d, l}, err
	})
	for _, fleet := range []bool{false, true} {
		same(fmt.Sprintf("RestoreRates(fleet %v)", fleet), func(w store.Warehouse) (any, error) { return w.RestoreRates(ctx, "SQL01", fleet, 5) })
	}
	same("RestoreRatesOf", func(w store.Warehouse) (any, error) { return w.RestoreRatesOf(ctx, []int64{4, 1, 80, 99999}) })
	// In-flight curves written on each engine read back alike.
	t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for _, w := range []store.Warehouse{lite, pg} {
		for i := range 3 {
			ss := []store.InflightSample{{Database: "Sales", SessionID: 61, Command: "RESTORE DATABASE", Statement: "RESTORE DATABASE Sales",
				Start: t0, SampledAt: t0.Add(time.Duration(i) * time.Minute), UTCOffset: 60, Percent: float64(10 * i),
				EstRemainingMs: int64(1000 * (3 - i)), WaitType: "BACKUPIO"}}
			if i == 2 {
				ss = nil // the restore ended
			}
			if err := w.AddInflightSamples(ctx, "SQL01", ss); err != nil {
				t.Fatal(err)
			}
		}
	}
	if cs, err := pg.InflightCurves(ctx, time.Time{}); err != nil || len(cs) != 1 || len(cs[0].Points) != 2 || !cs[0].Ended {
		t.Fatalf("PostgreSQL's curves %+v, %v: want one ended curve of two points", cs, err)
	}
	same("InflightCurves", func(w store.Warehouse) (any, error) { return w.InflightCurves(ctx, time.Time{}) })
	same("InflightCurveFor", func(w store.Warehouse) (any, error) {
		return w.InflightCurveFor(ctx, "sql01", "Sales", t0.Add(2*time.Second), 5*time.Second)
	})
	same("InflightCurveFor(none)", func(w store.Warehouse) (any, error) {
		return w.InflightCurveFor(ctx, "sql01", "Sales", t0.Add(time.Hour), 5*time.Second)
	})
	same("RTOCandidates", func(w store.Warehouse) (any, error) { return w.RTOCandidates(ctx) })
	for _, f := range []store.RestoreFilter{{}, {Instance: "SQL01", Limit: 10}, {Database: "Sales", Kind: store.KindFull}} {
		same(fmt.Sprintf("ChartPoints(%+v)", f), func(w store.Warehouse) (any, error) { return w.ChartPoints(ctx, f) })
		same(fmt.Sprintf("RelativeSpeeds(%+v)", f), func(w store.Warehouse) (any, error) {
			ss, err := w.RelativeSpeeds(ctx, f)
			slices.SortStableFunc(ss, func(a, b store.RelativeSpeed) int { return a.At.Compare(b.At) })
			return ss, err
		})
	}
	same("RelativeByBuild", func(w store.Warehouse) (any, error) {
		a, b, n, err := w.RelativeByBuild(ctx)
		for _, m := range []map[string][]float64{a, b} {
			for _, xs := range m {
				slices.Sort(xs)
			}
		}
		return []any{a, b, n}, err
	})
	if ss, err := pg.RelativeSpeeds(ctx, store.RestoreFilter{}); err != nil || len(ss) != 120 {
		t.Fatalf("PostgreSQL's relative speeds: %d, %v; want the 120 restores", len(ss), err)
	}
	same("LatestRuns", func(w store.Warehouse) (any, error) { return w.LatestRuns(ctx) })
	same("CollectorTokens", func(w store.Warehouse) (any, error) { return w.CollectorTokens(ctx) })
}
