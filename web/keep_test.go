package web_test

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/keep"
	"github.com/restorewatch/restorewatch/web"
)

// slowWarehouse is a warehouse whose whole-fleet reads (the orders, the
// cohorts) take as long as a large one's, so that the server keeps them
// for its next start, and which counts those reads.
type slowWarehouse struct {
	web.Store
	scans, cohortReads, loads atomic.Int64
	rtoReads, instanceReads   atomic.Int64
	hold                      chan struct{} // when set, a load of the kept orders waits for it
}

func (s *slowWarehouse) UpdateOrders(ctx context.Context, old store.FleetOrders) (store.FleetOrders, error) {
	if old == nil {
		s.scans.Add(1)
		time.Sleep(400 * time.Millisecond)
	}
	return s.Store.UpdateOrders(ctx, old)
}

func (s *slowWarehouse) RelativeByBuild(ctx context.Context) (map[string][]float64, map[string][]float64, int, error) {
	s.cohortReads.Add(1)
	time.Sleep(400 * time.Millisecond)
	return s.Store.RelativeByBuild(ctx)
}

func (s *slowWarehouse) ListInstances(ctx context.Context, name string) ([]store.InstanceSummary, error) {
	if name == "" {
		s.instanceReads.Add(1)
	}
	return s.Store.ListInstances(ctx, name)
}

func (s *slowWarehouse) RTOCandidates(ctx context.Context) ([]store.RTOCandidate, error) {
	s.rtoReads.Add(1)
	return s.Store.RTOCandidates(ctx)
}

func (s *slowWarehouse) LoadOrders(ctx context.Context) (store.FleetOrders, error) {
	if s.hold != nil {
		select {
		case <-s.hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	o, err := s.Store.LoadOrders(ctx)
	if o != nil {
		s.loads.Add(1)
	}
	return o, err
}

// The first pages after a restart come from what the previous run kept:
// the same bytes as that run served, with no read of every restore.
func TestRestartShowsWhatWasKept(t *testing.T) {
	ctx := context.Background()
	db := copyDemo(t)
	pages := []string{"/", "/builds", "/api/builds", "/restores", "/restores?sort=longest&kind=full", "/restores?page=3",
		"/compare?a=build:13.0.4474.0&b=build:13.0.5026.0"}
	run := func(w *slowWarehouse) map[string]string {
		t.Helper()
		s := web.New(web.Config{DB: w, Addr: "127.0.0.1:0", Version: "test"})
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		bodies := map[string]string{}
		held := ""
		if w.hold != nil {
			// The overview kept is shown while the orders load.
			done := make(chan struct{})
			go func() {
				defer close(done)
				if resp, err := client(t).Get("http://" + s.Addr() + "/"); err == nil {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					held = string(b)
				}
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Error("the overview waited for the orders to load")
			}
			close(w.hold)
			<-done
		}
		for _, p := range pages {
			code, body, _ := get(t, client(t), "http://"+s.Addr()+p)
			if code != http.StatusOK {
				t.Fatalf("%s: %d", p, code)
			}
			bodies[p] = body
		}
		if w.hold != nil && held != bodies["/"] {
			t.Errorf("the overview shown while the orders loaded differs from the one after (%d bytes, then %d)", len(held), len(bodies["/"]))
		}
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := s.Shutdown(sctx); err != nil { // waits for what it keeps
			t.Fatal(err)
		}
		return bodies
	}
	first := &slowWarehouse{Store: db}
	want := run(first)
	if first.scans.Load() != 1 || first.cohortReads.Load() != 1 || first.loads.Load() != 0 {
		t.Fatalf("first run: %d scans, %d cohort reads, %d loads; want 1, 1, 0", first.scans.Load(), first.cohortReads.Load(), first.loads.Load())
	}
	second := &slowWarehouse{Store: db, hold: make(chan struct{})}
	got := run(second)
	if second.scans.Load() != 0 || second.cohortReads.Load() != 0 || second.loads.Load() != 1 {
		t.Fatalf("after the restart: %d scans, %d cohort reads, %d loads; want 0, 0, 1", second.scans.Load(), second.cohortReads.Load(), second.loads.Load())
	}
	for _, p := range pages {
		if got[p] != want[p] {
			t.Errorf("%s differs after the restart (%d bytes, was %d)", p, len(got[p]), len(want[p]))
		}
	}

	// Another release does not show what this one kept.
	other := &slowWarehouse{Store: db}
	s := web.New(web.Config{DB: other, Addr: "127.0.0.1:0", Version: "other"})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := get(t, client(t), "http://"+s.Addr()+"/builds"); code != http.StatusOK {
		t.Fatalf("/builds of another release: %d", code)
	}
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if other.cohortReads.Load() != 1 {
		t.Errorf("another release read the cohorts %d times; want 1 (what this one kept is not its)", other.cohortReads.Load())
	}
}

// The first start after an import or analyze (issue 42) shows the overview
// and the build cohorts from what the command kept (store/keep), with no
// read of every restore nor of the cohorts, the same bytes as a server that
// computed them; the orders load from the command's snapshot.
func TestFirstStartAfterAnImportReadsWhatItKept(t *testing.T) {
	ctx := context.Background()
	computed, imported := copyDemo(t), copyDemo(t)
	if _, err := keep.Refresh(ctx, imported, "test", time.Now(), true); err != nil {
		t.Fatal(err)
	}
	pages := []string{"/", "/builds", "/api/builds", "/restores", "/restores?sort=longest&kind=full", "/instances", "/api/instances"}
	run := func(w *slowWarehouse) map[string]string {
		t.Helper()
		s := web.New(web.Config{DB: w, Addr: "127.0.0.1:0", Version: "test"})
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		bodies := map[string]string{}
		for _, p := range pages {
			code, body, _ := get(t, client(t), "http://"+s.Addr()+p)
			if code != http.StatusOK {
				t.Fatalf("%s: %d", p, code)
			}
			bodies[p] = body
		}
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := s.Shutdown(sctx); err != nil {
			t.Fatal(err)
		}
		return bodies
	}
	want := run(&slowWarehouse{Store: computed})
	w := &slowWarehouse{Store: imported}
	got := run(w)
	if w.scans.Load() != 0 || w.cohortReads.Load() != 0 || w.loads.Load() != 1 || w.rtoReads.Load() != 0 || w.instanceReads.Load() != 0 {
		t.Errorf("first start after the import: %d scans, %d cohort reads, %d loads, %d reads of the RTO candidates, %d of the instance list; want 0, 0, 1, 0, 0",
			w.scans.Load(), w.cohortReads.Load(), w.loads.Load(), w.rtoReads.Load(), w.instanceReads.Load())
	}
	for _, p := range pages {
		if got[p] != want[p] {
			t.Errorf("%s differs from a server that computed it (%d bytes, want %d)", p, len(got[p]), len(want[p]))
		}
	}
}

// The restores list's first pages answer while the orders load, from the
// heads kept with them (issue 42: 11 s at 10 M restores on a loaded
// machine), the same bytes as once the orders are loaded; a filtered list
// waits for the orders.
func TestRestoresFirstPagesWhileTheOrdersLoad(t *testing.T) {
	ctx := context.Background()
	db := copyDemo(t)
	if _, err := keep.Refresh(ctx, db, "test", time.Now(), false); err != nil {
		t.Fatal(err)
	}
	w := &slowWarehouse{Store: db, hold: make(chan struct{})}
	s := web.New(web.Config{DB: w, Addr: "127.0.0.1:0", Version: "test"})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(ctx)
	pages := []string{"/restores", "/restores?sort=longest", "/restores?sort=slowest&page=2", "/restores?sort=oldest&page=3",
		"/restores?sort=fastest", "/restores?sort=shortest&page=4"}
	quick := &http.Client{Timeout: 20 * time.Second}
	held := map[string]string{}
	for _, p := range pages {
		resp, err := quick.Get("http://" + s.Addr() + p)
		if err != nil {
			t.Fatalf("%s waited for the orders: %v", p, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", p, resp.StatusCode)
		}
		held[p] = string(b)
	}
	if w.loads.Load() != 0 {
		t.Fatal("the orders loaded while held")
	}
	close(w.hold)
	// A filtered list is answered by the orders: once it is, they are.
	if code, _, _ := get(t, client(t), "http://"+s.Addr()+"/restores?kind=full"); code != http.StatusOK {
		t.Fatalf("/restores?kind=full: %d", code)
	}
	if w.loads.Load() != 1 || w.scans.Load() != 0 {
		t.Fatalf("%d loads, %d scans of the orders; want 1, 0", w.loads.Load(), w.scans.Load())
	}
	for _, p := range pages {
		_, body, _ := get(t, client(t), "http://"+s.Addr()+p)
		if body != held[p] {
			t.Errorf("%s differs once the orders are loaded (%d bytes, was %d while they loaded)", p, len(body), len(held[p]))
		}
	}
}

// headlessWarehouse is a warehouse whose orders' snapshot has no heads, as
// one an older release saved, until the server saves the orders.
type headlessWarehouse struct {
	*slowWarehouse
	saved atomic.Bool
}

func (h *headlessWarehouse) LoadOrderHeads(ctx context.Context) (store.OrderHeads, error) {
	if !h.saved.Load() {
		return nil, nil
	}
	return h.slowWarehouse.LoadOrderHeads(ctx)
}

func (h *headlessWarehouse) SaveOrders(ctx context.Context, o store.FleetOrders) error {
	err := h.slowWarehouse.SaveOrders(ctx, o)
	h.saved.Store(err == nil)
	return err
}

// A server that loads a snapshot without heads saves its orders again,
// so that the next start's first restores page does not wait for them.
func TestServerSavesASnapshotWithoutHeads(t *testing.T) {
	ctx := context.Background()
	db := copyDemo(t)
	if _, err := keep.Refresh(ctx, db, "test", time.Now(), false); err != nil {
		t.Fatal(err)
	}
	w := &headlessWarehouse{slowWarehouse: &slowWarehouse{Store: db}}
	s := web.New(web.Config{DB: w, Addr: "127.0.0.1:0", Version: "test"})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := get(t, client(t), "http://"+s.Addr()+"/restores?kind=full"); code != http.StatusOK {
		t.Fatalf("/restores?kind=full: %d", code)
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.Shutdown(sctx); err != nil { // waits for what it keeps
		t.Fatal(err)
	}
	if w.loads.Load() != 1 || !w.saved.Load() {
		t.Fatalf("%d loads of the orders, saved again: %v; want 1, true", w.loads.Load(), w.saved.Load())
	}
}
