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

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/static"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/buildref"
	"github.com/restorewatch/restorewatch/web/chart"
)

// ImportFunc imports one uploaded stream; ingest.Import has this shape once
// its *store.DB is bound.
type ImportFunc func(ctx context.Context, kind ingest.Kind, name string, r io.Reader, size int64, opt ingest.Options) (store.ImportSummary, error)

// Config configures a Server. Only DB is required.
type Config struct {
	// DB is the warehouse; *store.DB satisfies Store.
	DB Store
	// Logger receives internal errors and request failures; nil discards.
	Logger *slog.Logger
	// Addr is where Start listens, e.g. "127.0.0.1:8080"; port 0 picks one.
	Addr string
	// Token, when set, is required by every write (POST /import, POST
	// /regressions/{id}/status) as the form field "token" or an
	// "Authorization: Bearer" header. Set it when listening beyond loopback.
	Token string
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
	// Import runs an upload; nil uses ingest.Import when DB is a *store.DB,
	// and the import page says uploads are unavailable otherwise.
	Import ImportFunc
	// MaxUpload caps the bytes of one upload request (512 MiB).
	MaxUpload int64
	// ImportBurst and ImportEvery shape the per-client token bucket of
	// POST /import: ImportBurst requests at once, then one per ImportEvery
	// (10 and 6 s).
	ImportBurst int
	ImportEvery time.Duration
	// Now anchors "this period"; nil is time.Now.
	Now func() time.Time
	// CollectorInterval is the collector's pass interval, which the
	// collector page judges freshness by (a run older than twice it is
	// stale); zero is the collector's default (mssql.DefaultInterval).
	CollectorInterval time.Duration
}

// Server is the dashboard.
type Server struct {
	cfg       Config
	db        Store
	log       *slog.Logger
	e         *echo.Echo
	metrics   *metrics
	cache     *cache
	limiter   *limiter
	issues    []analysis.KnownIssue
	css       []byte // style.css + chart CSS, served as one file
	cssURL    string
	report    []byte // report.css + chart CSS
	reportURL string

	mu   sync.Mutex
	ln   net.Listener
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
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.CollectorInterval <= 0 {
		cfg.CollectorInterval = mssql.DefaultInterval
	}
	if cfg.Analysis.Config == (analysis.Config{}) {
		// A zero Config would skip the bootstrap interval of uploads' findings.
		cfg.Analysis.Config = analysis.DefaultConfig()
	}
	if cfg.Import == nil {
		if db, ok := cfg.DB.(*store.DB); ok {
			cfg.Import = func(ctx context.Context, kind ingest.Kind, name string, r io.Reader, size int64, opt ingest.Options) (store.ImportSummary, error) {
				return ingest.Import(ctx, db, kind, name, r, size, opt)
			}
		}
	}
	s := &Server{cfg: cfg, db: cfg.DB, log: cfg.Logger, cache: newCache(), limiter: newLimiter(cfg.ImportBurst, cfg.ImportEvery)}
	s.issues = cfg.Analysis.KnownIssues
	if s.issues == nil {
		s.issues = analysis.DefaultKnownIssues()
	}
	s.css, s.cssURL = asset("style.css", "/static/app.css")
	s.report, s.reportURL = asset("report.css", "/static/report.css")
	s.metrics = newMetrics(s)
	s.e = s.routes()
	return s
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
	ln, err := lc.Listen(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return store.Errorf(store.EUNAVAILABLE, "cannot listen on %s: %v", s.cfg.Addr, err)
	}
	srv := &http.Server{
		Handler:           s.e,
		ReadHeaderTimeout: 10 * time.Second,
		// No overall read/write timeout: an upload of hundreds of MiB or a
		// slow CSV export must be allowed to finish.
		IdleTimeout: 2 * time.Minute,
		ErrorLog:    slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.mu.Lock()
	s.ln, s.http = ln, srv
	s.mu.Unlock()
	s.log.Info("dashboard listening", "addr", ln.Addr().String())
	go s.warm()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("dashboard stopped", "error", err)
		}
	}()
	return nil
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
	return srv.Shutdown(ctx)
}
