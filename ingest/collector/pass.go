package collector

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/store"
)

// fetched is what a pass read from its instance. The fetch goroutine adds a
// source only once the source is complete, so a pass cut short by its
// deadline still writes the sources that finished, each with its own
// watermark, and nothing half-read.
type fetched struct {
	mu        sync.Mutex
	host      *mssql.Host
	hist      *mssql.HistoryResult
	elog      *mssql.ErrorLogResult
	agent     *mssql.AgentResult
	inflight  []store.InflightSample
	sampled   bool // inflight completed (possibly with no restore running)
	errs      map[string]string
	notes     []string
	current   string // the source being read
	fatal     *mssql.Error
	connected bool
	sess      *mssql.Session
	done      bool
	abandoned bool
}

// set changes f under its lock, unless the pass stopped waiting: from then
// on what the pass recorded stands, and a late result is dropped.
func (f *fetched) set(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.abandoned {
		fn()
	}
}

// fail records a source's error; false when the error ends the pass.
func (f *fetched) fail(source string, err error) bool {
	var e *mssql.Error
	if !errors.As(err, &e) {
		e = &mssql.Error{Source: source, Kind: mssql.KindServer, Msg: err.Error()}
	}
	f.set(func() {
		f.errs[source] = e.Msg
		if e.Fatal() {
			f.fatal = e
		}
	})
	return !e.Fatal()
}

// finish hands the session to the pass, or closes it when the pass gave up
// waiting (the pass no longer owns anything of this fetch).
func (f *fetched) finish(sess *mssql.Session) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.done = true
	if f.abandoned {
		if sess != nil {
			sess.Close()
		}
		return
	}
	f.sess = sess
}

// marks are the watermarks a pass starts from.
type marks struct {
	hist  mssql.HistoryMark
	elog  mssql.LogMark
	agent mssql.AgentMark
}

// fetch reads every source of one instance in turn. The login runs under the
// wide dial cap and only the queries under the concurrency cap, so that
// instances that accept connections but never answer a login (the usual
// hung server) cost their timeout without holding a query slot: ten percent
// of a fleet hung then delays a pass by one timeout, not by
// hung/concurrency timeouts.
func (c *collector) fetch(ctx context.Context, in mssql.Instance, m marks, f *fetched) {
	f.set(func() { f.current = mssql.SourceConnect })
	sess, err := c.connect(ctx, in)
	if err != nil {
		f.fail(mssql.SourceConnect, err)
		f.finish(nil)
		return
	}
	f.set(func() { f.connected = true })
	if !acquire(ctx, c.slot) {
		f.fail(mssql.SourceConnect, ctx.Err())
		f.finish(sess)
		return
	}
	defer func() { <-c.slot }()
	defer func() { f.finish(sess) }()

	var h *mssql.Host
	var keepFrom time.Time // start of the oldest restore running now
	steps := []struct {
		source string
		read   func() error
	}{
		{mssql.SourceHost, func() error {
			var err error
			if h, err = sess.Host(ctx); err == nil {
				f.set(func() {
					f.host = h
					for part, msg := range h.Degraded {
						f.errs[part] = msg
					}
				})
			}
			return err
		}},
		// In flight before the error log: a restore running now makes the
		// next error-log pass start before its first lines.
		{mssql.SourceInflight, func() error {
			s, err := sess.Inflight(ctx)
			if err == nil {
				for _, x := range s {
					if keepFrom.IsZero() || x.Start.Before(keepFrom) {
						keepFrom = x.Start
					}
				}
				f.set(func() { f.inflight, f.sampled = s, true })
			}
			return err
		}},
		{mssql.SourceHistory, func() error {
			r, err := sess.History(ctx, m.hist, maxHistoryRows)
			if err == nil {
				f.set(func() { f.hist = r })
			}
			return err
		}},
		{mssql.SourceErrorLog, func() error {
			var now time.Time
			if h != nil {
				now = h.Now
			}
			r, err := sess.ErrorLog(ctx, m.elog, now, keepFrom, maxErrorLogRows)
			if err == nil {
				f.set(func() { f.elog = r })
			}
			return err
		}},
		{mssql.SourceAgent, func() error {
			r, err := sess.Agent(ctx, m.agent, maxAgentSteps)
			if err == nil {
				f.set(func() { f.agent = r })
			}
			return err
		}},
	}
	for _, st := range steps {
		f.set(func() { f.current = st.source })
		if err := st.read(); err != nil && !f.fail(st.source, err) {
			return
		}
	}
}

// connect logs in, retrying a refused or reset connection a few times with
// back-off within the pass's deadline. A failed login is never retried: it
// would only lock the account.
func (c *collector) connect(ctx context.Context, in mssql.Instance) (*mssql.Session, error) {
	if !acquire(ctx, c.dial) {
		return nil, ctx.Err()
	}
	defer func() { <-c.dial }()
	wait := dialRetryFirst
	for attempt := 0; ; attempt++ {
		s, err := mssql.Connect(ctx, in, c.cfg.Timeout)
		if err == nil {
			return s, nil
		}
		var e *mssql.Error
		if attempt == 3 || !errors.As(err, &e) || e.Kind != mssql.KindNetwork || ctx.Err() != nil {
			return nil, err
		}
		if d, ok := ctx.Deadline(); ok && time.Until(d) < wait {
			return nil, err
		}
		if !sleep(ctx, wait) {
			return nil, err
		}
		wait *= 2
	}
}
