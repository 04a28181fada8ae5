// Package web serves the restorewatch dashboard: server-rendered pages
// (templ components in web/view, SVG charts from web/chart), a JSON API, a
// health check and Prometheus metrics, on echo.
//
// Handlers are thin: parse the request, make one call through the Store
// interface this package declares (or one model builder that does a few),
// render a view model. One HTTPErrorHandler turns store error codes into
// statuses and pages.
package web

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/restorewatch/restorewatch/static"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/buildref"
	"github.com/restorewatch/restorewatch/web/chart"
)

// Importer runs an upload through the import pipeline (store the records,
// derive the touched instances, analyse them). web declares it and cmd wires
// ingest's loader to it, so the dashboard depends on no importer.
type Importer interface {
	// Import imports one uploaded stream named name. An empty kind means
	// "tell it from the content"; the result says what was decided. An
	// unknown kind is an EINVALID error before anything is read.
	Import(ctx context.Context, u Upload) (Imported, error)
}

// Upload is one uploaded file and the form's fields that apply to it.
type Upload struct {
	Kind     string // errorlog, history, messages, backups…; empty: detect
	Name     string // the file's base name, for rejects
	R        io.Reader
	Instance string // names the instance where the file does not
	Database string // captured output that names no database
}

// Imported is what an upload did.
type Imported struct {
	Kind string // the kind given or detected
	store.ImportSummary
}

// Config configures a Server. Only DB is required.
type Config struct {
	// DB is the warehouse; *sqlite.DB satisfies Store.
	DB Store
	// Logger receives internal errors and request failures; nil discards.
	Logger *slog.Logger
	// Addr is where Start listens, e.g. "127.0.0.1:8080"; port 0 picks one.
	Addr string
	// Token, when set, is required by every write (POST /import, POST
	// /regressions/{id}/status) as the form field "token" or an
	// Authorization header (Bearer TOKEN, or Basic with the token as
	// password); never in a query string. Set it when listening beyond
	// loopback.
	Token string
	// ProtectReads, with Token set, makes every page, API call and
	// /metrics need the token too (a browser signs in with HTTP Basic);
	// only /healthz and the static assets stay open. Set it when listening
	// beyond loopback: pages show service accounts, file paths and trace
	// flags.
	ProtectReads bool
	// AllowedHosts are the names, besides the address a connection arrives
	// on and "localhost", that requests may carry in their Host header (the
	// name users type, or a reverse proxy's); any other Host is refused
	// with 421 (DNS rebinding). The host of Addr counts when it is a name.
	AllowedHosts []string
	// TrustedProxies are the addresses of reverse proxies whose
	// X-Forwarded-For names the client: behind one, rate limits and the
	// per-address connection share apply to the client, not to the proxy
	// (whose own connections are then not held to a share). Empty: the
	// client is the connection's peer and the header is ignored.
	TrustedProxies []*net.IPNet
	// TLS, when set, makes Start serve HTTPS with it.
	TLS *tls.Config
	// MaxConns caps the connections open at once (Accept waits beyond it);
	// zero derives it from the descriptor limit (the limit less 128, at
	// most 4,096). MaxConnsPerAddr caps those of one client address (zero:
	// a quarter of MaxConns, at least 8). Beyond either, a few reserved
	// connections answer /healthz only.
	MaxConns        int
	MaxConnsPerAddr int
	// ReadHeaderTimeout (10 s) bounds reading a request's headers,
	// ReadTimeout (30 s) its headers and body, except the files of an
	// authenticated upload, which must instead deliver 64 KiB within each
	// UploadIdle (30 s) of waiting. IdleTimeout (60 s) closes an idle
	// keep-alive connection.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	UploadIdle        time.Duration
	IdleTimeout       time.Duration
	// Namer names a build ("2016 SP1 CU8"); nil names with Reference.
	Namer func(version string) string
	// Reference is the build list Namer defaults to; nil is buildref.Default().
	Reference *buildref.Reference
	// Version is shown in the footer and reports.
	Version string
	// Analysis configures the analysis run after an upload and supplies the
	// known-issue catalogue the pages cite (nil: the shipped catalogue).
	Analysis analysis.Options
	// DefaultRTO is the RTO target of instances without an "rto" tag (4 h).
	DefaultRTO time.Duration
	// Importer runs uploads; without one the import page says uploads are
	// not available here.
	Importer Importer
	// MaxUpload caps the bytes of one upload request (512 MiB).
	MaxUpload int64
	// ImportBurst and ImportEvery shape the per-client token bucket of
	// POST /import: ImportBurst requests at once, then one per ImportEvery
	// (10 and 6 s).
	ImportBurst int
	ImportEvery time.Duration
	// PlanBurst and PlanEvery shape the per-client bucket of restore plans
	// made rather than served from the cache (30 and 250 ms: a plan costs
	// ~85 ms of CPU).
	PlanBurst int
	PlanEvery time.Duration
	// Now anchors "this period"; nil is time.Now.
	Now func() time.Time
	// CollectorInterval is the collector's pass interval, which the
	// collector page judges freshness by (a run older than twice it is
	// stale); zero is the collector's default (mssql.DefaultInterval).
	CollectorInterval time.Duration
	// Push, when set, applies the batches collectors push to POST
	// /api/push (collect --push); nil refuses them.
	Push PushSink
}

// Server is the dashboard.
type Server struct {
	cfg       Config
	db        Store
	log       *slog.Logger
	e         *echo.Echo
	metrics   *metrics
	cache     *cache
	imports   *limiter // POST /import per client
	writes    *limiter // status changes per client
	fails     *limiter // wrong dashboard tokens per client
	pushFails *limiter // wrong collector tokens per client, apart: a dashboard guesser does not stop a collector
	plans     *limiter // plans made (not served from the cache) per client: each costs ~85 ms of CPU
	health    health
	hosts     map[string]struct{}
	origin    *http.CrossOriginProtection
	issues    []analysis.KnownIssue
	runs      runsCache // the overview's collector status
	keep      keeping   // what the server keeps for its next start (keep.go)
	// oneShot: made for one report (the CLI's), not to serve: a plan it
	// makes reads the warehouse as the CLI's plan does, without building
	// the dashboard's orders of every restore first.
	oneShot   bool
	css       []byte // style.css + chart CSS, served as one file
	cssURL    string
	report    []byte // report.css + chart CSS
	reportURL string
	copyJS    []byte // the plan page's copy button
	copyURL   string

	mu   sync.Mutex
	ln   *limitListener
	http *http.Server
}

// New builds a Server from cfg, filling defaults.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Reference == nil {
		cfg.Reference = buildref.Default()
	}
	if cfg.Namer == nil {
		cfg.Namer = cfg.Reference.Namer()
	}
	cfg.Namer = memoize(cfg.Namer)
	if cfg.DefaultRTO <= 0 {
		cfg.DefaultRTO = 4 * time.Hour
	}
	if cfg.MaxUpload <= 0 {
		cfg.MaxUpload = 512 << 20
	}
	if cfg.ImportBurst <= 0 {
		cfg.ImportBurst = 10
	}
	if cfg.ImportEvery <= 0 {
		cfg.ImportEvery = 6 * time.Second
	}
	if cfg.PlanBurst <= 0 {
		cfg.PlanBurst = 30
	}
	if cfg.PlanEvery <= 0 {
		cfg.PlanEvery = 250 * time.Millisecond
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = defaultMaxConns()
	}
	if cfg.MaxConnsPerAddr <= 0 {
		cfg.MaxConnsPerAddr = defaultPerAddr(cfg.MaxConns)
	}
	cfg.ReadHeaderTimeout = orDefault(cfg.ReadHeaderTimeout, defaultReadHeaderTimeout)
	cfg.ReadTimeout = orDefault(cfg.ReadTimeout, defaultReadTimeout)
	cfg.UploadIdle = orDefault(cfg.UploadIdle, defaultUploadIdle)
	cfg.IdleTimeout = orDefault(cfg.IdleTimeout, defaultIdleTimeout)
	if cfg.CollectorInterval <= 0 {
		cfg.CollectorInterval = store.DefaultCollectorInterval
	}
	if cfg.Analysis.Config == (analysis.Config{}) {
		// A zero Config would skip the bootstrap interval of uploads' findings.
		cfg.Analysis.Config = analysis.DefaultConfig()
	}
	s := &Server{cfg: cfg, db: cfg.DB, log: cfg.Logger, cache: newCache(),
		imports: newLimiter(cfg.ImportBurst, cfg.ImportEvery), writes: newLimiter(30, 2*time.Second),
		fails: newLimiter(10, 6*time.Second), pushFails: newLimiter(10, 6*time.Second),
		plans: newLimiter(cfg.PlanBurst, cfg.PlanEvery), hosts: hostNames(cfg), origin: http.NewCrossOriginProtection()}
	s.issues = cfg.Analysis.KnownIssues
	if s.issues == nil {
		s.issues = analysis.DefaultKnownIssues()
	}
	s.css, s.cssURL = asset("style.css", "/static/app.css")
	s.report, s.reportURL = asset("report.css", "/static/report.css")
	s.copyJS, s.copyURL = scriptAsset("copy.js", "/static/copy.js")
	s.metrics = newMetrics(s)
	s.e = s.routes()
	return s
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// asset joins an embedded stylesheet with the chart CSS and names it by its
// content hash, so browsers may cache it for ever.
func asset(name, path string) ([]byte, string) {
	b, err := static.FS.ReadFile(name)
	if err != nil {
		panic(fmt.Sprintf("web: embedded %s missing: %v", name, err)) // a build defect
	}
	b = append(b, chart.DefaultCSS...)
	sum := sha256.Sum256(b)
	return b, path + "?v=" + hex.EncodeToString(sum[:6])
}

// memoize remembers names: a page of restores names the same few builds
// hundreds of times, and a fleet has only so many builds.
func memoize(name func(string) string) func(string) string {
	var m sync.Map
	return func(v string) string {
		if n, ok := m.Load(v); ok {
			return n.(string)
		}
		n := name(v)
		m.Store(v, n)
		return n
	}
}

// Handler returns the dashboard as an http.Handler (for tests and for
// embedding in another server).
func (s *Server) Handler() http.Handler { return s.e }

// Start listens on Config.Addr and serves in the background; it returns
// once the listener is bound, or the error that prevented it.
func (s *Server) Start(ctx context.Context) error {
	var lc net.ListenConfig
	raw, err := lc.Listen(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return store.Errorf(store.EUNAVAILABLE, "cannot listen on %s: %v", s.cfg.Addr, err)
	}
	ln := newLimitListener(raw, s.cfg.MaxConns, s.cfg.MaxConnsPerAddr)
	ln.exempt = s.cfg.TrustedProxies
	var serveLn net.Listener = ln
	if s.cfg.TLS != nil {
		tc := s.cfg.TLS.Clone()
		tc.MinVersion = max(tc.MinVersion, tls.VersionTLS12)
		if len(tc.NextProtos) == 0 {
			tc.NextProtos = []string{"http/1.1"}
		}
		serveLn = tls.NewListener(ln, tc)
	}
	srv := &http.Server{
		Handler: s.e,
		// Every request's headers and body must arrive within these; an
		// authenticated upload's files extend the deadline as they arrive
		// (uploadBody). No write timeout: a slow CSV export must finish.
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		// reservedConn tells a reserved slot's requests by their connection.
		ConnContext: func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) },
	}
	s.mu.Lock()
	s.ln, s.http = ln, srv
	s.mu.Unlock()
	s.log.Info("dashboard listening", "addr", ln.Addr().String(), "tls", s.cfg.TLS != nil, "max_conns", s.cfg.MaxConns)
	// What the previous run kept, before the first request can ask for it.
	kctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	s.loadKept(kctx)
	cancel()
	go s.warm()
	go func() {
		if err := srv.Serve(serveLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("dashboard stopped", "error", err)
		}
	}()
	return nil
}

// OpenConns is the number of connections open now (0 before Start).
func (s *Server) OpenConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return 0
	}
	return int(s.ln.open.Load())
}

// Addr returns the address Start bound (useful with port 0), or "".
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Shutdown stops accepting requests and waits for those in flight until
// ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	srv := s.http
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	// A save of what the next start reads that is cut short leaves the
	// previous one in place; one that finishes spares the next start a read
	// of every restore.
	return errors.Join(srv.Shutdown(ctx), s.waitKept(ctx))
}
