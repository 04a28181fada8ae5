package sqlite_test

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/sqlite"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// dashFleet writes two instances: SQLA with 12 full restores (the last 2
// without an error-log line, so their duration is unknown) and 6 log
// restores after them, on build 13.0.4474.0; SQLB with 6 full restores on
// 15.0.4236.7. Every restore is 1 GiB.
func dashFleet(t *testing.T) *sqlite.DB {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "dash.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	im, err := db.NewImport(ctx, "test", "dash")
	if err != nil {
		t.Fatal(err)
	}
	zero := 0
	size := int64(1 << 30)
	start := time.Date(2025, 1, 1, 2, 0, 0, 0, time.UTC)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	add := func(inst, dbn, typ string, i int, at time.Time, secs float64, withLog bool) {
		lsn := strconv.Itoa(1000000 + i*10)
		must(im.History(store.HistoryRow{Instance: inst, RestoreHistoryID: int64(i), RestoreDate: at, Database: dbn, RestoreType: typ,
			BackupType: typ, FirstLSN: lsn, LastLSN: lsn + "5", BackupSize: &size, SourceServer: "SRC",
			Origin: store.Origin{Source: "history", File: "h.csv", Line: i + 1}}))
		if !withLog {
			return
		}
		kind := store.KindFull
		if typ == "L" {
			kind = store.KindLog
		}
		must(im.LogRestore(store.LogRestore{Instance: inst, Database: dbn, Kind: kind, MessageID: 18267,
			CompletedAt: at.Add(time.Duration(secs * float64(time.Second))), UTCOffset: &zero, FirstLSN: lsn, LastLSN: lsn + "5",
			Has3014: true, Pages: size / 8192, Seconds: secs, MBps: 100,
			Buffer: &store.BufferConfig{BufferCount: 7, MaxTransferKiB: 1024, IOAlignment: 4096},
			Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: 100 + i}}))
	}
	for _, h := range []struct {
		inst, version string
	}{{"SQLA", "13.0.4474.0"}, {"SQLB", "15.0.4236.7"}} {
		must(im.Host(store.HostSnapshot{Instance: h.inst, ObservedAt: start.AddDate(0, 0, -1), UTCOffset: &zero, Version: h.version,
			TraceFlags: []int{3226, 1117}, Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: 1}}))
	}
	for i := 0; i < 12; i++ {
		add("SQLA", "Sales", "D", i, start.AddDate(0, 0, i), 100+float64(i%3), i < 10)
	}
	for i := 0; i < 6; i++ {
		add("SQLA", "Sales", "L", 100+i, start.AddDate(0, 0, 12).Add(time.Duration(i+1)*time.Hour), 10, true)
	}
	for i := 0; i < 6; i++ {
		add("SQLB", "Sales", "D", 200+i, start.AddDate(0, 0, i), 50, true)
	}
	if _, err := im.CommitAndReconcile(); err != nil {
		t.Fatal(err)
	}
	if _, err := analysis.Run(ctx, db, nil, analysis.Options{Config: analysis.DefaultConfig()}); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestPageRestoresCountsFiltersAndOrders(t *testing.T) {
	db := dashFleet(t)
	ctx := context.Background()
	rs, total, exact, err := storetest.PageRestores(ctx, db, store.RestoreFilter{Limit: 5}, 10)
	if err != nil || len(rs) != 5 || total != 10 || exact {
		t.Fatalf("capped count: %d rows, total %d exact %v, %v; want 5, 10, false", len(rs), total, exact, err)
	}
	if _, total, exact, _ = storetest.PageRestores(ctx, db, store.RestoreFilter{}, 0); total != 24 || !exact {
		t.Errorf("uncapped count %d %v, want 24 exact", total, exact)
	}
	// Ordering by a measure leaves out the restores whose measure is unknown.
	rs, total, _, err = storetest.PageRestores(ctx, db, store.RestoreFilter{Instance: "sqla", Kind: store.KindFull, Sort: "duration", Asc: true}, 0)
	if err != nil || total != 10 || len(rs) != 10 {
		t.Fatalf("shortest first: %d of %d, %v; want the 10 with a duration", len(rs), total, err)
	}
	for i := 1; i < len(rs); i++ {
		if *rs[i].DurationS < *rs[i-1].DurationS {
			t.Fatalf("not in ascending duration at %d", i)
		}
	}
	for _, c := range []struct {
		f    store.RestoreFilter
		want int
	}{
		{store.RestoreFilter{Build: "13.0"}, 18}, {store.RestoreFilter{Build: "15.0.4236.7"}, 6}, {store.RestoreFilter{Build: "13.0_"}, 0},
		{store.RestoreFilter{Instance: "NOPE"}, 0}, {store.RestoreFilter{Kind: store.KindLog}, 6}, {store.RestoreFilter{Source: "SRC"}, 24},
		{store.RestoreFilter{From: time.Date(2025, 1, 3, 0, 0, 0, 0, time.UTC), To: time.Date(2025, 1, 5, 0, 0, 0, 0, time.UTC)}, 4},
		{store.RestoreFilter{Database: "Sales", Sort: "throughput"}, 22},
	} {
		if _, got, _, err := storetest.PageRestores(ctx, db, c.f, 0); err != nil || got != c.want {
			t.Errorf("filter %+v: %d restores, %v; want %d", c.f, got, err, c.want)
		}
	}
}

func TestDataVersionFollowsChanges(t *testing.T) {
	db := dashFleet(t)
	ctx := context.Background()
	v1, err := db.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v2, _ := db.DataVersion(ctx); v2 != v1 {
		t.Fatalf("version moved without a change: %s then %s", v1, v2)
	}
	if _, err := analysis.Run(ctx, db, nil, analysis.Options{}); err != nil {
		t.Fatal(err)
	}
	v3, _ := db.DataVersion(ctx)
	if v3 == v1 {
		t.Error("an analysis run did not change the data version")
	}
	im, _ := db.NewImport(ctx, "test", "empty")
	im.CommitAndReconcile()
	v4, _ := db.DataVersion(ctx)
	if v4 == v3 {
		t.Error("an import did not change the data version")
	}
	// New restores show once derived, before any analysis: the
	// reconciliation moves the version after the import's commit did.
	im, _ = db.NewImport(ctx, "test", "one more")
	if err := im.LogRestore(store.LogRestore{Instance: "SQL-NEW", Database: "Sales", Kind: store.KindFull, MessageID: 18267,
		CompletedAt: time.Date(2025, 7, 1, 2, 0, 0, 0, time.UTC), Origin: store.Origin{Source: "errorlog", File: "ERRORLOG"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := im.Commit(); err != nil {
		t.Fatal(err)
	}
	v5, _ := db.DataVersion(ctx)
	if err := db.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if v6, _ := db.DataVersion(ctx); v6 == v5 {
		t.Errorf("a reconciliation that added a restore left the data version at %s", v6)
	}
}

func TestRestoreDetailCitesItsEvidence(t *testing.T) {
	db := dashFleet(t)
	ctx := context.Background()
	rs, _, err := db.ListRestores(ctx, store.RestoreFilter{Instance: "SQLA", Kind: store.KindFull, Asc: true, Limit: 1})
	if err != nil || len(rs) != 1 {
		t.Fatal(err)
	}
	d, err := db.GetRestoreDetail(ctx, rs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.History == nil || d.History.Origin != "h.csv:1" || d.History.RestoreHistoryID != 0 {
		t.Errorf("history evidence: %+v", d.History)
	}
	if len(d.Logs) != 1 || d.Logs[0].Origin != "ERRORLOG:100" || d.Logs[0].Buffer == nil || d.Logs[0].Buffer.IOAlignment != 4096 {
		t.Errorf("log evidence: %+v", d.Logs)
	}
	if d.StartedLocal == nil || d.RestoreDateLocal == nil {
		t.Errorf("local times missing: %+v", d)
	}
	if _, err := db.GetRestoreDetail(ctx, 987654); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("missing restore: %v", err)
	}
}

func TestInstancesHostsAndSpeeds(t *testing.T) {
	db := dashFleet(t)
	ctx := context.Background()
	is, err := db.ListInstances(ctx, "")
	if err != nil || len(is) != 2 {
		t.Fatalf("instances: %+v, %v", is, err)
	}
	a := is[0]
	if a.Name != "SQLA" || a.Build != "13.0.4474.0" || a.Databases != 1 || a.Restores != 18 || a.LastRestore == nil {
		t.Errorf("SQLA summary: %+v", a)
	}
	if _, err := db.GetInstance(ctx, "nope"); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("missing instance: %v", err)
	}
	hs, err := db.HostHistory(ctx, "SQLB")
	if err != nil || len(hs) != 1 || hs[0].Version != "15.0.4236.7" || len(hs[0].TraceFlags) != 2 || hs[0].TraceFlags[0] != 3226 {
		t.Errorf("host history: %+v, %v", hs, err)
	}
	sp, err := db.RelativeSpeeds(ctx, store.RestoreFilter{Instance: "SQLB"})
	if err != nil || len(sp) != 6 {
		t.Fatalf("relative speeds: %d, %v", len(sp), err)
	}
	for _, s := range sp {
		if s.Rel < 0.99 || s.Rel > 1.01 || s.InstanceBuild != "15.0.4236.7" || s.DurationS != 50 {
			t.Errorf("a stable series' restore: %+v, want rel 1", s)
		}
	}
	o, err := db.RestoreOrders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	year := [2]time.Time{time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	if tv := o.Throughputs(store.KindFull, year[0], year[1]); len(tv) != 16 {
		t.Errorf("full throughputs: %d; want 16 measured", len(tv))
	}
	if tv := o.Throughputs(store.KindFull, year[0], year[0].AddDate(0, 0, 5)); len(tv) == 0 || len(tv) >= 16 {
		t.Errorf("full throughputs of 5 days: %d; want some of the 16", len(tv))
	}
}

func TestRTOCandidatesAddLogsAfterTheLastFull(t *testing.T) {
	db := dashFleet(t)
	cs, err := db.RTOCandidates(context.Background())
	if err != nil || len(cs) != 2 {
		t.Fatalf("candidates: %+v, %v", cs, err)
	}
	a := cs[0]
	if a.Instance != "SQLA" || a.FullBytes != 1<<30 || a.LogBytes != 6<<30 || a.MiBps <= 0 {
		t.Errorf("SQLA: %+v; want 1 GiB full, 6 GiB of logs after it, a throughput", a)
	}
	if cs[1].LogBytes != 0 {
		t.Errorf("SQLB has no logs: %+v", cs[1])
	}
	if err := db.Ping(context.Background()); err != nil {
		t.Error(err)
	}
	if ok, err := db.HasTable(context.Background(), "collector_run"); !ok || err != nil {
		t.Errorf("collector_run: %v %v", ok, err)
	}
}

// TestRestoreOrdersMatchPageRestores checks the cached fleet orders page
// exactly as PageRestores does, for every order, kind, date range, build,
// database, offset and count cap.
func TestRestoreOrdersMatchPageRestores(t *testing.T) {
	db := dashFleet(t)
	ctx := context.Background()
	o, err := db.RestoreOrders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	filters := []store.RestoreFilter{{}, {Build: "13.0"}, {Build: "15.0.4236.7"}, {Build: "15.0.4236"}, {Build: "13.0_"},
		{Database: "Sales"}, {Database: "sales"}, {Database: "Nope"}, {Database: "Sales", Build: "1"},
		{Source: "SRC"}, {Source: "src"}, {Source: "Nope"}, {Source: "SRC", Database: "Sales", Build: "13.0"}}
	for _, sort := range []string{"at", "duration", "throughput"} {
		for _, asc := range []bool{false, true} {
			for _, kind := range []store.Kind{"", store.KindFull, store.KindLog, store.KindDiff, store.KindPage} { // page: none in this fleet
				for _, dates := range [][2]time.Time{{}, {day.AddDate(0, 0, 3), day.AddDate(0, 0, 13)}} {
					for _, base := range filters {
						for _, page := range [][3]int{{5, 0, 0}, {5, 5, 0}, {4, 2, 6}, {100, 0, 3}, {0, 0, 0}} {
							f := base
							f.Sort, f.Asc, f.Kind, f.From, f.To, f.Limit, f.Offset = sort, asc, kind, dates[0], dates[1], page[0], page[1]
							if !f.Fleetwide() {
								t.Fatalf("%+v not served", f)
							}
							want, wtotal, wexact, err := storetest.PageRestores(ctx, db, f, page[2])
							if err != nil {
								t.Fatal(err)
							}
							ids, total, exact := o.Page(f, page[2])
							got, err := db.RestoresByID(ctx, ids)
							if err != nil {
								t.Fatal(err)
							}
							if total != wtotal || exact != wexact || len(got) != len(want) {
								t.Fatalf("%+v cap %d: %d rows of %d (exact %v), PageRestores %d of %d (exact %v)", f, page[2],
									len(got), total, exact, len(want), wtotal, wexact)
							}
							for i := range got {
								if got[i].ID != want[i].ID {
									t.Fatalf("%+v: row %d is restore %d, PageRestores' %d", f, i, got[i].ID, want[i].ID)
								}
							}
							n += len(got)
						}
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no restore listed at all")
	}
	for _, f := range []store.RestoreFilter{{Sort: "at", Instance: "SQLA"}, {Sort: "at", IDs: []int64{1}}, {Sort: "database"}} {
		if f.Fleetwide() {
			t.Errorf("Fleetwide accepts %+v", f)
		}
	}
	// The overview's figures.
	first, last := o.Span()
	var all []store.Restore
	all, _, _, err = storetest.PageRestores(ctx, db, store.RestoreFilter{Sort: "at", Asc: true}, 0)
	if err != nil || len(all) != 24 {
		t.Fatalf("all restores: %d, %v", len(all), err)
	}
	if !first.Equal(all[0].At) || !last.Equal(all[len(all)-1].At) {
		t.Errorf("span %v–%v, want %v–%v", first, last, all[0].At, all[len(all)-1].At)
	}
	from, to := day.AddDate(0, 0, 3), day.AddDate(0, 0, 13)
	_, want, _, _ := storetest.PageRestores(ctx, db, store.RestoreFilter{From: from, To: to}, 0)
	if got := o.Count(from, to); got != int64(want) || want == 0 {
		t.Errorf("count in [%v, %v): %d, want %d", from, to, got, want)
	}
	if got := o.Count(to, from); got != 0 {
		t.Errorf("count of an empty range: %d", got)
	}
	ms := o.Measured(store.RestoreFilter{Build: "13.0", Limit: 3})
	if len(ms) != 3 {
		t.Fatalf("measured: %v", ms)
	}
	newest, _, _, _ := storetest.PageRestores(ctx, db, store.RestoreFilter{Build: "13.0", Sort: "throughput"}, 0)
	measured := map[int64]bool{}
	for _, r := range newest {
		measured[r.ID] = true
	}
	prev := last.Add(time.Hour)
	for _, id := range ms {
		r, err := db.GetRestore(ctx, id)
		if err != nil || !measured[id] || r.At.After(prev) {
			t.Errorf("measured restore %d (%v, %v) is not a measured 13.0 restore newest first", id, r, err)
		} else {
			prev = r.At
		}
	}
}

// TestRelativeByBuildGroupsRelativeSpeeds: the streamed grouping holds, per
// instance and per source build, exactly the relative speeds RelativeSpeeds
// returns for the whole fleet.
func TestRelativeByBuildGroupsRelativeSpeeds(t *testing.T) {
	db := dashFleet(t)
	ctx := context.Background()
	if _, err := analysis.Run(ctx, db, nil, analysis.Options{}); err != nil {
		t.Fatal(err)
	}
	rs, err := db.RelativeSpeeds(ctx, store.RestoreFilter{})
	if err != nil {
		t.Fatal(err)
	}
	wantInst, wantSrc, wantN := map[string][]float64{}, map[string][]float64{}, 0
	for _, r := range rs {
		if r.Rel <= 0 {
			continue
		}
		wantN++
		if r.InstanceBuild != "" {
			wantInst[r.InstanceBuild] = append(wantInst[r.InstanceBuild], r.Rel)
		}
		if r.SourceBuild != "" {
			wantSrc[r.SourceBuild] = append(wantSrc[r.SourceBuild], r.Rel)
		}
	}
	byInst, bySrc, n, err := db.RelativeByBuild(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != wantN || wantN == 0 {
		t.Errorf("%d measured, want %d (and more than none)", n, wantN)
	}
	for _, c := range []struct {
		name      string
		got, want map[string][]float64
	}{{"instance", byInst, wantInst}, {"source", bySrc, wantSrc}} {
		if len(c.got) != len(c.want) {
			t.Errorf("%s builds: %d groups, want %d", c.name, len(c.got), len(c.want))
		}
		for g, want := range c.want {
			got := slices.Clone(c.got[g])
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s build %s: %d values, want %d", c.name, g, len(got), len(want))
			}
		}
	}
}
