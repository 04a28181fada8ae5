package web

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"
)

// cache keeps expensive aggregates (overview, instance list, build cohorts,
// comparisons) until the warehouse's DataVersion changes. Concurrent
// requests for one key wait for one computation instead of each starting
// one. When an aggregate took long to compute (a large warehouse), a change
// of version serves the previous result while the new one is computed, so
// no page view waits seconds after every import; a quick aggregate (a small
// warehouse, where an upload's effect should show at once) is always fresh,
// and so is any aggregate another one is computed from (the overview reads
// the fleet's orders), so that no stale data is kept under a new version.
type cache struct {
	mu      sync.Mutex
	entries map[string]*cacheEntry
}

type cacheEntry struct {
	version string
	done    chan struct{}
	val     any
	err     error
	took    time.Duration
	prev    *cacheEntry // the last successful computation, for stale reads and updates
	keep    bool        // an updated aggregate (cachedUpdated), kept through a reset
}

// staleAfter is how long a computation must take before its result is
// served stale while the next version is computed.
const staleAfter = 300 * time.Millisecond

func newCache() *cache { return &cache{entries: map[string]*cacheEntry{}} }

// freshKey marks the context of a computation, or of a view that must not
// show a version behind (a restore plan): aggregates it reads are never
// served stale.
type freshKey struct{}

// cached returns compute's result for key at the warehouse's current data
// version (or the previous version's, see cache). The computation runs
// detached from the request, so a client that goes away does not fail the
// others waiting, with its own deadline.
func cached[T any](ctx context.Context, s *Server, key string, compute func(context.Context) (T, error)) (T, error) {
	return cachedFrom(ctx, s, key, false, func(ctx context.Context, _ T) (T, error) { return compute(ctx) })
}

// cachedUpdated is cached for an aggregate made from its previous value
// (the fleet's orders, which follow the restores' change log): compute
// gets the last successful result (T's zero value when there is none),
// which it must not change, and the entry survives the cache's reset, so a
// change of version costs an update and not a rebuild.
func cachedUpdated[T any](ctx context.Context, s *Server, key string, compute func(ctx context.Context, prev T) (T, error)) (T, error) {
	return cachedFrom(ctx, s, key, true, compute)
}

func cachedFrom[T any](ctx context.Context, s *Server, key string, keep bool, compute func(context.Context, T) (T, error)) (T, error) {
	var zero T
	version, err := s.db.DataVersion(ctx)
	if err != nil {
		return zero, err
	}
	c := s.cache
	c.mu.Lock()
	e := c.entries[key]
	stale := e == nil || e.version != version || (isDone(e.done) && e.err != nil)
	if stale && keep && e != nil && !isDone(e.done) {
		// An update is running: updates follow each other, never overlap.
		// Meanwhile requests get what it makes, one version behind at most,
		// and the first request after it starts the next from it, with
		// every change since. During a large import the change log moves
		// about as often as an update of the orders takes: overlapping,
		// updates held several copies of the orders at once and took the
		// import's CPU (docs/benchmarks-log.md has the figures).
		stale = false
	}
	if stale {
		if len(c.entries) > 256 {
			// Compare, plan and instance pages make many keys (a name
			// after a NUL); a rare reset of those keeps memory bounded.
			// The fleet's aggregates stay: there are few, and at 10 M
			// restores some take seconds to compute again.
			maps.DeleteFunc(c.entries, func(k string, e *cacheEntry) bool { return !e.keep && strings.Contains(k, "\x00") })
		}
		ne := &cacheEntry{version: version, done: make(chan struct{}), keep: keep}
		if e != nil {
			// A copy without history, so entries never chain and an entry
			// another request still holds is never written.
			ne.prev = e.prev
			if isDone(e.done) && e.err == nil {
				ne.prev = &cacheEntry{version: e.version, val: e.val, took: e.took}
			}
		}
		var prev T
		if ne.prev != nil {
			prev, _ = ne.prev.val.(T)
		}
		e = ne
		c.entries[key] = e
		go s.compute(key, e, func(ctx context.Context) (any, error) { return compute(ctx, prev) })
	}
	c.mu.Unlock()
	// A computation that reads another aggregate waits for its current
	// version: its own result is kept under the current version, and must
	// not carry the previous one's data until the next change.
	fresh := ctx.Value(freshKey{}) != nil
	if p := e.prev; p != nil && p.took > staleAfter && !isDone(e.done) && !fresh {
		return p.val.(T), nil
	}
	select {
	case <-e.done:
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	if e.err != nil {
		return zero, e.err
	}
	return e.val.(T), nil
}

// compute fills e, recovering a panic into an error: a bug in one
// aggregate must not take the server down.
func (s *Server) compute(key string, e *cacheEntry, f func(context.Context) (any, error)) {
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), freshKey{}, true), 2*time.Minute)
	defer cancel()
	defer close(e.done)
	name, _, _ := strings.Cut(key, "\x00") // the rest may hold user input
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("cached computation panicked", "key", name, "panic", fmt.Sprint(r))
			e.err = fmt.Errorf("panic computing %s: %v", name, r)
		}
	}()
	start := time.Now()
	var kc keptCost
	e.val, e.err = f(context.WithValue(ctx, keptCostKey{}, &kc))
	e.took = time.Since(start)
	if kc.took > e.took {
		// Read from what an import kept: as costly to compute again as
		// when it was computed (served stale on the next change), and
		// already kept.
		e.took = kc.took
	} else if name == key {
		s.kept(key, e)
	}
	if e.took > time.Second && kc.took == 0 {
		s.log.Info("aggregate computed", "key", name, "duration_ms", e.took.Milliseconds())
	}
}

// keptCost is set by a computation that read its value from what was kept
// (keptCurrent): how long computing it took where it was computed.
type keptCost struct{ took time.Duration }

type keptCostKey struct{}

// readKept records, in a cached computation's context, that its value was
// read from what was kept and took took to compute.
func readKept(ctx context.Context, took time.Duration) {
	if kc, ok := ctx.Value(keptCostKey{}).(*keptCost); ok {
		kc.took = max(kc.took, took)
	}
}

func isDone(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// warm computes the heavy aggregates in the background, so the first
// visitor after a start does not wait for them.
func (s *Server) warm() {
	ctx := context.Background()
	if _, err := cached(ctx, s, "overview", s.overview); err != nil {
		s.log.Warn("warming the overview failed", "error", err)
	}
	if _, err := s.cohorts(ctx); err != nil {
		s.log.Warn("warming the build cohorts failed", "error", err)
	}
	if _, err := s.restoreOrders(ctx); err != nil {
		s.log.Warn("warming the restores list's orders failed", "error", err)
	}
}
