package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/ingest/demo"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
	"github.com/restorewatch/restorewatch/store/sqlite"
	"github.com/restorewatch/restorewatch/store/storetest"
	"github.com/restorewatch/restorewatch/web"
)

// The SQLite warehouse is the Store the program serves.
var _ web.Store = (*sqlite.DB)(nil)

// Names a hostile (or just unusual) server could report. They must be
// escaped everywhere and survive a round trip through links.
const (
	hostileInstance = `<script>alert(1)</script>`
	hostileDB       = `O'Brien "&"`
	slashDB         = `a/b\c ..`
	dotDB           = `..`
	formulaDB       = `=cmd|' /C calc'!A0`
	slashInstance   = `SQL\PROD/EU`
)

// The demo warehouse is built once and shared by the read-only tests.
var (
	demoOnce sync.Once
	demoDir  string // the demo fleet's files and, on SQLite, the warehouse
	demoErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rw-web-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	demoDir = dir
	code := pgtest.Main(m) // stops the PostgreSQL tests' cluster, if they started one
	os.RemoveAll(dir)
	os.Exit(code)
}

// demoDB returns the shared demo warehouse: the demo fleet imported through
// the real importers, plus instances and databases with hostile names.
func demoDB(t testing.TB) warehouse {
	t.Helper()
	if storetest.OnPostgres() {
		return openPostgres(t, demoOnPostgres(t))
	}
	demoOnce.Do(func() { demoErr = buildDemo(demoDir, demoPath()) })
	if demoErr != nil {
		t.Fatal(demoErr)
	}
	db, err := sqlite.Open(context.Background(), demoPath())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func demoPath() string { return filepath.Join(demoDir, "demo.db") }

func buildDemo(dir, path string) error {
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		return err
	}
	defer db.Close()
	return fillDemo(dir, db)
}

// fillDemo imports the demo fleet, the hostile names and the analysis into
// db.
func fillDemo(dir string, db store.Warehouse) error {
	ctx := context.Background()
	fleet, err := demo.Generate(demo.Config{Seed: 1, Dir: filepath.Join(dir, "fleet")})
	if err != nil {
		return err
	}
	if _, err := demo.Import(ctx, db, fleet, nil); err != nil {
		return err
	}
	if err := importHostile(ctx, db); err != nil {
		return err
	}
	_, err = analysis.Run(ctx, db, nil, analysis.Options{Config: analysis.DefaultConfig(), Now: demo.DefaultNow})
	return err
}

// importHostile adds two instances whose names and databases test
// escaping, each with a measured series of full restores.
func importHostile(ctx context.Context, db store.Warehouse) error {
	im, err := db.NewImport(ctx, "test", "hostile.txt")
	if err != nil {
		return err
	}
	i64 := func(v int64) *int64 { return &v }
	off := 0
	start := demo.DefaultNow.AddDate(0, -2, 0)
	for _, inst := range []string{hostileInstance, slashInstance} {
		if err := im.Host(store.HostSnapshot{Instance: inst, ObservedAt: start.AddDate(0, 0, -1), UTCOffset: &off,
			Version: "13.0.4474.0", Cores: i64(8), Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: 1}}); err != nil {
			return err
		}
		for d, name := range []string{hostileDB, slashDB, dotDB, formulaDB} {
			for i := 0; i < 8; i++ {
				at := start.Add(time.Duration(i*24+d) * time.Hour)
				lsn := int64(1000000 + d*100 + i)
				secs := 100.0 + float64(i%3)
				h := store.HistoryRow{Instance: inst, RestoreHistoryID: lsn, RestoreDate: at, Database: name, RestoreType: "D",
					SourceServer: "=HYPERLINK(\"http://x\")", BackupType: "D", FirstLSN: itoa(lsn * 10), LastLSN: itoa(lsn*10 + 5),
					BackupSize: i64(10 << 30), Devices: []string{`\\nas\<b>\` + name + `.bak`},
					DestinationFiles: []string{`D:\<img src=x onerror=alert(1)>\` + name + `.mdf`, `L:\Log\` + name + `_log.ldf`},
					Origin:           store.Origin{Source: "history", File: "hostile.csv", Line: i + 2}}
				l := store.LogRestore{Instance: inst, Database: name, Kind: store.KindFull, MessageID: 18267,
					CompletedAt: at.Add(time.Duration(secs) * time.Second), UTCOffset: &off, FirstLSN: h.FirstLSN, LastLSN: h.LastLSN,
					Has3014: true, Statement: "RESTORE DATABASE", Pages: (10 << 30) / 8192, Seconds: secs, MBps: 100,
					Buffer: &store.BufferConfig{BufferCount: 7, MaxTransferKiB: 1024, IOAlignment: 4096},
					Phases: []store.Phase{{At: at, Text: "<b>phase</b> 1"}},
					Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: 100 + i}}
				if err := im.History(h); err != nil {
					return err
				}
				if err := im.LogRestore(l); err != nil {
					return err
				}
			}
		}
	}
	if _, err := im.CommitAndReconcile(); err != nil {
		return err
	}
	// A collector run of the hostile instance, failed with text a server
	// chose, so the collector pages render hostile values too.
	started := demo.DefaultNow.Add(-time.Hour)
	id, err := db.StartRun(ctx, hostileInstance, started)
	if err != nil {
		return err
	}
	finished := started.Add(time.Minute)
	return db.FinishRun(ctx, store.CollectorRun{ID: id, Instance: hostileInstance, Started: started, Finished: &finished,
		Status: store.RunFailed, Errors: map[string]string{"login": `<img src=x onerror=alert(2)> "quoted" & 'single'`},
		Notes: []string{"<b>note</b>"}})
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// copyDemo gives a test that writes its own copy of the demo warehouse.
func copyDemo(t testing.TB) warehouse {
	t.Helper()
	if storetest.OnPostgres() {
		demoOnPostgres(t)
		return openPostgres(t, pgtest.CopyOf(t, pgDemo))
	}
	src := demoDB(t)
	path := filepath.Join(t.TempDir(), "copy.db")
	if err := src.Backup(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// serve starts the dashboard on an httptest server.
func serve(t testing.TB, cfg web.Config) (*web.Server, *httptest.Server) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return demo.DefaultNow }
	}
	cfg.Version = "test"
	if db, ok := cfg.DB.(store.Warehouse); ok && cfg.Importer == nil {
		cfg.Importer = uploads{db}
	}
	s := web.New(cfg)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts
}

// uploads wires the one import pipeline to the dashboard, as serve does.
type uploads struct{ db store.Warehouse }

func (u uploads) Import(ctx context.Context, up web.Upload) (web.Imported, error) {
	sum, err := ingest.Import(ctx, u.db, ingest.FileKind(up.Kind), up.Name, up.R, -1,
		ingest.Options{Instance: up.Instance, Database: up.Database})
	return web.Imported{Kind: sum.Source, ImportSummary: sum}, err
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// client is an HTTP client with a cookie jar that does not follow
// redirects, so tests see the 303 of a form post.
func client(t testing.TB) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// get fetches a URL and returns the status and body.
func get(t testing.TB, c *http.Client, u string) (int, string, http.Header) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

// csrf returns the CSRF token the server gave this client's cookie jar.
func csrf(t testing.TB, c *http.Client, base string) string {
	t.Helper()
	get(t, c, base+"/import")
	u, _ := url.Parse(base)
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == "rw_csrf" {
			return ck.Value
		}
	}
	t.Fatal("no CSRF cookie set")
	return ""
}

func webConfig(db warehouse) web.Config { return web.Config{DB: db} }

// historyCSV is an upload of the export query's CSV whose line 3 has an
// impossible date, so the summary must name upload-history.csv:3.
const historyCSV = `instance,restore_history_id,restore_date,destination_database_name,user_name,restore_type,replace,recovery,stop_at,device_count,backup_set_uuid,family_guid,source_server_name,source_machine_name,source_database_name,backup_type,backup_start_date,backup_finish_date,first_lsn,last_lsn,backup_size,compressed_backup_size,software_major_version,software_minor_version,software_build_version,is_copy_only,has_backup_checksums,key_algorithm,media_family_count,device_type,physical_device_names
UPLOAD01,1,2024-05-01 10:00:00,Uploaded,sa,D,0,1,NULL,1,NULL,NULL,SRC01,NULL,Uploaded,D,NULL,NULL,NULL,NULL,1048576,NULL,15,0,2000,0,0,NULL,1,2,D:\b\x.bak
UPLOAD01,2,2024-13-45 10:00:00,Uploaded,sa,D,0,1,NULL,1,NULL,NULL,SRC01,NULL,Uploaded,D,NULL,NULL,NULL,NULL,1048576,NULL,15,0,2000,0,0,NULL,1,2,D:\b\x.bak
UPLOAD01,3,2024-05-02 10:00:00,Uploaded,sa,D,0,1,NULL,1,NULL,NULL,SRC01,NULL,Uploaded,D,NULL,NULL,NULL,NULL,1048576,NULL,15,0,2000,0,0,NULL,1,2,D:\b\x.bak
`
