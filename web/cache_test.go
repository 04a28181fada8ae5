package web

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// versionStore is a Store whose only working method is DataVersion.
type versionStore struct {
	Store
	version atomic.Value
}

func (v *versionStore) DataVersion(context.Context) (string, error) {
	return v.version.Load().(string), nil
}

func TestCacheFreshStaleAndShared(t *testing.T) {
	db := &versionStore{}
	db.version.Store("1")
	s := &Server{db: db, cache: newCache(), log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx := context.Background()
	var calls atomic.Int32
	slow := func(d time.Duration) func(context.Context) (int32, error) {
		return func(context.Context) (int32, error) {
			time.Sleep(d)
			return calls.Add(1), nil
		}
	}
	// Concurrent requests share one computation.
	done := make(chan int32, 4)
	for range 4 {
		go func() { v, _ := cached(ctx, s, "k", slow(50*time.Millisecond)); done <- v }()
	}
	for range 4 {
		if v := <-done; v != 1 {
			t.Fatalf("got %d, want the one shared computation", v)
		}
	}
	// Same version: no recomputation.
	if v, _ := cached(ctx, s, "k", slow(0)); v != 1 {
		t.Fatalf("same version recomputed: %d", v)
	}
	// A quick aggregate is recomputed and waited for when the data change.
	db.version.Store("2")
	if v, _ := cached(ctx, s, "k", slow(0)); v != 2 {
		t.Fatalf("new version served %d, want a fresh 2", v)
	}
	// A slow one is served stale while the new version computes.
	db.version.Store("3")
	if v, _ := cached(ctx, s, "slow", slow(staleAfter+50*time.Millisecond)); v != 3 {
		t.Fatalf("first computation %d", v)
	}
	db.version.Store("4")
	start := time.Now()
	if v, _ := cached(ctx, s, "slow", slow(staleAfter+50*time.Millisecond)); v != 3 || time.Since(start) > staleAfter {
		t.Fatalf("after a change, a slow aggregate gave %d after %v; want the stale 3 at once", v, time.Since(start))
	}
	time.Sleep(2 * staleAfter)
	if v, _ := cached(ctx, s, "slow", slow(0)); v != 4 {
		t.Fatalf("after the recomputation, got %d, want 4", v)
	}
	// An aggregate computed from a slow one waits for the slow one's new
	// version instead of keeping the stale one under the new version.
	db.version.Store("5")
	start = time.Now()
	outer, _ := cached(ctx, s, "outer", func(ctx context.Context) (int32, error) {
		return cached(ctx, s, "slow", slow(staleAfter+50*time.Millisecond))
	})
	if outer != 5 || time.Since(start) < staleAfter {
		t.Fatalf("an aggregate of the slow one gave %d after %v; want the fresh 5, waited for", outer, time.Since(start))
	}
	// A panic becomes an error, and the next request tries again.
	if _, err := cached(ctx, s, "boom", func(context.Context) (int, error) { panic("bug") }); err == nil {
		t.Fatal("a panicking computation returned no error")
	}
	if v, err := cached(ctx, s, "boom", func(context.Context) (int, error) { return 7, nil }); err != nil || v != 7 {
		t.Fatalf("retry after a failure: %d, %v", v, err)
	}
}

// TestUpdatesFollowEachOther: an aggregate made from its previous value
// (cachedUpdated) is updated by one computation at a time, however often
// the data change meanwhile, each from the last one's value; requests
// during an update get its result.
func TestUpdatesFollowEachOther(t *testing.T) {
	db := &versionStore{}
	db.version.Store("1")
	s := &Server{db: db, cache: newCache(), log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx := context.Background()
	var running, most, calls atomic.Int32
	release := make(chan struct{})
	update := func(_ context.Context, prev int32) (int32, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		calls.Add(1)
		<-release
		return prev + 1, nil
	}
	got := make(chan int32, 3)
	go func() { v, _ := cachedUpdated(ctx, s, "orders", update); got <- v }()
	for running.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	for _, v := range []string{"2", "3"} { // the data change twice during the update
		db.version.Store(v)
		go func() { v, _ := cachedUpdated(ctx, s, "orders", update); got <- v }()
	}
	time.Sleep(50 * time.Millisecond)
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d updates started while one ran, want 1", n)
	}
	close(release)
	for range 3 {
		if v := <-got; v != 1 {
			t.Errorf("a request during the update got %d, want its result 1", v)
		}
	}
	// The next request starts the next update, from the last one's value.
	if v, _ := cachedUpdated(ctx, s, "orders", update); v != 2 {
		t.Errorf("after the update, got %d, want 2 (the next update, from 1)", v)
	}
	if m := most.Load(); m != 1 {
		t.Errorf("%d updates ran at once, want 1", m)
	}
}

// ordersStore is a warehouse that remembers which orders each update of the
// fleet's orders started from.
type ordersStore struct {
	Store
	mu   sync.Mutex
	olds []store.FleetOrders
}

func (o *ordersStore) UpdateOrders(ctx context.Context, old store.FleetOrders) (store.FleetOrders, error) {
	o.mu.Lock()
	o.olds = append(o.olds, old)
	o.mu.Unlock()
	return o.Store.UpdateOrders(ctx, old)
}

func (o *ordersStore) lastOld() store.FleetOrders {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.olds[len(o.olds)-1]
}

// TestRestoreOrdersFollowImports: once the data change, the fleet's orders
// are the previous ones updated (not rebuilt), even after the cache's reset
// of its many keys, and show what a rebuild shows.
func TestRestoreOrdersFollowImports(t *testing.T) {
	ctx := context.Background()
	db := storetest.OpenEngine(t)
	st := &ordersStore{Store: db.(Store)}
	s := &Server{db: st, cache: newCache(), log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	next := 0
	importSome := func(n int) {
		t.Helper()
		im, err := db.NewImport(ctx, "test", "h.csv")
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			next++
			if err := im.History(store.HistoryRow{Instance: fmt.Sprintf("SQL%d", next%3), RestoreHistoryID: int64(next),
				RestoreDate: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(next) * time.Hour),
				Database:    "Sales", RestoreType: "D", BackupType: "D",
				Origin: store.Origin{Source: "history", File: "h.csv", Line: next}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := im.CommitAndReconcile(); err != nil {
			t.Fatal(err)
		}
	}
	all := store.RestoreFilter{Sort: "at"}
	check := func(o store.FleetOrders, want int) {
		t.Helper()
		rebuilt, err := db.UpdateOrders(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, total, _ := o.Page(all, 0)
		wantIDs, _, _ := rebuilt.Page(all, 0)
		if total != want || !slices.Equal(got, wantIDs) {
			t.Fatalf("the orders list %d restores %v, want %d %v", total, got, want, wantIDs)
		}
	}
	importSome(5)
	o1, err := s.restoreOrders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.lastOld() != nil {
		t.Fatal("the first orders were updated from some")
	}
	check(o1, 5)
	first, _, _ := o1.Page(all, 0)
	importSome(3)
	o2, err := s.restoreOrders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.lastOld() != o1 {
		t.Fatal("after an import, the orders were not updated from the previous ones")
	}
	check(o2, 8)
	// Many other keys, then a change: the reset keeps the orders.
	for i := range 300 {
		if _, err := cached(ctx, s, fmt.Sprint("k", i), func(context.Context) (int, error) { return i, nil }); err != nil {
			t.Fatal(err)
		}
	}
	importSome(2)
	if _, err := cached(ctx, s, "another", func(context.Context) (int, error) { return 0, nil }); err != nil {
		t.Fatal(err)
	}
	o3, err := s.restoreOrders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.lastOld() != o2 {
		t.Fatal("after the cache's reset, the orders were rebuilt")
	}
	check(o3, 10)
	if again, _, _ := o1.Page(all, 0); !slices.Equal(again, first) {
		t.Fatalf("the first orders changed: %v, then %v", first, again)
	}
}
