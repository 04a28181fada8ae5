package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/restorewatch/restorewatch/ingest/demo"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web"
)

// ServeCmd serves the dashboard (and, with --config, runs the collector).
type ServeCmd struct {
	Addr            string   `help:"Address to listen on." default:"127.0.0.1:8080"`
	Demo            bool     `help:"Fill an empty warehouse with the demo fleet first (never touches one with data)."`
	Config          string   `help:"Collector configuration (TOML): collect from live instances while serving." type:"existingfile"`
	Alerts          string   `placeholder:"FILE" help:"Alert channels and routes (TOML with an [alerts] table) to send while serving; default: --config's [alerts]." type:"existingfile"`
	AllowedHost     []string `name:"allowed-host" placeholder:"NAME" help:"A name the dashboard answers to besides its address and localhost (repeatable): the name users type or a reverse proxy sends as Host. Other names are refused (DNS rebinding)."`
	PublicRead      bool     `help:"Beyond loopback, let pages, the API and /metrics be read without the token (writes still need it)."`
	TLSCert         string   `name:"tls-cert" placeholder:"FILE" help:"Serve HTTPS with this PEM certificate (chain); needs --tls-key." type:"existingfile"`
	TLSKey          string   `name:"tls-key" placeholder:"FILE" help:"The PEM private key of --tls-cert." type:"existingfile"`
	MaxConns        int      `help:"Connections open at once (0: the descriptor limit less 128, at most 4096)." default:"0"`
	MaxConnsPerAddr int      `name:"max-conns-per-addr" help:"Connections one client address may hold (0: a quarter of --max-conns, at least 8)." default:"0"`
	TrustedProxy    []string `name:"trusted-proxy" placeholder:"CIDR" help:"A reverse proxy's address or network (repeatable): requests from it are counted against the client its X-Forwarded-For names (rate limits, connection share)."`
	AnalysisFlags   `embed:""`

	// ready, when set by a test, receives the bound address; tune, when
	// set, adjusts the server's configuration (tests shorten timeouts).
	ready chan<- string
	tune  func(*web.Config)
	// keepEvery, when set by a test, replaces keepEvery.
	keepEvery time.Duration
}

// Run implements the command.
func (c *ServeCmd) Run(ctx context.Context, m *Main) error {
	opt, err := c.options()
	if err != nil {
		return err
	}
	tlsCfg, err := c.tlsConfig()
	if err != nil {
		return err
	}
	if c.TLSKey != "" {
		warnReadable(m.Stderr, "--tls-key", c.TLSKey)
	}
	proxies, err := parseCIDRs(c.TrustedProxy)
	if err != nil {
		return usageError{err}
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
			if _, err := loadDemo(ctx, m, db, &DemoCmd{Instances: 12, Months: 6, Seed: 1}, opt); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(m.Stderr, "serve: %s already has %d restores; --demo leaves it as it is\n", where(db), n)
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
	beyond := !loopback(c.Addr)
	wc := web.Config{DB: db, Logger: m.Logger, Addr: c.Addr, Token: token, Reference: ref,
		Namer: ref.Namer(), Version: Version, Analysis: opt, AllowedHosts: c.AllowedHost, TLS: tlsCfg,
		ProtectReads: beyond && !c.PublicRead, MaxConns: c.MaxConns, MaxConnsPerAddr: c.MaxConnsPerAddr, TrustedProxies: proxies}
	wc.Importer = uploads{db: db, opt: opt}  // the import page's uploads
	wc.Push = newPushSink(db, opt, m.Logger) // collectors of other zones (collect --push)
	if beyond && tlsCfg == nil {
		fmt.Fprintf(m.Stderr, "restorewatch: warning: serving plain HTTP beyond loopback: the token crosses the network in clear; give --tls-cert and --tls-key (or put a TLS proxy in front)\n")
	}
	if c.tune != nil {
		c.tune(&wc)
	}
	if c.Config != "" {
		// The collector page judges freshness by the configured interval.
		cfg, err := loadConfig(c.Config)
		if err != nil {
			return store.Errorf(store.EINVALID, "%v", err)
		}
		wc.CollectorInterval = cfg.Collector.Interval
	}
	srv := web.New(wc)
	if err := srv.Start(ctx); err != nil {
		return err
	}
	scheme := "http"
	if tlsCfg != nil {
		scheme = "https"
	}
	fmt.Fprintf(m.Stderr, "restorewatch: dashboard on %s://%s/ (warehouse %s)\n", scheme, srv.Addr(), where(db))
	// Pushes, uploads and the collector change the data while it serves:
	// what a next start reads is kept current beside it.
	kctx, stopKeeping := context.WithCancel(ctx)
	var keeping sync.WaitGroup
	keeping.Go(func() { keepWhileRunning(kctx, m, servedOrders{db, srv.Orders}, cmp.Or(c.keepEvery, keepEvery)) })
	defer keeping.Wait()
	defer stopKeeping()
	if c.ready != nil {
		c.ready <- srv.Addr()
	}
	if c.Demo {
		// The demo's restore in flight keeps being sampled, as a
		// collector would, so /live does not turn stale while it serves.
		go func() {
			if err := demo.KeepLive(ctx, db); err != nil && ctx.Err() == nil {
				m.Logger.Error("demo live sampling stopped", "error", err)
			}
		}()
	}
	alertsPath := c.Alerts
	if alertsPath == "" {
		alertsPath = c.Config
	}
	if alertsPath != "" {
		stop, err := startAlerts(ctx, m, db, alertsPath, opt)
		if err != nil {
			return err
		}
		defer stop()
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
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", usageError{fmt.Errorf("--addr %q: %v", addr, err)}
	}
	if loopback(addr) {
		return "", nil
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	t := hex.EncodeToString(b)
	fmt.Fprintf(m.Stderr, "restorewatch: listening beyond loopback: pages, imports and acknowledgements need the token %s (set RW_TOKEN to choose it)\n", t)
	return t, nil
}

// loopback says whether addr listens on loopback only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// tlsConfig loads --tls-cert and --tls-key (both or neither).
func (c *ServeCmd) tlsConfig() (*tls.Config, error) {
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return nil, usageError{fmt.Errorf("--tls-cert and --tls-key go together")}
	}
	if c.TLSCert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
	if err != nil {
		return nil, store.Errorf(store.EINVALID, "--tls-cert %s, --tls-key %s: %v", c.TLSCert, c.TLSKey, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// parseCIDRs reads --trusted-proxy values: a network (10.0.0.0/8) or one
// address (a /32 or /128).
func parseCIDRs(in []string) ([]*net.IPNet, error) {
	var out []*net.IPNet
	for _, v := range in {
		if ip := net.ParseIP(v); ip != nil {
			bits := 8 * len(ip.To16())
			if ip.To4() != nil {
				ip, bits = ip.To4(), 32
			}
			out = append(out, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
			continue
		}
		_, n, err := net.ParseCIDR(v)
		if err != nil {
			return nil, fmt.Errorf("--trusted-proxy %q: want an address or a network such as 10.0.0.0/8", v)
		}
		out = append(out, n)
	}
	return out, nil
}
