package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/restorewatch/restorewatch/ingest/collector"
	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/ingest/push"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/postgres"
)

// CollectCmd collects from live SQL Server instances (SPEC §3.1).
type CollectCmd struct {
	Config        string `required:"" help:"Collector configuration (TOML)." type:"existingfile"`
	Once          bool   `help:"One pass over every instance, then exit (0 even when some instances failed)."`
	AnalysisFlags `embed:""`

	Push          string        `placeholder:"URL" help:"Send what is collected to a central restorewatch serve (https://central:8080) instead of --db, which then keeps only this collector's run records and watermarks."`
	PushTokenFile string        `name:"push-token-file" placeholder:"FILE" help:"File holding this collector's token (restorewatch token create NAME on the central server); else the RW_PUSH_TOKEN environment variable." type:"existingfile"`
	CAFile        string        `name:"ca-file" placeholder:"FILE" help:"PEM certificate(s) of the CA the central server's certificate must chain to (a private CA); default: the system's." type:"existingfile"`
	InsecurePush  bool          `name:"insecure-push" help:"Allow --push to a plain http:// address beyond loopback (the token and the restores cross the network in clear)."`
	Spool         string        `placeholder:"DIR" help:"Where batches wait until the central server acknowledged them (default: --db's file name + .spool)." type:"path"`
	PushWait      time.Duration `name:"push-wait" default:"1m" help:"With --once, how long to keep retrying the central server before leaving what is left in the spool."`

	// pushTune, when set by a test, adjusts the push client's options
	// (shorter back-off).
	pushTune func(*push.Options)
	// keepEvery, when set by a test, replaces keepEvery.
	keepEvery time.Duration
}

// Run implements the command.
func (c *CollectCmd) Run(ctx context.Context, m *Main) error {
	opt, err := c.options()
	if err != nil {
		return err
	}
	if c.Push == "" {
		if c.PushTokenFile != "" || c.CAFile != "" || c.InsecurePush || c.Spool != "" {
			return usageError{errors.New("--push-token-file, --ca-file, --insecure-push and --spool go with --push URL")}
		}
		db, err := m.openDB(ctx)
		if err != nil {
			return err
		}
		if c.Once {
			before, err := db.DataVersion(ctx)
			if err != nil {
				return err
			}
			if err := runCollector(ctx, m, db, c.Config, true, opt); err != nil {
				return err
			}
			keepAfter(ctx, m, db, before)
			return sendOnce(ctx, m, db, c.Config, opt)
		}
		stop, err := startAlerts(ctx, m, db, c.Config, opt)
		if err != nil {
			return err
		}
		defer stop()
		kctx, stopKeeping := context.WithCancel(ctx)
		var keeping sync.WaitGroup
		keeping.Go(func() { keepWhileRunning(kctx, m, db, cmp.Or(c.keepEvery, keepEvery)) })
		defer keeping.Wait()
		defer stopKeeping()
		return runCollector(ctx, m, db, c.Config, false, opt)
	}
	client, err := c.pushClient(m)
	if err != nil {
		return err
	}
	defer client.Close()
	db, err := m.openDB(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stderr, "collect: pushing to %s (batches wait in %s until acknowledged)\n", c.Push, c.spool(m))
	if c.Once {
		err := runCollectorWith(ctx, m, db, c.Config, true, collector.Options{Once: true, Logger: m.Logger,
			Writer: func() collector.Writer { return client }})
		dctx, cancel := context.WithTimeout(ctx, c.PushWait)
		defer cancel()
		left, derr := client.Drain(dctx)
		if err != nil {
			return err
		}
		if left > 0 {
			return store.Errorf(store.EUNAVAILABLE, "%d batches stay in %s: the central server did not take them within --push-wait %s (%v); the next collect sends them first",
				left, c.spool(m), c.PushWait, derr)
		}
		return derr
	}
	sctx, stop := context.WithCancel(ctx)
	sent := make(chan struct{})
	go func() { defer close(sent); client.Run(sctx) }()
	err = runCollectorWith(ctx, m, db, c.Config, false, collector.Options{Logger: m.Logger,
		Writer: func() collector.Writer { return client }})
	stop()
	<-sent
	return err
}

// spool is the spool directory: --spool, else beside the warehouse file
// (restorewatch.spool in the working folder for a PostgreSQL warehouse).
func (c *CollectCmd) spool(m *Main) string {
	if c.Spool != "" {
		return c.Spool
	}
	if postgres.IsURL(m.cli.DB) {
		return "restorewatch.spool"
	}
	return m.cli.DB + ".spool"
}

// pushClient builds the push client from the flags. The token comes from
// a file or the environment, never from a flag, which ps would show.
func (c *CollectCmd) pushClient(m *Main) (*push.Client, error) {
	token := os.Getenv("RW_PUSH_TOKEN")
	if c.PushTokenFile != "" {
		b, err := os.ReadFile(c.PushTokenFile)
		if err != nil {
			return nil, store.Errorf(store.EINVALID, "--push-token-file: %v", errors.Unwrap(err))
		}
		token = strings.TrimSpace(string(b))
		warnReadable(m.Stderr, "--push-token-file", c.PushTokenFile)
	}
	if token == "" {
		return nil, usageError{errors.New("--push needs this collector's token: --push-token-file FILE or RW_PUSH_TOKEN")}
	}
	cfg, err := loadConfig(c.Config)
	if err != nil {
		return nil, store.Errorf(store.EINVALID, "%v", err)
	}
	opt := push.Options{URL: c.Push, Insecure: c.InsecurePush, Token: token, Spool: c.spool(m), CAFile: c.CAFile,
		Logger: m.Logger, Tags: configuredTags(cfg)}
	if c.pushTune != nil {
		c.pushTune(&opt)
	}
	return push.New(opt)
}

// configuredTags returns the tags the configuration gives an instance: its
// own [[instance]]'s, else those of the CMS that lists it.
func configuredTags(cfg *mssql.Config) func(string) map[string]string {
	tags := map[string]map[string]string{}
	for _, in := range cfg.Instances {
		tags[strings.ToLower(in.Name)] = in.Tags
	}
	return func(name string) map[string]string {
		if t, ok := tags[strings.ToLower(name)]; ok {
			return t
		}
		if cfg.CMS != nil {
			return cfg.CMS.Tags
		}
		return nil
	}
}

func runCollector(ctx context.Context, m *Main, db store.Warehouse, path string, once bool, opt analysis.Options) error {
	return runCollectorWith(ctx, m, db, path, once, collector.Options{Once: once, Logger: m.Logger, Analysis: opt})
}

// runCollectorWith runs the collector with copt, and the retention of
// the configuration beside it.
func runCollectorWith(ctx context.Context, m *Main, db store.Warehouse, path string, once bool, copt collector.Options) error {
	cfg, err := loadConfig(path)
	if err != nil {
		return store.Errorf(store.EINVALID, "%v", err)
	}
	warnReadableSecrets(m.Stderr, cfg)
	ret := store.Retention{Restores: days(cfg.Retention.RestoreDays), Runs: days(cfg.Retention.RunDays),
		Inflight: days(cfg.Retention.InflightDays)}
	prune := func() {
		if ret == (store.Retention{}) {
			return
		}
		st, err := db.Prune(ctx, ret, time.Now())
		if err != nil {
			m.Logger.Error("retention", "error", err)
			return
		}
		m.Logger.Info("retention", "history_rows", st.History, "log_restores", st.LogRestores, "rolled_up", st.RolledUp,
			"pinned", st.Pinned, "months", st.Months, "locked", st.Locked, "runs", st.Runs, "inflight", st.Inflight)
	}
	if !once {
		// Retention runs beside the collector, hourly: it is housekeeping and
		// must not lengthen a pass.
		go func() {
			t := time.NewTicker(time.Hour)
			defer t.Stop()
			for {
				prune()
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}()
	}
	err = collector.Run(ctx, db, cfg, copt)
	if once && err == nil {
		prune()
	}
	return err
}

func days(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }
