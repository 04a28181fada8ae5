// Package collector schedules the live sources of ingest/mssql: one loop per
// instance under a global concurrency cap, a deadline per instance and pass,
// a run record per pass, watermarks that advance only after the pass's
// records are committed, and sampling of restores in flight.
package collector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
)

// Options configures Run.
type Options struct {
	// Once makes one pass over every instance and returns (collect --once).
	// Otherwise Run collects every interval until ctx is cancelled.
	Once bool
	// Logger receives one line per pass and per problem; nil discards.
	Logger *slog.Logger
	// Analysis configures the regression engine run after each pass that
	// added facts.
	Analysis analysis.Options
	// Writer, when set, makes the writer each pass stores its records with
	// (collect --push spools them for a central server); nil stores them
	// in db with an ingest.Loader.
	Writer func() Writer
}

// Per-pass row caps: a first pass over a large msdb or error log is spread
// over several passes instead of one that never fits its timeout.
const (
	maxHistoryRows  = 100_000
	maxErrorLogRows = 100_000
	maxAgentSteps   = 10_000
)

// Connection attempts within one pass (refused, reset): dialRetries more
// after the first, backing off from dialRetryFirst, within the deadline.
// Continuous mode then retries the instance after [collector] retry.
const (
	dialRetries    = 2
	dialRetryFirst = 250 * time.Millisecond
)

// collector is one Run.
type collector struct {
	db   store.Warehouse
	cfg  mssql.Collector
	opt  Options
	log  *slog.Logger
	slot chan struct{} // the concurrency cap on instances being queried
	dial chan struct{} // a wider cap on logins in progress, see pass
	mu   sync.Mutex
	serr error // first warehouse failure
	// importMu serialises the passes' imports (see write).
	importMu sync.Mutex
	// tds7 holds the instances, by name, whose default (strict) login
	// fell back to TDS 7.x TLS: later passes of this Run go straight to
	// it. Guarded by mu.
	tds7 map[string]bool
}

// Run collects from every instance of cfg (and of its CMS) into db. With
// Once it makes one pass over each instance and returns nil even when some
// instances failed (each failure is in its run record and the log); it
// returns an error only when it could not run at all: no instance to collect
// from, or a warehouse that cannot be written. Without Once it runs until ctx
// is cancelled, then waits for the passes in progress to write what they
// completed and returns nil.
func Run(ctx context.Context, db store.Warehouse, cfg *mssql.Config, opt Options) error {
	if cfg == nil {
		return errors.New("collector: no configuration")
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &collector{db: db, cfg: cfg.Collector, opt: opt, log: log,
		slot: make(chan struct{}, max(1, cfg.Collector.Concurrency)),
		dial: make(chan struct{}, 4*max(1, cfg.Collector.Concurrency)), tds7: map[string]bool{}}
	c.fillDefaults()
	instances := c.instances(ctx, cfg)
	if len(instances) == 0 {
		return errors.New("collector: no instance to collect from")
	}
	for _, in := range instances {
		if err := db.SetInstanceTags(context.WithoutCancel(ctx), in.Name, in.Tags); err != nil {
			return fmt.Errorf("collector: %w", err)
		}
	}
	var wg sync.WaitGroup
	for _, in := range instances {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if opt.Once {
				c.pass(ctx, in).closeSession()
				return
			}
			c.loop(ctx, in)
		}()
	}
	wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.serr
}

func (c *collector) fillDefaults() {
	if c.cfg.Interval <= 0 {
		c.cfg.Interval = mssql.DefaultInterval
	}
	if c.cfg.Timeout <= 0 {
		c.cfg.Timeout = mssql.DefaultTimeout
	}
	if c.cfg.InflightInterval <= 0 {
		c.cfg.InflightInterval = mssql.DefaultInflightInterval
	}
	if c.cfg.Retry <= 0 {
		c.cfg.Retry = mssql.DefaultRetry
	}
	if c.cfg.Jitter == nil {
		j := mssql.DefaultJitter
		c.cfg.Jitter = &j
	}
}

// instances returns the configured instances and those of the CMS; an
// [[instance]] overrides a CMS entry of the same name. A CMS that cannot be
// read is logged and recorded as a failed run under its own name.
func (c *collector) instances(ctx context.Context, cfg *mssql.Config) []mssql.Instance {
	out := append([]mssql.Instance(nil), cfg.Instances...)
	if cfg.CMS == nil {
		return out
	}
	started := time.Now()
	listed, err := mssql.ListCMS(ctx, *cfg.CMS, c.cfg.Timeout)
	run := store.CollectorRun{Instance: cfg.CMS.Name, Started: started, Status: store.RunOK,
		Rows: map[string]int64{"instances": int64(len(listed))}, Notes: c.insecure(cfg.CMS.Instance)}
	if err != nil {
		run.Status, run.Errors = store.RunFailed, map[string]string{mssql.SourceCMS: err.Error()}
		c.log.Warn("cms: cannot list instances", "instance", cfg.CMS.Name, "error", err.Error())
	}
	c.record(ctx, run)
	known := map[string]bool{}
	for _, in := range out {
		known[strings.ToLower(in.Name)] = true
	}
	for _, in := range listed {
		if !known[strings.ToLower(in.Name)] {
			known[strings.ToLower(in.Name)] = true
			out = append(out, in)
		}
	}
	return out
}

// record writes a complete run record at once (CMS listings).
func (c *collector) record(ctx context.Context, r store.CollectorRun) {
	wctx := context.WithoutCancel(ctx)
	id, err := c.db.StartRun(wctx, r.Instance, r.Started)
	if err == nil {
		r.ID = id
		err = c.db.FinishRun(wctx, r)
	}
	c.storeFailed(err)
}

func (c *collector) storeFailed(err error) {
	if err == nil {
		return
	}
	c.log.Error("warehouse write failed", "error", err.Error())
	c.mu.Lock()
	if c.serr == nil {
		c.serr = fmt.Errorf("collector: %w", err)
	}
	c.mu.Unlock()
}

// loop collects from one instance until ctx ends. Starts are spread over
// the jitter window so that a fleet does not log in all at once; a failed
// pass is retried sooner than the interval, with back-off.
func (c *collector) loop(ctx context.Context, in mssql.Instance) {
	delay := time.Duration(0)
	if j := *c.cfg.Jitter; j > 0 {
		delay = time.Duration(rand.Int64N(int64(j)))
	}
	failures := 0
	for {
		if !sleep(ctx, delay) {
			return
		}
		start := time.Now()
		out := c.pass(ctx, in)
		if ctx.Err() != nil {
			out.closeSession()
			return
		}
		next := start.Add(c.cfg.Interval)
		if out.sampling() {
			c.sample(ctx, in, out.sess, next)
		}
		out.closeSession()
		delay = time.Until(next)
		if out.unreachable {
			failures++
			delay = min(delay, c.cfg.Retry<<min(failures-1, 20))
		} else {
			failures = 0
		}
	}
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// acquire takes a slot of sem unless ctx ends first.
func acquire(ctx context.Context, sem chan struct{}) bool {
	select {
	case sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}
