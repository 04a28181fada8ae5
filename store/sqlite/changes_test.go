package sqlite

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// orderRowOf is one restore as o holds it, its names resolved (codes differ
// between an updated and a rebuilt orders); an id o does not hold must have
// every column zero.
func orderRowOf(o *RestoreOrders, id int32, held bool) string {
	k := int(id >> chunkBits)
	if k >= len(o.chunks) || o.chunks[k] == nil {
		if held {
			return "held, no chunk"
		}
		return "none"
	}
	c, i := o.chunks[k], id&chunkMask
	if !held {
		if c.kind[i] != 0 || c.at[i] != 0 || c.dur[i] != 0 || c.mibps[i] != 0 || c.build[i] != 0 || c.database[i] != 0 || c.source[i] != 0 {
			return fmt.Sprintf("left over: %d %d %v %v %d %d %d", c.kind[i], c.at[i], c.dur[i], c.mibps[i], c.build[i], c.database[i], c.source[i])
		}
		return "none"
	}
	name := func(which int, code uint32) string {
		if int(code) >= len(o.names[which]) {
			return fmt.Sprintf("code %d of %d names", code, len(o.names[which]))
		}
		return o.names[which][code]
	}
	return fmt.Sprintf("%d %d %x %x %q %q %q", c.kind[i], c.at[i], math.Float64bits(c.dur[i]), math.Float64bits(c.mibps[i]),
		name(nameBuild, c.build[i]), name(nameDatabase, c.database[i]), name(nameSource, c.source[i]))
}

// ordersDiff says how got differs from want: the three orders, and every
// id's columns.
func ordersDiff(got, want *RestoreOrders) string {
	for _, o := range []struct {
		name      string
		got, want []int32
	}{{"time", got.byAt, want.byAt}, {"duration", got.duration, want.duration}, {"throughput", got.throughput, want.throughput}} {
		if !slices.Equal(o.got, o.want) {
			return fmt.Sprintf("order by %s: %v, want %v", o.name, o.got, o.want)
		}
	}
	held := map[int32]bool{}
	for _, id := range want.byAt {
		held[id] = true
	}
	for id := range int32(max(len(got.chunks), len(want.chunks)) * chunkLen) {
		if g, w := orderRowOf(got, id, held[id]), orderRowOf(want, id, held[id]); g != w {
			return fmt.Sprintf("restore %d: %s, want %s", id, g, w)
		}
	}
	if got.seq != want.seq {
		return fmt.Sprintf("position %d, want %d", got.seq, want.seq)
	}
	// The counts by name are those of the restores held, and each source
	// server's order is the time order's restores of that server, whatever
	// the path that made them.
	for _, o := range []*RestoreOrders{got, want} {
		bySource := map[uint32][]int32{}
		for _, id := range o.byAt {
			c := o.chunks[id>>chunkBits].source[id&chunkMask]
			bySource[c] = append(bySource[c], id)
		}
		for c := range max(len(o.bySource), len(o.names[nameSource])) {
			if have := o.sourceOrder(c); !slices.Equal(have, bySource[uint32(c)]) {
				return fmt.Sprintf("source %d's order: %v, want %v", c, have, bySource[uint32(c)])
			}
		}
		var counts [3][]int64
		for k := range counts {
			counts[k] = make([]int64, len(o.names[k]))
		}
		for _, id := range o.byAt {
			c, i := o.chunks[id>>chunkBits], id&chunkMask
			counts[nameBuild][c.build[i]]++
			counts[nameDatabase][c.database[i]]++
			counts[nameSource][c.source[i]]++
		}
		for k := range counts {
			for code, n := range counts[k] {
				if have := int64(0); code < len(o.counts[k]) && o.counts[k][code] != n || code >= len(o.counts[k]) && n != have {
					return fmt.Sprintf("count of %q: %v, want %d", o.names[k][code], o.counts[k], n)
				}
			}
		}
	}
	return ""
}

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
	if d := ordersDiff(got, want); d != "" {
		tb.Fatal(d)
	}
	return want
}

// ordersDump is everything o answers, to tell that an update left it as
// it was.
func ordersDump(o *RestoreOrders) string {
	s := fmt.Sprint(o.seq, o.byAt, o.duration, o.throughput, o.names)
	for _, id := range o.byAt {
		s += orderRowOf(o, id, true)
	}
	return s
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
					dumps = append(dumps, ordersDump(old))
					wg.Go(func() { gots[i], errs[i] = db.updateOrders(ctx, old) })
					wg.Go(func() { old.Page(store.RestoreFilter{Sort: "duration", Database: "Sales"}, 0) })
				}
				wg.Wait()
				for i, old := range olds {
					if errs[i] != nil {
						t.Fatal(errs[i])
					}
					if gots[i] == nil {
						t.Fatalf("round %d: the update from position %d rebuilt", round, old.seq)
					}
				}
				for i, old := range olds {
					if d := ordersDiff(gots[i], want); d != "" {
						t.Fatalf("round %d, update %d from position %d: %s", round, i, old.seq, d)
					}
					if after := ordersDump(old); after != dumps[i] {
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
			if len(last.byAt) < 100 || len(last.duration) == 0 || len(last.throughput) == 0 || len(last.names[nameBuild]) < 2 || len(last.names[nameSource]) < 2 {
				t.Fatalf("a fleet too plain to test: %d restores, %d timed, %d measured, names %v", len(last.byAt),
					len(last.duration), len(last.throughput), last.names)
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
	if d := ordersDiff(got, want); d != "" {
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
			if want := updateEqualsRebuild(t, db, old); len(want.byAt) < 60 {
				t.Fatalf("%d restores", len(want.byAt))
			}
		})
	}
}

// TestMergeOrder: removing and adding entries by search and copied runs
// gives the order a sort of the result gives, for random orders where
// values repeat, entries go at either end, and a changed entry keeps or
// changes its value.
func TestMergeOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for range 2000 {
		n := rng.IntN(60)
		vals := map[int32]int64{} // id → value as the order was made
		var order []keyed[int64]
		for id := range int32(n) {
			if rng.IntN(4) > 0 {
				vals[id] = int64(rng.IntN(10))
				order = append(order, keyed[int64]{vals[id], id})
			}
		}
		ids := sortedIDs(order)
		now := maps.Clone(vals)
		var gone, adds []keyed[int64]
		for id := range int32(n + 10) {
			switch rng.IntN(5) {
			case 0: // changed (or unchanged) value, or new
				if v, ok := vals[id]; ok {
					gone = append(gone, keyed[int64]{v, id})
				}
				now[id] = int64(rng.IntN(12)) - 1
				adds = append(adds, keyed[int64]{now[id], id})
			case 1: // deleted, or never there
				if v, ok := vals[id]; ok {
					gone = append(gone, keyed[int64]{v, id})
				} else {
					gone = append(gone, keyed[int64]{0, id})
				}
				delete(now, id)
			}
		}
		var want []keyed[int64]
		for id, v := range now {
			want = append(want, keyed[int64]{v, id})
		}
		got := mergeOrder(ids, gone, adds, func(id int32) int64 { return vals[id] })
		if w := sortedIDs(want); !slices.Equal(got, w) && len(got)+len(w) > 0 {
			t.Fatalf("order %v (values %v), gone %v, adds %v: %v, want %v", ids, vals, gone, adds, got, w)
		}
	}
}
