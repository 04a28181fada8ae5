package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web"
)

// ServeCmd serves the dashboard (and, with --config, runs the collector).
type ServeCmd struct {
	Addr          string `help:"Address to listen on." default:"127.0.0.1:8080"`
	Demo          bool   `help:"Fill an empty warehouse with the demo fleet first (never touches one with data)."`
	Config        string `help:"Collector configuration (TOML): collect from live instances while serving." type:"existingfile"`
	AnalysisFlags `embed:""`

	// ready, when set by a test, receives the bound address.
	ready chan<- string
}

// Run implements the command.
func (c *ServeCmd) Run(ctx context.Context, m *Main) error {
	opt, err := c.options()
	if err != nil {
		return err
	}
	db, err := m.openDB(ctx)
	if err != nil {
		return err
	}
	if c.Demo {
		n, err := db.CountAllRestores(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			if _, err := loadDemo(ctx, m, db, &DemoCmd{Instances: 12, Months: 6, Seed: 1}); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(m.Stderr, "serve: %s already has %d restores; --demo leaves it as it is\n", db.Path(), n)
		}
	}
	ref, err := m.reference()
	if err != nil {
		return err
	}
	token, err := writeToken(m, c.Addr)
	if err != nil {
		return err
	}
	wc := web.Config{DB: db, Logger: m.Logger, Addr: c.Addr, Token: token, Reference: ref,
		Namer: ref.Namer(), Version: Version, Analysis: opt}
	if c.Config != "" {
		// The collector page judges freshness by the configured interval.
		cfg, err := mssql.LoadConfig(c.Config)
		if err != nil {
			return store.Errorf(store.EINVALID, "%v", err)
		}
		wc.CollectorInterval = cfg.Collector.Interval
	}
	srv := web.New(wc)
	if err := srv.Start(ctx); err != nil {
		return err
	}
	fmt.Fprintf(m.Stderr, "restorewatch: dashboard on http://%s/ (warehouse %s)\n", srv.Addr(), db.Path())
	if c.ready != nil {
		c.ready <- srv.Addr()
	}
	var collectErr chan error
	if c.Config != "" {
		collectErr = make(chan error, 1)
		go func() { collectErr <- runCollector(ctx, m, db, c.Config, false, opt) }()
	}
	select {
	case <-ctx.Done():
	case err := <-collectErr:
		if err != nil {
			m.Logger.Error("collector stopped", "error", err)
		}
		<-ctx.Done()
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// writeToken returns the token that write endpoints require: RW_TOKEN, or,
// when the server listens beyond loopback without one, a random token printed
// once on stderr. On loopback without RW_TOKEN writes are open.
func writeToken(m *Main, addr string) (string, error) {
	if t := os.Getenv("RW_TOKEN"); t != "" {
		return t, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", usageError{fmt.Errorf("--addr %q: %v", addr, err)}
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return "", nil
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	t := hex.EncodeToString(b)
	fmt.Fprintf(m.Stderr, "restorewatch: listening beyond loopback: imports and acknowledgements need the token %s (set RW_TOKEN to choose it)\n", t)
	return t, nil
}
