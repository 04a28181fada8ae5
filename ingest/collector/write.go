package collector

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/store"
)

// passOut is what a pass leaves for its instance's loop.
type passOut struct {
	sess        *mssql.Session // open while restores run, for sampling
	running     bool
	unreachable bool // nothing was read: retry sooner
}

func (o passOut) sampling() bool { return o.sess != nil && o.running }

func (o passOut) closeSession() {
	if o.sess != nil {
		o.sess.Close()
	}
}

// pass collects one instance once: it records the run, reads the sources
// (login and queries each within one timeout, see fetch), writes the
// sources that completed in one import, only then advances their
// watermarks, and re-judges the instance.
func (c *collector) pass(ctx context.Context, in mssql.Instance) passOut {
	started := time.Now()
	// Writes outlive a cancelled ctx: a stop signal must not leave a run
	// "running" or an import half-closed. Each write is local and short.
	wctx := context.WithoutCancel(ctx)
	runID, err := c.db.StartRun(wctx, in.Name, started)
	if err != nil {
		c.storeFailed(err)
		return passOut{}
	}
	run := store.CollectorRun{ID: runID, Instance: in.Name, Started: started,
		Rows: map[string]int64{}, Errors: map[string]string{}, Notes: c.insecure(in)}
	f := &fetched{errs: map[string]string{}}
	m := c.loadMarks(wctx, in.Name, &run)

	c.fetch(ctx, in, m, f)
	f.mu.Lock()
	if f.fatal != nil && f.fatal.Kind == mssql.KindTimeout {
		// The driver's read timeout and the deadline are the same limit;
		// say so in one way.
		f.errs[f.fatal.Source] = "timed out after " + c.cfg.Timeout.String()
	}
	out := passOut{sess: f.sess, running: f.sampled && len(f.inflight) > 0}
	f.mu.Unlock()

	c.write(wctx, in, f, &run)
	run.Status = status(f, &run)
	out.unreachable = !f.connected || (f.host == nil && f.fatal != nil)
	for k, v := range f.errs {
		run.Errors[k] = v
	}
	fin := time.Now()
	run.Finished = &fin
	c.storeFailed(c.db.FinishRun(wctx, run))
	if rw, ok := c.writer().(RunWriter); ok {
		c.storeFailed(rw.FinishedRun(wctx, run))
	}
	c.logRun(in, run)
	if ctx.Err() != nil {
		out.closeSession()
		out.sess = nil
	}
	return out
}

// loadMarks reads the watermarks; an unreadable one starts its source over
// (harmless: the warehouse deduplicates) and is noted.
func (c *collector) loadMarks(ctx context.Context, inst string, run *store.CollectorRun) marks {
	var m marks
	for _, x := range []struct {
		source string
		into   any
	}{{mssql.SourceHistory, &m.hist}, {mssql.SourceErrorLog, &m.elog}, {mssql.SourceAgent, &m.agent}, {mssql.SourceBackups, &m.backups}} {
		v, ok, err := c.db.Watermark(ctx, inst, x.source)
		if err != nil {
			c.storeFailed(err)
			continue
		}
		if ok && json.Unmarshal([]byte(v), x.into) != nil {
			run.Notes = append(run.Notes, x.source+": unreadable watermark, read from the start")
		}
	}
	return m
}

// write imports the completed sources in one import, advances their
// watermarks once it committed, stores the in-flight sample and runs the
// analysis of the instance.
func (c *collector) write(ctx context.Context, in mssql.Instance, f *fetched, run *store.CollectorRun) {
	f.mu.Lock()
	h, hist, elog, agent, backups := f.host, f.hist, f.elog, f.agent, f.backups
	inflight, sampled := f.inflight, f.sampled
	f.mu.Unlock()

	if sampled {
		run.Rows[mssql.SourceInflight] = int64(len(inflight))
		if err := c.db.AddInflightSamples(ctx, in.Name, inflight); err != nil {
			c.storeFailed(err)
			run.Errors["warehouse"] = err.Error()
		}
	}
	if h == nil && hist == nil && elog == nil && agent == nil && backups == nil {
		return
	}
	// One pass's write at a time: the warehouse has one writer anyway, and
	// deriving reconciles every instance marked dirty, so concurrent passes
	// would reconcile the same instances over and over (measured: 6 times
	// each at 500 instances and concurrency 32).
	c.importMu.Lock()
	defer c.importMu.Unlock()
	l := c.writer()
	feed := func(im store.Sink) error {
		if h != nil {
			run.Rows[mssql.SourceHost] = 1
			if err := im.Host(h.Snapshot); err != nil {
				return err
			}
		}
		if hist != nil {
			run.Rows[mssql.SourceHistory] = int64(len(hist.Rows))
			if hist.Rebuilt != "" {
				run.Notes = append(run.Notes, "history: "+hist.Rebuilt+"; history re-read from its start")
			}
			if hist.More {
				run.Notes = append(run.Notes, "history: row cap reached, the next pass continues")
			}
			for _, r := range hist.Rows {
				if err := im.History(r); err != nil {
					return err
				}
			}
		}
		if elog != nil {
			run.Rows[mssql.SourceErrorLog] = int64(len(elog.Restores))
			run.Rows["errorlog_lines"] = int64(elog.Rows)
			run.Rows["errorlog_rejects"] = int64(elog.Rejects)
			run.Rows["errorlog_startups"] = int64(len(elog.Hosts))
			for _, n := range elog.Notes {
				run.Notes = append(run.Notes, "errorlog: "+n)
			}
			if elog.More {
				run.Notes = append(run.Notes, "errorlog: row cap reached, the next pass continues")
			}
			for _, x := range elog.Hosts {
				if err := im.Host(x); err != nil {
					return err
				}
			}
			for _, r := range elog.Restores {
				if err := im.LogRestore(r); err != nil {
					return err
				}
			}
		}
		if agent != nil {
			run.Rows[mssql.SourceAgent] = int64(len(agent.Restores))
			run.Rows["agent_steps"] = int64(agent.Steps)
			if agent.Rebuilt != "" {
				run.Notes = append(run.Notes, "agent: "+agent.Rebuilt+"; job history re-read from its start")
			}
			for _, r := range agent.Restores {
				if err := im.LogRestore(r); err != nil {
					return err
				}
			}
		}
		return nil
	}
	sum, ferr := l.Records(ctx, "live", in.Name, feed)
	run.Rows["added"], run.Rows["duplicates"] = sum.Added, sum.Duplicates
	if len(sum.Rejects) > 0 {
		run.Rows["rejected"] = int64(len(sum.Rejects))
	}
	if ferr != nil {
		// Nothing advances: the next pass reads the same rows again and the
		// warehouse keeps whatever batches did commit exactly once. What
		// did commit is derived and judged all the same.
		c.storeFailed(ferr)
		run.Errors["warehouse"] = ferr.Error()
		c.derive(ctx, l, in, run)
		return
	}
	set := func(source string, v any) {
		b, _ := json.Marshal(v)
		if err := c.db.SetWatermark(ctx, in.Name, source, string(b)); err != nil {
			c.storeFailed(err)
			run.Errors["warehouse"] = err.Error()
		}
	}
	if hist != nil {
		set(mssql.SourceHistory, hist.Mark)
	}
	if elog != nil {
		set(mssql.SourceErrorLog, elog.Mark)
	}
	if agent != nil {
		set(mssql.SourceAgent, agent.Mark)
	}
	if backups != nil {
		// Backup sets are keyed by their uuid: a pass that stops here
		// re-reads them next time and adds nothing twice.
		run.Rows[mssql.SourceBackups] = int64(len(backups.Sets))
		if backups.Rebuilt != "" {
			run.Notes = append(run.Notes, "backups: "+backups.Rebuilt+"; backup history re-read from its start")
		}
		if backups.More {
			run.Notes = append(run.Notes, "backups: row cap reached, the next pass continues")
		}
		if backups.Availability != "" {
			run.Notes = append(run.Notes, "backups: "+backups.Availability)
		}
		if _, err := l.Records(ctx, "live", in.Name, func(s store.Sink) error {
			for _, b := range backups.Sets {
				if err := s.BackupSet(b); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			c.storeFailed(err)
			run.Errors["warehouse"] = err.Error()
		} else {
			set(mssql.SourceBackups, backups.Mark)
		}
	}
	c.derive(ctx, l, in, run)
}

// derive derives the instance's restores from what the pass stored and
// re-judges its series. Findings are derived; the facts are in: a failure
// is logged and noted, and the next pass or import derives again.
func (c *collector) derive(ctx context.Context, l Writer, in mssql.Instance, run *store.CollectorRun) {
	if _, err := l.Derive(ctx); err != nil {
		c.log.Error("derivation or analysis failed", "instance", in.Name, "error", err.Error())
		run.Errors["analysis"] = err.Error()
	}
}

// Writer stores what a pass read: an ingest.Loader, or the push client of
// collect --push.
type Writer interface {
	Records(ctx context.Context, source, name string, fn func(store.Sink) error) (store.ImportSummary, error)
	Derive(ctx context.Context) (ingest.Derived, error)
}

// RunWriter is a Writer that also carries each finished run record (the
// push client: the central server's collector page shows the zone's runs).
type RunWriter interface {
	FinishedRun(ctx context.Context, run store.CollectorRun) error
}

func (c *collector) writer() Writer {
	if c.opt.Writer != nil {
		return c.opt.Writer()
	}
	return ingest.NewLoader(c.db, ingest.LoaderOptions{Analysis: c.opt.Analysis})
}

// status sums a pass up.
func status(f *fetched, run *store.CollectorRun) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	read := f.host != nil || f.hist != nil || f.elog != nil || f.agent != nil || f.backups != nil || f.sampled
	switch {
	case f.fatal != nil && f.fatal.Kind == mssql.KindCanceled:
		return store.RunCanceled
	case f.fatal != nil && f.fatal.Kind == mssql.KindTimeout:
		return store.RunTimeout
	case f.fatal != nil && !read:
		return store.RunFailed
	case f.fatal != nil || len(f.errs) > 0 || run.Errors["warehouse"] != "":
		return store.RunPartial
	}
	return store.RunOK
}

func (c *collector) logRun(in mssql.Instance, run store.CollectorRun) {
	attrs := []any{"instance", in.Name, "status", run.Status,
		"duration_ms", run.Finished.Sub(run.Started).Milliseconds()}
	for _, k := range []string{mssql.SourceHistory, mssql.SourceErrorLog, mssql.SourceAgent, mssql.SourceInflight, "added"} {
		if n, ok := run.Rows[k]; ok {
			attrs = append(attrs, k, n)
		}
	}
	level := slog.LevelInfo
	if run.Status != store.RunOK {
		level = slog.LevelWarn
		for k, v := range run.Errors {
			attrs = append(attrs, "error_"+k, v)
		}
	}
	for i, n := range run.Notes {
		attrs = append(attrs, fmt.Sprintf("note_%d", i+1), n)
	}
	c.log.Log(context.Background(), level, "collected", attrs...)
}
