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
	backups   *mssql.BackupResult
	inflight  []store.InflightSample
	sampled   bool // inflight completed (possibly with no restore running)
	errs      map[string]string
	current   string // the source being read
	fatal     *mssql.Error
	connected bool
	sess      *mssql.Session // open after a complete fetch, for sampling
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

// freeze ends the fetch as the pass sees it: what was recorded stands, the
// source in progress gets reason, and late results are dropped.
func (f *fetched) freeze(kind mssql.ErrorKind, reason string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.abandoned {
		return
	}
	f.abandoned = true
	f.errs[f.current] = reason
	if f.fatal == nil || f.fatal.Kind != kind {
		f.fatal = &mssql.Error{Source: f.current, Kind: kind, Msg: reason}
	}
}

// marks are the watermarks a pass starts from.
type marks struct {
	hist    mssql.HistoryMark
	elog    mssql.LogMark
	agent   mssql.AgentMark
	backups mssql.BackupMark
}

// bounded runs fn under a deadline of d and returns when fn returns or the
// deadline passes, whichever comes first: go-mssqldb does not
// always return at the deadline (a hung login waits for the connection's
// read timeout, a hung query for the server's attention acknowledgement, up
// to 5 s more), and an instance must cost no more than its timeout. An
// abandoned fn finishes in the background and then runs cleanup.
func bounded(ctx context.Context, d time.Duration, fn func(context.Context) error, cleanup func()) (abandoned bool, err error) {
	bctx, cancel := context.WithTimeout(ctx, d)
	done := make(chan error, 1)
	go func() { done <- fn(bctx) }()
	select {
	case err := <-done:
		cancel()
		return false, err
	case <-bctx.Done():
		go func() {
			<-done
			cancel()
			if cleanup != nil {
				cleanup()
			}
		}()
		return true, bctx.Err()
	}
}

// fetch reads every source of one instance in turn, within one timeout of
// the instance's own time: the login and then the queries, without the waits
// for a slot in between (which depend on the rest of the fleet). The login runs under the wide dial cap and only the queries under
// the concurrency cap, so that instances that accept connections but never
// answer a login (the usual hung server) cost their timeout without holding
// a query slot: ten percent of a fleet hung then delays a pass by about one
// timeout, not by hung/concurrency timeouts. On return f holds everything
// the pass will write, and f.sess an open session unless it failed.
func (c *collector) fetch(ctx context.Context, in mssql.Instance, m marks, f *fetched) {
	stop := func() {
		if ctx.Err() != nil {
			f.freeze(mssql.KindCanceled, "canceled: the collector is stopping")
		} else {
			f.freeze(mssql.KindTimeout, "timed out after "+c.cfg.Timeout.String())
		}
	}
	f.set(func() { f.current = mssql.SourceConnect })
	if !acquire(ctx, c.dial) {
		stop()
		return
	}
	var sess *mssql.Session
	loginStart := time.Now()
	abandoned, err := bounded(ctx, c.cfg.Timeout, func(bctx context.Context) error {
		var err error
		sess, err = c.connect(bctx, in)
		return err
	}, func() {
		if sess != nil {
			sess.Close()
		}
	})
	<-c.dial
	left := c.cfg.Timeout - time.Since(loginStart)
	switch {
	case abandoned:
		stop()
		return
	case err != nil:
		if ctx.Err() != nil {
			stop()
		} else {
			f.fail(mssql.SourceConnect, err)
		}
		return
	}
	f.set(func() { f.connected = true })
	if left <= 0 || !acquire(ctx, c.slot) {
		sess.Close()
		stop()
		return
	}
	abandoned, _ = bounded(ctx, left, func(qctx context.Context) error {
		c.query(qctx, sess, m, f)
		return nil
	}, func() { sess.Close() })
	<-c.slot
	if abandoned {
		stop()
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fatal != nil {
		sess.Close()
		return
	}
	f.sess = sess
}

// query reads the sources on an open session, stopping at the first error
// that ends the pass.
func (c *collector) query(ctx context.Context, sess *mssql.Session, m marks, f *fetched) {
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
		{mssql.SourceBackups, func() error {
			r, err := sess.Backups(ctx, m.backups, maxHistoryRows)
			if err == nil {
				f.set(func() { f.backups = r })
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
// would only lock the account. An instance whose default login fell back
// from TDS 8 to TDS 7.x TLS is logged in with TDS 7.x TLS directly for the
// rest of the Run, rather than refused once per pass.
func (c *collector) connect(ctx context.Context, in mssql.Instance) (*mssql.Session, error) {
	c.mu.Lock()
	fallback := in.Encrypt == "" && c.tds7[in.Name]
	c.mu.Unlock()
	if fallback {
		in.Encrypt = mssql.EncryptTrue
	}
	wait := dialRetryFirst
	for attempt := 0; ; attempt++ {
		s, err := mssql.Connect(ctx, in, c.cfg.Timeout)
		if err == nil {
			if in.Encrypt == "" && s.Encrypt == mssql.EncryptTrue {
				c.mu.Lock()
				c.tds7[in.Name] = true
				c.mu.Unlock()
			}
			return s, nil
		}
		var e *mssql.Error
		if attempt == dialRetries || !errors.As(err, &e) || e.Kind != mssql.KindNetwork || ctx.Err() != nil {
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

// insecure returns the run-record note of an instance whose login can be
// read on the network, and logs it as a warning: on every pass, so that an
// explicit encrypt = "false" is never forgotten.
func (c *collector) insecure(in mssql.Instance) []string {
	w := in.Insecure()
	if w == "" {
		return nil
	}
	c.log.Warn("login not protected", "instance", in.Name, "reason", w)
	return []string{w}
}
