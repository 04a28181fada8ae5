package sqlite_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/demo"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/sqlite"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// demoFleet imports a small demo fleet (ingest/demo) into a new warehouse.
func demoFleet(t *testing.T) *sqlite.DB {
	t.Helper()
	ctx := context.Background()
	fleet, err := demo.Generate(demo.Config{Seed: 7, Restores: 600, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	db := storetest.Open(t)
	if _, err := demo.Import(ctx, db, fleet, nil); err != nil {
		t.Fatal(err)
	}
	return db
}

// wants is the filter's documented meaning, applied to every restore in Go:
// the oracle both of Restores' paths must agree with.
func wants(all []store.Restore, f store.RestoreFilter) []store.Restore {
	var out []store.Restore
	for _, r := range all {
		b, p := r.InstanceBuild, strings.TrimRight(f.Build, ".")
		switch {
		case f.Instance != "" && !strings.EqualFold(r.Instance, f.Instance),
			f.Database != "" && r.Database != f.Database,
			f.Kind != "" && r.Kind != f.Kind,
			!f.From.IsZero() && r.At.Before(f.From),
			!f.To.IsZero() && !r.At.Before(f.To),
			p != "" && b != p && !strings.HasPrefix(b, p+"."),
			f.Source != "" && r.SourceServer != f.Source,
			len(f.IDs) > 0 && !slices.Contains(f.IDs, r.ID),
			f.Sort == "duration" && r.DurationS == nil,
			f.Sort == "throughput" && r.LogicalMiBps == nil:
			continue
		}
		out = append(out, r)
	}
	key := func(r store.Restore) float64 {
		switch f.Sort {
		case "duration":
			return *r.DurationS
		case "throughput":
			return *r.LogicalMiBps
		}
		return float64(r.At.UnixMilli())
	}
	slices.SortStableFunc(out, func(a, b store.Restore) int {
		c := 0
		switch {
		case f.Sort == "instance":
			c = strings.Compare(strings.ToUpper(a.Instance), strings.ToUpper(b.Instance)) // instance.name is NOCASE
		case f.Sort == "database":
			c = strings.Compare(a.Database, b.Database)
		case key(a) < key(b):
			c = -1
		case key(a) > key(b):
			c = 1
		}
		if c == 0 {
			c = int(a.ID - b.ID)
		}
		if !f.Asc {
			c = -c
		}
		return c
	})
	return out
}

func restoreIDs(rs []store.Restore) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// TestRestoreFilterOneMeaning holds DB.Restores' two paths (the cached
// in-memory orders and SQL) equal to each other and to the filter's
// documented meaning over the demo fleet, for every filter field, every
// sort in both directions, pages and count caps; the series (API) and
// streaming (export) shapes select the same restores.
func TestRestoreFilterOneMeaning(t *testing.T) {
	ctx := context.Background()
	db := demoFleet(t)
	all, _, err := db.ListRestores(ctx, store.RestoreFilter{Sort: "at", Asc: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 400 {
		t.Fatalf("demo fleet: %d restores", len(all))
	}
	cache, err := db.RestoreOrders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	orders := func(context.Context) (store.OrderedPages, error) { return cache, nil }
	// Every value of every field the fleet has, and some it has not.
	var filters []store.RestoreFilter
	seen := map[string]bool{}
	addOnce := func(f store.RestoreFilter) {
		if k := fmt.Sprintf("%+v", f); !seen[k] {
			seen[k] = true
			filters = append(filters, f)
		}
	}
	addOnce(store.RestoreFilter{})
	for _, r := range all {
		addOnce(store.RestoreFilter{Database: r.Database})
		addOnce(store.RestoreFilter{Kind: r.Kind})
		addOnce(store.RestoreFilter{Source: r.SourceServer})
		addOnce(store.RestoreFilter{Instance: r.Instance})
		parts := strings.Split(r.InstanceBuild, ".")
		for n := 1; n <= len(parts); n++ {
			addOnce(store.RestoreFilter{Build: strings.Join(parts[:n], ".")})
		}
		if len(parts) == 4 {
			addOnce(store.RestoreFilter{Build: strings.Join(parts[:3], ".") + "."})
			addOnce(store.RestoreFilter{Build: r.InstanceBuild[:len(r.InstanceBuild)-1]}) // not a whole component
		}
	}
	first, last := all[0].At, all[len(all)-1].At
	mid := first.Add(last.Sub(first) / 2)
	addOnce(store.RestoreFilter{From: mid})
	addOnce(store.RestoreFilter{To: mid})
	addOnce(store.RestoreFilter{From: first.Add(time.Hour), To: mid})
	addOnce(store.RestoreFilter{Database: "nope"})
	addOnce(store.RestoreFilter{Source: "nope"})
	addOnce(store.RestoreFilter{Build: "99"})
	addOnce(store.RestoreFilter{Kind: "nope"})
	addOnce(store.RestoreFilter{Instance: "nope"})
	addOnce(store.RestoreFilter{IDs: []int64{all[0].ID, all[5].ID, all[len(all)-1].ID}})
	addOnce(store.RestoreFilter{Database: all[0].Database, Kind: all[0].Kind, Build: strings.SplitN(all[0].InstanceBuild, ".", 2)[0], From: mid})
	addOnce(store.RestoreFilter{Instance: strings.ToLower(all[0].Instance), Database: all[0].Database, Kind: all[0].Kind})

	// Every sort and page shape in the full run; under -short (CI's race
	// run, where each query costs ~30×) two sorts and two shapes of each
	// filter, the SQL and in-memory paths still held equal.
	sorts := []string{"at", "duration", "throughput", "instance", "database"}
	pages := [][3]int{{0, 0, 0}, {7, 14, 0}, {50, 3, 20}}
	if testing.Short() {
		sorts, pages = []string{"at", "throughput"}, [][3]int{{7, 14, 0}, {50, 3, 20}}
	}
	queries, memory := 0, 0
	for _, base := range filters {
		for _, sort := range sorts {
			for _, asc := range []bool{false, true} {
				f := base
				f.Sort, f.Asc = sort, asc
				want := restoreIDs(wants(all, f))
				for _, page := range pages {
					f.Limit, f.Offset = page[0], page[1]
					wantPage := want[min(f.Offset, len(want)):]
					if f.Limit > 0 {
						wantPage = wantPage[:min(f.Limit, len(wantPage))]
					}
					wantTotal, wantExact := len(want), true
					if page[2] > 0 && wantTotal > page[2] {
						wantTotal, wantExact = page[2], false
					}
					for _, o := range []func(context.Context) (store.OrderedPages, error){nil, orders} {
						p, err := db.Restores(ctx, store.RestoreQuery{Filter: f, CountCap: page[2], Orders: o})
						if err != nil {
							t.Fatal(err)
						}
						queries++
						if o != nil && f.Fleetwide() {
							memory++
						}
						if got := restoreIDs(p.Restores); !slices.Equal(got, wantPage) && !(len(got) == 0 && len(wantPage) == 0) ||
							p.Total != wantTotal || p.Exact != wantExact {
							t.Fatalf("%+v (cap %d, orders %v): %d restores of %d (exact %v) %v;\nwant %d of %d (exact %v) %v",
								f, page[2], o != nil, len(p.Restores), p.Total, p.Exact, restoreIDs(p.Restores), len(wantPage), wantTotal, wantExact, wantPage)
						}
					}
				}
				if sort != "at" || asc {
					continue
				}
				// The series shapes: the same restores, in series order.
				f.Limit, f.Offset = 0, 0
				var streamed []int64
				if err := storetest.EachRestore(ctx, db, f, func(r *store.Restore) error {
					streamed = append(streamed, r.ID)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				var paged []int64
				for after := int64(0); ; {
					f.Limit = 97
					p, err := db.Restores(ctx, store.RestoreQuery{Filter: f, Series: true, After: after})
					if err != nil {
						t.Fatal(err)
					}
					paged = append(paged, restoreIDs(p.Restores)...)
					if len(p.Restores) < f.Limit {
						break
					}
					after = p.Restores[len(p.Restores)-1].ID
				}
				if !slices.Equal(streamed, paged) {
					t.Fatalf("%+v: streamed %d restores, paged %d", f, len(streamed), len(paged))
				}
				slices.Sort(streamed)
				sorted := slices.Clone(want)
				slices.Sort(sorted)
				if !slices.Equal(streamed, sorted) && len(sorted)+len(streamed) > 0 {
					t.Fatalf("%+v: series shapes select %d restores, the filter %d", f, len(streamed), len(sorted))
				}
			}
		}
	}
	if memory == 0 || memory == queries {
		t.Fatalf("%d queries, %d from the orders: both paths must be exercised", queries, memory)
	}
	t.Logf("%d filters, %d queries, %d from the in-memory orders", len(filters), queries, memory)
}

// TestBuildFilterWholeComponents: a build filter matches whole dot-separated
// components in every shape of the answer: 15.0.4153.1 is not a prefix of
// 15.0.4153.10 (the CLI, the CSV export and the API listed both; the list
// page only the first).
func TestBuildFilterWholeComponents(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	var recs []any
	for i, v := range []string{"15.0.4153.1", "15.0.4153.10", "15.0.41531.2"} {
		inst := fmt.Sprintf("SQL%d", i)
		at := local("2025-03-01 10:00:00.000").Add(time.Duration(i) * time.Hour)
		recs = append(recs,
			store.HostSnapshot{Instance: inst, ObservedAt: at.AddDate(0, 0, -1), UTCOffset: off(0), Version: v,
				Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: 1}},
			store.HistoryRow{Instance: inst, RestoreHistoryID: 1, RestoreDate: at, Database: "Sales", RestoreType: "D",
				BackupType: "D", Origin: store.Origin{Source: "history", File: "h.csv", Line: i + 2}})
	}
	importAll(t, db, recs...)
	orders := func(ctx context.Context) (store.OrderedPages, error) { return db.RestoreOrders(ctx) }
	for build, want := range map[string][]string{
		"15.0.4153.1":  {"15.0.4153.1"},
		"15.0.4153.10": {"15.0.4153.10"},
		"15.0.4153":    {"15.0.4153.1", "15.0.4153.10"},
		"15.0.4153.":   {"15.0.4153.1", "15.0.4153.10"},
		"15.0.415":     nil,
		"15":           {"15.0.4153.1", "15.0.4153.10", "15.0.41531.2"},
		"1":            nil,
	} {
		f := store.RestoreFilter{Build: build, Sort: "at", Asc: true}
		shapes := map[string][]store.Restore{}
		for name, q := range map[string]store.RestoreQuery{"sql": {Filter: f}, "orders": {Filter: f, Orders: orders},
			"series": {Filter: f, Series: true}} {
			p, err := db.Restores(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			shapes[name] = p.Restores
		}
		var each []store.Restore
		if err := storetest.EachRestore(ctx, db, f, func(r *store.Restore) error { each = append(each, *r); return nil }); err != nil {
			t.Fatal(err)
		}
		shapes["each"] = each
		for name, rs := range shapes {
			var got []string
			for _, r := range rs {
				got = append(got, r.InstanceBuild)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("build %q (%s): %v, want %v", build, name, got, want)
			}
		}
	}
}
