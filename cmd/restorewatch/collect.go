package main

import (
	"context"
	"time"

	"github.com/restorewatch/restorewatch/ingest/collector"
	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
)

// CollectCmd collects from live SQL Server instances (SPEC §3.1).
type CollectCmd struct {
	Config        string `required:"" help:"Collector configuration (TOML)." type:"existingfile"`
	Once          bool   `help:"One pass over every instance, then exit (0 even when some instances failed)."`
	AnalysisFlags `embed:""`
}

// Run implements the command.
func (c *CollectCmd) Run(ctx context.Context, m *Main) error {
	opt, err := c.options()
	if err != nil {
		return err
	}
	db, err := m.openDB(ctx)
	if err != nil {
		return err
	}
	return runCollector(ctx, m, db, c.Config, c.Once, opt)
}

func runCollector(ctx context.Context, m *Main, db *store.DB, path string, once bool, opt analysis.Options) error {
	cfg, err := mssql.LoadConfig(path)
	if err != nil {
		return store.Errorf(store.EINVALID, "%v", err)
	}
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
		m.Logger.Info("retention", "history_rows", st.History, "log_restores", st.LogRestores, "runs", st.Runs, "inflight", st.Inflight)
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
	err = collector.Run(ctx, db, cfg, collector.Options{Once: once, Logger: m.Logger, Analysis: opt})
	if once && err == nil {
		prune()
	}
	return err
}

func days(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }
