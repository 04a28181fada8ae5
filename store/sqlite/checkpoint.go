package sqlite

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// The writer does not checkpoint the WAL: a goroutine does, on a
// connection of its own, while the writer goes on writing. With SQLite's
// default, the commit that takes the WAL past 1,000 pages copies them into
// the database file before it returns; in a large import that was a third
// of the writer's time (each small commit's pages copied one pwrite at a
// time, the same index pages again and again; docs/benchmarks-log.md).
// A PASSIVE checkpoint never waits for the writer nor blocks it, so the copy
// overlaps the writing, on the other core, and a page written by several
// commits within one pass is copied once. writerCheckpointPages keeps
// SQLite's own checkpoint in the writer as a backstop should this goroutine
// fall behind (a WAL of that many pages); BENCHMARKS.md has the figures.
const (
	writerCheckpointPages = 65536
	checkpointBusy        = 100 * time.Millisecond // between passes while the WAL grows
	checkpointIdle        = time.Second            // between passes while it does not
)

// checkpointer runs PASSIVE checkpoints until stop is closed; done is
// closed when it has returned.
type checkpointer struct {
	db         *sql.DB
	stop, done chan struct{}
	closing    sync.Once // DB.Close may be called twice
	frames     int64     // the WAL's length at the previous pass
}

func startCheckpointer(dsn string) (*checkpointer, error) {
	c, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	c.SetMaxOpenConns(1)
	c.SetConnMaxIdleTime(0)
	cp := &checkpointer{db: c, stop: make(chan struct{}), done: make(chan struct{})}
	go cp.run()
	return cp, nil
}

func (cp *checkpointer) run() {
	defer close(cp.done)
	wait := checkpointBusy
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-cp.stop:
			return
		case <-t.C:
		}
		grew, err := cp.pass()
		switch {
		case err != nil || !grew:
			wait = checkpointIdle
		default:
			wait = checkpointBusy
		}
		t.Reset(wait)
	}
}

// pass checkpoints what it can and says whether the WAL changed since the
// previous pass (the writer appended to it or started it again).
func (cp *checkpointer) pass() (grew bool, err error) {
	var busy, frames, copied int64
	err = cp.db.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied)
	if err != nil {
		return false, err
	}
	grew = frames != cp.frames || copied < frames
	cp.frames = frames
	return grew, nil
}

// close stops the goroutine and closes its connection.
func (cp *checkpointer) close() error {
	var err error
	cp.closing.Do(func() {
		close(cp.stop)
		<-cp.done
		err = cp.db.Close()
	})
	return err
}
