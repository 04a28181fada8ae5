package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/orders"
)

// updateEqualsRebuild updates old to the warehouse's present and fails tb
// unless the result equals a rebuild; it returns the rebuild.
func updateEqualsRebuild(tb testing.TB, db *DB, old *RestoreOrders) *RestoreOrders {
	tb.Helper()
	ctx := context.Background()
	got, err := db.updatedOrders(ctx, old)
	if err != nil {
		tb.Fatal(err)
	}
	want, err := db.RestoreOrders(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	if d := orders.Diff(got, want); d != "" {
		tb.Fatal(d)
	}
	return want
}

// fleetRound imports one round of a random fleet's life: new instances,
// new restores on old ones, error-log lines that complete earlier history
// rows (their time, duration and throughput change), build upgrades (every
// restore of the instance changes build), and returns the history rows
// written.
type fleetSim struct {
	rng       *rand.Rand
	instances []string
	hist      []store.HistoryRow
	next      int64
	clock     time.Time
}

func (f *fleetSim) round(t *testing.T, db *DB, n int) {
	t.Helper()
	ctx := context.Background()
	im, err := db.NewImport(ctx, "test", "round")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.instances) == 0 || f.rng.IntN(3) == 0 {
		f.instances = append(f.instances, fmt.Sprintf("SQL%02d", len(f.instances)))
	}
	builds := []string{"13.0.4474.0", "15.0.4236.7", "15.0.4153.1", "16.0.1000.6"}
	for _, inst := range f.instances {
		if f.rng.IntN(4) == 0 {
			if err := im.Host(store.HostSnapshot{Instance: inst, ObservedAt: f.clock, Version: builds[f.rng.IntN(len(builds))],
				Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: 1}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	size := int64(10 << 30)
	for range n {
		f.next++
		f.clock = f.clock.Add(time.Duration(f.rng.IntN(7200)+1) * time.Second)
		h := store.HistoryRow{Instance: f.instances[f.rng.IntN(len(f.instances))], RestoreHistoryID: f.next, RestoreDate: f.clock,
			Database:    []string{"Sales", "HR", "Stock", fmt.Sprintf("DB%d", f.rng.IntN(40))}[f.rng.IntN(4)],
			RestoreType: "D", BackupType: []string{"D", "I", "L"}[f.rng.IntN(3)], BackupSize: &size,
			Origin: store.Origin{Source: "history", File: "h.csv", Line: int(f.next)}}
		if f.rng.IntN(2) == 0 {
			h.SourceServer = []string{"SRC1", "SRC2", fmt.Sprintf("SRC%d", f.rng.IntN(20))}[f.rng.IntN(3)]
		}
		if err := im.History(h); err != nil {
			t.Fatal(err)
		}
		f.hist = append(f.hist, h)
	}
	// Error-log completions of earlier rows, some of this round.
	for range n / 2 {
		h := f.hist[len(f.hist)-1-f.rng.IntN(min(len(f.hist), 3*n))]
		secs := float64(30 + f.rng.IntN(600))
		kind := map[string]store.Kind{"D": store.KindFull, "I": store.KindDiff, "L": store.KindLog}[h.BackupType]
		if err := im.LogRestore(store.LogRestore{Instance: h.Instance, Database: h.Database, Kind: kind, MessageID: 18267,
			CompletedAt: h.RestoreDate.Add(time.Duration(secs) * time.Second), Has3014: true, Statement: "RESTORE DATABASE",
			Pages: 1 << uint(10+f.rng.IntN(10)), Seconds: secs, MBps: 100,
			Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: int(f.next)*10 + f.rng.IntN(10)}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := im.CommitAndReconcile(); err != nil {
		t.Fatal(err)
	}
}

// TestOrdersUpdateEqualsRebuild: after every round of a random fleet's
// imports and prunes, the orders updated from the previous ones — and from
// ones several rounds behind — equal a rebuild exactly, the update reads
// the change log instead of rebuilding, and the orders it started from
// answer as before.
func TestOrdersUpdateEqualsRebuild(t *testing.T) {
	ctx := context.Background()
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			db := openTestDB(t)
			f := &fleetSim{rng: rand.New(rand.NewPCG(seed, 7)), clock: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
			first, err := db.RestoreOrders(ctx)
			if err != nil {
				t.Fatal(err)
			}
			history := []*RestoreOrders{first}
			pruned, deletes := 0, 0
			for round := range 12 {
				f.round(t, db, 20+f.rng.IntN(40))
				if round%4 == 3 {
					// Retention rolls the oldest log restores up: their
					// facts and restores are deleted (KeepLast 1: the fleet's
					// series are short).
					st, err := db.Prune(ctx, store.Retention{Restores: 24 * time.Hour, KeepLast: 1}, f.hist[len(f.hist)/3].RestoreDate.Add(48*time.Hour))
					if err != nil {
						t.Fatal(err)
					}
					pruned += int(st.History + st.LogRestores)
				}
				want, err := db.RestoreOrders(ctx)
				if err != nil {
					t.Fatal(err)
				}
				var changes int
				if err := db.read.QueryRow(`SELECT count(*) FROM restore_change WHERE restore_id IS NOT NULL`).Scan(&changes); err != nil {
					t.Fatal(err)
				}
				deletes = changes
				// The previous orders twice (two pages may update the same
				// orders), older ones, the first: every result is
				// checked once all are made.
				olds := []*RestoreOrders{history[len(history)-1], history[len(history)-1], history[max(0, len(history)-4)], first}
				var dumps []string
				// All at once, while pages read the orders they start
				// from (go test -race tells a shared write).
				gots := make([]*RestoreOrders, len(olds))
				errs := make([]error, len(olds))
				var wg sync.WaitGroup
				for i, old := range olds {
					dumps = append(dumps, orders.Dump(old))
					wg.Go(func() { gots[i], errs[i] = db.updateOrders(ctx, old) })
					wg.Go(func() { old.Page(store.RestoreFilter{Sort: "duration", Database: "Sales"}, 0) })
				}
				wg.Wait()
				for i, old := range olds {
					if errs[i] != nil {
						t.Fatal(errs[i])
					}
					if gots[i] == nil {
						t.Fatalf("round %d: the update from position %d rebuilt", round, old.OrdersSeq())
					}
				}
				for i, old := range olds {
					if d := orders.Diff(gots[i], want); d != "" {
						t.Fatalf("round %d, update %d from position %d: %s", round, i, old.OrdersSeq(), d)
					}
					if after := orders.Dump(old); after != dumps[i] {
						t.Fatalf("round %d: an update changed the orders it started from", round)
					}
				}
				got, err := db.updatedOrders(ctx, history[len(history)-1])
				if err != nil {
					t.Fatal(err)
				}
				history = append(history, got)
			}
			if pruned == 0 || deletes == 0 {
				t.Fatalf("the fleet never lost a restore (%d facts pruned, %d deletions logged)", pruned, deletes)
			}
			last := history[len(history)-1]
			if n, timed, measured, builds, sources := orders.Sizes(last); n < 100 || timed == 0 || measured == 0 || builds < 2 || sources < 2 {
				t.Fatalf("a fleet too plain to test: %d restores, %d timed, %d measured, %d builds, %d source servers", n,
					timed, measured, builds, sources)
			}
			// Nothing changed: the same orders.
			if again, err := db.updatedOrders(ctx, last); err != nil || again != last {
				t.Fatalf("an update with nothing changed: %p %v, want %p", again, err, last)
			}
		})
	}
}

// logRows counts the change log's rows: those naming a restore, and
// rebuild markers.
func logRows(t *testing.T, db *DB) (named, markers int64) {
	t.Helper()
	if err := db.read.QueryRow(`SELECT count(*) FILTER (WHERE natural_key IS NOT NULL OR restore_id IS NOT NULL),
		count(*) FILTER (WHERE natural_key IS NULL AND restore_id IS NULL) FROM restore_change`).Scan(&named, &markers); err != nil {
		t.Fatal(err)
	}
	return named, markers
}

// setForTest sets *p to v until the test ends.
func setForTest[T any](t *testing.T, p *T, v T) {
	old := *p
	*p = v
	t.Cleanup(func() { *p = old })
}

// TestChangeLogPruned: the log never holds more than it keeps (plus the
// slack), a reader whose position was pruned rebuilds, to the same orders
// as a rebuild, and a reader within the log still updates.
func TestChangeLogPruned(t *testing.T) {
	setForTest(t, &changeLogKeep, 30)
	setForTest(t, &changeLogSlack, 10)
	ctx := context.Background()
	db := openTestDB(t)
	f := &fleetSim{rng: rand.New(rand.NewPCG(4, 7)), clock: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	first, err := db.RestoreOrders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 6 {
		f.round(t, db, 30)
		if named, markers := logRows(t, db); named+markers > changeLogKeep+changeLogSlack || markers != 0 {
			t.Fatalf("the log holds %d rows and %d markers, keeps %d", named, markers, changeLogKeep)
		}
	}
	if got, err := db.updateOrders(ctx, first); err != nil || got != nil {
		t.Fatalf("an update from a pruned position did not rebuild: %v", err)
	}
	want := updateEqualsRebuild(t, db, first)
	// One restore more: within the log.
	f.round(t, db, 1)
	got, err := db.updateOrders(ctx, want)
	if err != nil || got == nil {
		t.Fatalf("an update within the log rebuilt (%v)", err)
	}
	if want, err = db.RestoreOrders(ctx); err != nil {
		t.Fatal(err)
	}
	if d := orders.Diff(got, want); d != "" {
		t.Fatal(d)
	}
}

// TestChangeLogRebuildMarker: a reconciliation that changes more than the
// log takes row by row, or a bulk one (restore's indexes dropped), logs one
// rebuild marker instead of its rows and drops the rows before it; an
// update across the marker rebuilds, to the same orders.
func TestChangeLogRebuildMarker(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		set  func(t *testing.T)
	}{
		{"many", func(t *testing.T) { setForTest(t, &changeLogTxMax, 10) }},
		{"bulk", func(t *testing.T) { setForTest(t, &bulkMinChanges, 10); setForTest(t, &bulkShare, 1000) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openTestDB(t)
			f := &fleetSim{rng: rand.New(rand.NewPCG(5, 7)), clock: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
			f.round(t, db, 5)
			old, err := db.RestoreOrders(ctx)
			if err != nil {
				t.Fatal(err)
			}
			drops := bulkDrops.Load()
			c.set(t)
			f.round(t, db, 60)
			if c.name == "bulk" && bulkDrops.Load() == drops {
				t.Fatal("the reconciliation was not a bulk one")
			}
			if named, markers := logRows(t, db); named != 0 || markers != 1 {
				t.Fatalf("the log holds %d rows and %d markers, want the marker alone", named, markers)
			}
			if got, err := db.updateOrders(ctx, old); err != nil || got != nil {
				t.Fatalf("an update across a rebuild marker did not rebuild: %v", err)
			}
			if n, _, _, _, _ := orders.Sizes(updateEqualsRebuild(t, db, old)); n < 60 {
				t.Fatalf("%d restores", n)
			}
		})
	}
}
