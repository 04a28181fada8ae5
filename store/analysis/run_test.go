package analysis_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

// runFleet writes 8 instances × 2 databases of daily full restores, 20 each,
// through the import API. SQL03/Sales slows to 0.4× from its 13th restore,
// when its backups start coming from a newer source build.
func runFleet(t *testing.T) *sqlite.DB {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "run.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	im, err := db.NewImport(ctx, "test", "run")
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	zero := 0
	start := time.Date(2025, 3, 1, 2, 0, 0, 0, time.UTC)
	id := 0
	for i := range 8 {
		inst := fmt.Sprintf("SQL%02d", i)
		must(im.Host(store.HostSnapshot{Instance: inst, ObservedAt: start.AddDate(0, 0, -1), UTCOffset: &zero,
			Version: "13.0.4474.0", Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: 1}}))
		for _, dbn := range []string{"Sales", "Stock"} {
			size := int64(8+i) << 30
			for d := range 20 {
				id++
				at := start.AddDate(0, 0, d).Add(time.Duration(id%7) * time.Minute)
				secs := 100 + float64(d%4) // ±2 %
				build := int64(4474)
				if inst == "SQL03" && dbn == "Sales" && d >= 12 {
					secs, build = secs/0.4, 5026
				}
				major, minor := int64(13), int64(0)
				lsn := strconv.Itoa(1000000 + id*10)
				must(im.History(store.HistoryRow{Instance: inst, RestoreHistoryID: int64(id), RestoreDate: at, Database: dbn,
					RestoreType: "D", BackupType: "D", FirstLSN: lsn, LastLSN: lsn + "5", BackupSize: &size,
					SourceServer: "PROD", SoftwareMajor: &major, SoftwareMinor: &minor, SoftwareBuild: &build,
					Origin: store.Origin{Source: "history", File: "h.csv", Line: id}}))
				must(im.LogRestore(store.LogRestore{Instance: inst, Database: dbn, Kind: store.KindFull, MessageID: 18267,
					CompletedAt: at.Add(time.Duration(secs * float64(time.Second))), UTCOffset: &zero, FirstLSN: lsn,
					LastLSN: lsn + "5", Has3014: true, Pages: size / 8192, Seconds: secs, MBps: 100,
					Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: 100 + id}}))
			}
		}
	}
	if _, err := im.CommitAndReconcile(); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestRunFindsTheRegressionOnEitherRead(t *testing.T) {
	ctx := context.Background()
	db := runFleet(t)
	opt := analysis.Options{Now: time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)}
	st, err := analysis.Run(ctx, db, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	if want := (analysis.RunStats{Instances: 8, Series: 16, Restores: 320, Regressions: 1}); st != want {
		t.Fatalf("run over the fleet: %+v, want %+v", st, want)
	}
	regs, err := db.ListRegressions(ctx, store.RegressionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(regs) != 1 || regs[0].Instance != "SQL03" || regs[0].Database != "Sales" || regs[0].CurrentN != 8 {
		t.Fatalf("regressions %+v: want SQL03/Sales with 8 slow restores", regs)
	}
	// What changed is read afterwards, for this series only.
	if fc := regs[0].ChangedFactors; len(fc) == 0 || fc[0].Factor != "source_build" || fc[0].Score != 1 {
		t.Errorf("changed factors %+v: want source_build first, a clean split", fc)
	}
	series, err := db.ListSeries(ctx, store.SeriesFilter{})
	if err != nil {
		t.Fatal(err)
	}
	version, err := db.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// One instance of eight is read through the index, not the table scan;
	// the findings must not move, and the regression keeps its id.
	st, err = analysis.Run(ctx, db, []int64{regs[0].InstanceID}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if want := (analysis.RunStats{Instances: 1, Series: 2, Restores: 40, Regressions: 1}); st != want {
		t.Fatalf("run over SQL03: %+v, want %+v", st, want)
	}
	again, err := db.ListRegressions(ctx, store.RegressionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 1 || again[0].ID != regs[0].ID || !reflect.DeepEqual(again[0].ChangedFactors, regs[0].ChangedFactors) ||
		again[0].Ratio != regs[0].Ratio || again[0].Note != regs[0].Note {
		t.Errorf("after re-running SQL03: %+v, want %+v", again, regs)
	}
	if got := listSeries(t, db); !reflect.DeepEqual(got, withoutIDs(series)) {
		t.Errorf("series changed on a re-run:\n got %+v\nwant %+v", got, withoutIDs(series))
	}
	// Unchanged rows are kept, but a run must still move the version the
	// dashboard's cache keys on.
	if v, _ := db.DataVersion(ctx); v == version {
		t.Errorf("data version %s did not move with a run", v)
	}
}

func TestLoadSeriesReadsTheSameEitherWay(t *testing.T) {
	ctx := context.Background()
	db := runFleet(t)
	all, err := db.LoadSeries(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 16 {
		t.Fatalf("%d series, want 16", len(all))
	}
	for i, s := range all {
		if i > 0 {
			p := all[i-1]
			if p.InstanceID > s.InstanceID || p.InstanceID == s.InstanceID && p.Database >= s.Database {
				t.Errorf("series %d (%d %s) after (%d %s): want instance then database order", i, s.InstanceID, s.Database, p.InstanceID, p.Database)
			}
		}
		if len(s.Points) != 20 || s.Build != "13.0.4474.0" || s.Instance == "" || s.Kind != store.KindFull {
			t.Errorf("series %s/%s: %d points, build %q, kind %q", s.Instance, s.Database, len(s.Points), s.Build, s.Kind)
		}
		if !slices.IsSortedFunc(s.Points, func(a, b store.SeriesPoint) int { return int(a.AtMs - b.AtMs) }) {
			t.Errorf("series %s/%s: points not in time order", s.Instance, s.Database)
		}
	}
	one, err := db.LoadSeries(ctx, []int64{all[5].InstanceID})
	if err != nil {
		t.Fatal(err)
	}
	if len(one) != 2 || !reflect.DeepEqual(one, all[4:6]) {
		t.Errorf("one instance through the index:\n got %+v\nwant %+v", one, all[4:6])
	}
}

func listSeries(t *testing.T, db *sqlite.DB) []store.Series {
	t.Helper()
	s, err := db.ListSeries(context.Background(), store.SeriesFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return withoutIDs(s)
}

func withoutIDs(s []store.Series) []store.Series {
	out := slices.Clone(s)
	for i := range out {
		out[i].ID = 0
	}
	return out
}

// TestRunInGroupsFindsTheSame: judged a few instances at a time (as a fleet
// too large to hold at once is), the findings are the ones of a single pass,
// and the progress counts every instance once.
func TestRunInGroupsFindsTheSame(t *testing.T) {
	ctx := context.Background()
	opt := analysis.Options{Now: time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)}
	one := runFleet(t)
	st1, err := analysis.Run(ctx, one, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	grouped := runFleet(t)
	defer analysis.SetChunkRestoresForTest(100)() // 40 restores an instance: groups of 2
	var last store.Progress
	grouped.SetProgress(func(p store.Progress) { last = p })
	before := analysis.GroupsRunForTest()
	st2, err := analysis.Run(ctx, grouped, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	if n := analysis.GroupsRunForTest() - before; n != 4 {
		t.Errorf("%d groups, want 4 of two instances", n)
	}
	if st1 != st2 {
		t.Errorf("stats: one pass %+v, in groups %+v", st1, st2)
	}
	if last.Phase != store.PhaseAnalysing || last.Done != 8 || last.Total != 8 {
		t.Errorf("progress ended at %+v, want 8 of 8 instances", last)
	}
	if a, b := listSeries(t, one), listSeries(t, grouped); !reflect.DeepEqual(a, b) {
		t.Errorf("series differ:\n one pass %+v\nin groups %+v", a, b)
	}
	ra, err := one.ListRegressions(ctx, store.RegressionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := grouped.ListRegressions(ctx, store.RegressionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ra) != 1 || len(rb) != 1 || ra[0].Instance != rb[0].Instance || ra[0].Ratio != rb[0].Ratio ||
		!reflect.DeepEqual(ra[0].ChangedFactors, rb[0].ChangedFactors) {
		t.Errorf("regressions differ:\n one pass %+v\nin groups %+v", ra, rb)
	}

	// A contiguous group is read by a scan of its own id range, the same
	// series as the whole fleet's scan holds for it.
	all, err := grouped.LoadSeries(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, s := range all[4:12] {
		ids = append(ids, s.InstanceID)
	}
	part, err := grouped.LoadSeries(ctx, slices.Compact(ids))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(part, all[4:12]) {
		t.Errorf("a range of four instances:\n got %+v\nwant %+v", part, all[4:12])
	}
}
