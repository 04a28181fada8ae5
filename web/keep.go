package web

// What a running server keeps in the warehouse for its next start (issue
// 32): the fleet's orders and the build cohorts, each read from every
// restore, so that the first pages after a restart or a deploy wait for a
// load, not for those reads. A server used only as a handler (no Start)
// keeps nothing: it has no next start.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/keep"
	"github.com/restorewatch/restorewatch/web/chart"
	"github.com/restorewatch/restorewatch/web/view"
)

// keepFormat changes when what is kept changes meaning: a value kept by a
// server of another format (or another release, Config.Version) is not
// shown, even one version behind.
const keepFormat = "1"

// A snapshot of the orders is saved when they were read from every restore,
// and otherwise once the one kept is ordersSaveLag changes behind, at most
// once every ordersSaveEvery: a start then updates from at most that many
// changes (an update reads what changed).
const (
	ordersSaveLag   = 100_000
	ordersSaveEvery = 10 * time.Minute
)

// keeper encodes and decodes one cached aggregate kept between starts.
// A shared one is kept in store/keep's format, under its version, by the
// server and by whoever changes the data (import, analyze).
type keeper struct {
	encode func(any) ([]byte, error)
	decode func(*Server, []byte) (any, error)
	shared bool
}

// keepers are the aggregates kept, by cache key: those read from every
// restore (the cohorts) or from the orders (the overview, whose counts and
// trend come from store/keep's figures).
var keepers = map[string]keeper{
	keep.NameCohorts: {encode: encodeCohorts, decode: decodeCohorts, shared: true},
	"overview":       {encode: encodeOverview, decode: decodeOverview},
}

// keptVersion is the version a kept aggregate is saved under.
func (s *Server) keptVersion(k keeper, dataVersion string) string {
	if k.shared {
		return keep.Version(s.cfg.Version, dataVersion)
	}
	return s.keepPrint() + keep.Sep + dataVersion
}

// keptData is the data version of a kept aggregate, false when this
// server does not read it (another release, format or catalogue).
func (s *Server) keptData(k keeper, version string) (string, bool) {
	if k.shared {
		return keep.DataVersionOf(s.cfg.Version, version)
	}
	own, data, cut := strings.Cut(version, keep.Sep)
	return data, cut && own == s.keepPrint()
}

// encodeOverview keeps the overview as it is shown; its sparkline's format
// (a function) is set again on loading.
func encodeOverview(v any) ([]byte, error) {
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(v.(view.Overview))
	return b.Bytes(), err
}

// errNamedOtherwise refuses a kept overview whose build and issue names
// this server would write differently (another build reference or issue
// catalogue): it is computed again.
var errNamedOtherwise = errors.New("kept with other build or issue names")

func decodeOverview(s *Server, b []byte) (any, error) {
	var m view.Overview
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&m); err != nil {
		return nil, err
	}
	m.Trend.Format = chart.FormatMiBps
	for _, e := range m.Exposures {
		ki := s.issue(e.IssueID)
		if e.Title != ki.Title || e.BuildName != s.cfg.Namer(e.Build) || e.FixBuilds != s.fixBuilds(ki) {
			return nil, errNamedOtherwise
		}
	}
	return m, nil
}

func encodeCohorts(v any) ([]byte, error) {
	set := v.(cohortSet)
	k := keep.Cohorts{Measured: set.measured}
	for _, r := range set.instance {
		k.Instance = append(k.Instance, r.Cohort)
	}
	for _, r := range set.source {
		k.Source = append(k.Source, r.Cohort)
	}
	return keep.Encode(k)
}

func decodeCohorts(s *Server, b []byte) (any, error) {
	var k keep.Cohorts
	if err := keep.Decode(b, &k); err != nil {
		return nil, err
	}
	return s.namedCohorts(k.Instance, k.Source, k.Measured), nil
}

// keptCurrent returns the body of the shared aggregate name kept at the
// warehouse's current data version (by an import, analyze or this server),
// false when there is none: the computation it saves is then done here.
func (s *Server) keptCurrent(ctx context.Context, name string) ([]byte, bool) {
	version, err := s.db.DataVersion(ctx)
	if err != nil {
		return nil, false
	}
	a, ok, err := keep.Kept(ctx, s.db, name, s.cfg.Version, version)
	if err != nil {
		s.log.Warn("reading a kept aggregate failed; computing it", "key", name, "error", err)
		return nil, false
	}
	if ok {
		readKept(ctx, a.Took)
	}
	return a.Body, ok
}

// keeping is the state of what the server keeps.
type keeping struct {
	on bool           // set by Start
	bg sync.WaitGroup // saves running; Shutdown waits for them
	mu sync.Mutex
	// The orders' snapshot: its position in the change log (-1: none
	// known), when it was saved or loaded, whether a save is running.
	ordersSeq    int64
	ordersAt     time.Time
	ordersSaving bool
	saving       map[string]bool // aggregates being saved
}

// keepPrint is the part of a kept aggregate's version that is the server's
// own, not the data's: the release, the default RTO target and the
// known-issue catalogue the overview's projections and rows come from.
func (s *Server) keepPrint() string {
	h := sha256.New()
	if err := json.NewEncoder(h).Encode(s.issues); err != nil {
		// Not written by this server: nothing kept is read.
		return keepFormat + "/unkept/" + err.Error()
	}
	return fmt.Sprintf("%s/%s/%s/%x", keepFormat, s.cfg.Version, s.cfg.DefaultRTO, h.Sum(nil)[:8])
}

// loadKept puts the kept aggregates in the cache under the data version
// they were computed at: current, they are served as they are; older, they
// are served while the current ones are computed (as after an import),
// when computing them takes long. The orders are loaded on their first use
// (updateOrders). It is called by Start, before the first request.
func (s *Server) loadKept(ctx context.Context) {
	s.keep.mu.Lock()
	s.keep.on, s.keep.ordersSeq = true, -1
	s.keep.mu.Unlock()
	aggs, err := s.db.Aggregates(ctx)
	if err != nil {
		s.log.Warn("reading the kept aggregates failed; computing them", "error", err)
		return
	}
	for _, a := range aggs {
		k, ok := keepers[a.Name]
		if !ok {
			continue
		}
		version, mine := s.keptData(k, a.Version)
		if !mine {
			continue
		}
		v, err := k.decode(s, a.Body)
		if err != nil {
			s.log.Warn("a kept aggregate could not be read; computing it", "key", a.Name, "error", err)
			continue
		}
		done := make(chan struct{})
		close(done)
		s.cache.mu.Lock()
		if _, there := s.cache.entries[a.Name]; !there {
			s.cache.entries[a.Name] = &cacheEntry{version: version, done: done, val: v, took: a.Took}
		}
		s.cache.mu.Unlock()
	}
}

// kept saves a computed aggregate in the background when it is one the
// server keeps and computing it took long (a quick one is computed again).
func (s *Server) kept(key string, e *cacheEntry) {
	k, ok := keepers[key]
	if !ok || e.err != nil || e.took <= staleAfter {
		return
	}
	s.keep.mu.Lock()
	defer s.keep.mu.Unlock()
	if !s.keep.on || s.keep.saving[key] {
		return
	}
	if s.keep.saving == nil {
		s.keep.saving = map[string]bool{}
	}
	s.keep.saving[key] = true
	s.keep.bg.Go(func() {
		defer func() {
			s.keep.mu.Lock()
			delete(s.keep.saving, key)
			s.keep.mu.Unlock()
		}()
		body, err := k.encode(e.val)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err = s.db.SaveAggregate(ctx, store.Aggregate{Name: key, Version: s.keptVersion(k, e.version), Took: e.took, Body: body})
		}
		if err != nil {
			s.log.Warn("keeping an aggregate for the next start failed", "key", key, "error", err)
		}
	})
}

// updateOrders is the fleet's orders made from the previous ones; the
// first time, from the snapshot a previous run kept when there is one
// (brought up to date from the change log like any update), else read from
// every restore. Orders read from every restore, or far ahead of the
// snapshot, are kept for the next start.
func (s *Server) updateOrders(ctx context.Context, prev store.FleetOrders) (store.FleetOrders, error) {
	if prev == nil && s.keeps() {
		start := time.Now()
		loaded, err := s.db.LoadOrders(ctx)
		switch {
		case err != nil:
			s.log.Warn("loading the kept orders failed; reading every restore", "error", err)
		case loaded != nil:
			s.log.Info("kept orders loaded", "seq", loaded.OrdersSeq(), "duration_ms", time.Since(start).Milliseconds())
			prev = loaded
			// A snapshot without heads (an older release's) is saved
			// again once, so the next start has them.
			if h, err := s.db.LoadOrderHeads(ctx); err == nil && h != nil {
				s.keep.mu.Lock()
				s.keep.ordersSeq, s.keep.ordersAt = loaded.OrdersSeq(), time.Now()
				s.keep.mu.Unlock()
			}
		}
	}
	o, err := s.db.UpdateOrders(ctx, prev)
	if err != nil {
		return nil, err
	}
	s.keepOrders(o)
	return o, nil
}

// heads holds the orders' heads in the cache (none: nil).
type heads struct{ h store.OrderHeads }

// orderHeads are the heads of the orders kept (LoadOrderHeads: a few KiB
// and the changes since, read once a data version), which answer the
// restores list's first pages while the orders load: at 10 M restores the
// load took 6-16 s on a loaded machine (issue 42). A server that keeps
// nothing (no Start) reads none, as it loads no orders.
func (s *Server) orderHeads(ctx context.Context) (store.OrderHeads, error) {
	if !s.keeps() {
		return nil, nil
	}
	v, err := cached(ctx, s, "restore-heads", func(ctx context.Context) (heads, error) {
		h, err := s.db.LoadOrderHeads(ctx)
		return heads{h}, err
	})
	return v.h, err
}

// Orders returns the fleet's orders the server holds in memory, nil when
// it holds none (not loaded yet): what keeps the aggregates beside a
// running server reads instead of a second copy of the snapshot. They may
// be behind the warehouse; UpdateOrders brings them up to date.
func (s *Server) Orders() store.FleetOrders {
	c := s.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[ordersKey]
	switch {
	case e == nil:
		return nil
	case isDone(e.done) && e.err == nil:
		o, _ := e.val.(store.FleetOrders)
		return o
	case e.prev != nil:
		o, _ := e.prev.val.(store.FleetOrders)
		return o
	}
	return nil
}

func (s *Server) keeps() bool {
	s.keep.mu.Lock()
	defer s.keep.mu.Unlock()
	return s.keep.on
}

// keepOrders saves o in the background when it is due (see ordersSaveLag).
func (s *Server) keepOrders(o store.FleetOrders) {
	k := &s.keep
	k.mu.Lock()
	defer k.mu.Unlock()
	behind := k.ordersSeq < 0 || o.OrdersSeq()-k.ordersSeq >= ordersSaveLag && time.Since(k.ordersAt) >= ordersSaveEvery
	if !k.on || k.ordersSaving || o.OrdersSeq() == k.ordersSeq || !o.Scanned() && !behind {
		return
	}
	k.ordersSaving = true
	k.bg.Go(func() {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		err := s.db.SaveOrders(ctx, o)
		k.mu.Lock()
		k.ordersSaving = false
		if err == nil {
			k.ordersSeq, k.ordersAt = o.OrdersSeq(), time.Now()
		}
		k.mu.Unlock()
		if err != nil {
			s.log.Warn("keeping the orders for the next start failed", "error", err)
			return
		}
		s.log.Info("orders kept for the next start", "seq", o.OrdersSeq(), "duration_ms", time.Since(start).Milliseconds())
	})
}

// waitKept waits for the saves running to end, until ctx does. No save
// starts after it is called: a save started (bg.Go) while Wait ran was a
// data race on the WaitGroup (found by -race in TestServeTLS).
func (s *Server) waitKept(ctx context.Context) error {
	s.keep.mu.Lock()
	s.keep.on = false
	s.keep.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.keep.bg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("web: saving what the next start reads: %w", ctx.Err())
	}
}
