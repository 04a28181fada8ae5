package web

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
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
