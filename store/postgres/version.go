package postgres

import (
	"context"
	"sync"
	"time"
)

// versionFlight shares DataVersion's query among concurrent callers
// without serving any of them a version older than its call: a caller
// joins the query that is waiting to start (it will read the database after
// the caller arrived), never one already running. Every cached page asks
// for the version on every view; on SQLite that is a read of pages in the
// process, here a round trip to a server process, and eight clients on one
// page made eight of them at once (bench/engines.sh: a page whose only
// query it is, /api/builds, 2.5× SQLite's p95 at load 15). At most one
// query runs and one waits, whatever the number of clients.
type versionFlight struct {
	mu      sync.Mutex
	waiting *versionCall // the next query, not started yet: callers join it
	run     sync.Mutex   // held by the running query
}

type versionCall struct {
	done chan struct{}
	v    string
	err  error
}

// versionTimeout bounds the shared query: it runs detached from the caller
// that starts it, so that one client going away fails no other.
const versionTimeout = 30 * time.Second

func (f *versionFlight) do(ctx context.Context, query func(context.Context) (string, error)) (string, error) {
	f.mu.Lock()
	if c := f.waiting; c != nil {
		f.mu.Unlock()
		select {
		case <-c.done:
			return c.v, c.err
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	c := &versionCall{done: make(chan struct{})}
	f.waiting = c
	f.mu.Unlock()
	f.run.Lock()
	f.mu.Lock()
	f.waiting = nil // from here on the query reads what a newcomer must see: newcomers wait for the next
	f.mu.Unlock()
	qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), versionTimeout)
	c.v, c.err = query(qctx)
	cancel()
	f.run.Unlock()
	close(c.done)
	return c.v, c.err
}
