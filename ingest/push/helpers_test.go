package push_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx", for count on PostgreSQL

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/ingest/errorlog"
	"github.com/restorewatch/restorewatch/ingest/push"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/postgres"
	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
	"github.com/restorewatch/restorewatch/store/storetest"
	"github.com/restorewatch/restorewatch/web"
)

// fixture is a real-looking SQL Server 2022 error log with full, diff and
// log restores (the collector's fixture; see its testdata).
const fixture = "../collector/testdata/errorlog_full_diff_log.log"

// records parses the fixture into memory.
func records(t *testing.T) *store.Collect {
	t.Helper()
	f, err := os.Open(fixture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var c store.Collect
	if _, err := errorlog.Parse(context.Background(), f, errorlog.Options{File: "ERRORLOG"}, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.LogRestores) < 3 || len(c.Hosts) == 0 {
		t.Fatalf("fixture gave %d restores and %d host snapshots", len(c.LogRestores), len(c.Hosts))
	}
	// A pass reads msdb's backup history too: one full, shaped like
	// Microsoft's backupset documentation describes it.
	t0 := time.Date(2026, 11, 1, 22, 0, 0, 0, time.UTC)
	c.BackupSets = []store.BackupSet{{Instance: "SQLPROD01\\PROD", Database: "Sales", UUID: "6C1B0E1E-0000-4A8E-9E1B-0000000000C1",
		Type: "D", Families: 1, FirstLSN: "39000000010000001", LastLSN: "39000000010500001", CheckpointLSN: "39000000010000101",
		Start: t0, Finish: t0.Add(20 * time.Minute), Size: 40 << 30, SoftwareBuild: "16.0.4135",
		Media: []store.BackupMedia{{Family: 1, DeviceType: 2, Device: `D:\Backup\Sales.bak`}}}}
	return &c
}

func feed(c *store.Collect) func(store.Sink) error {
	return func(s store.Sink) error {
		for _, h := range c.Hosts {
			if err := s.Host(h); err != nil {
				return err
			}
		}
		for _, l := range c.LogRestores {
			if err := s.LogRestore(l); err != nil {
				return err
			}
		}
		for _, b := range c.BackupSets {
			if err := s.BackupSet(b); err != nil {
				return err
			}
		}
		return nil
	}
}

// warehouse is the central warehouse on the engine RW_TEST_ENGINE names:
// what the receiver writes and the dashboard serves.
type warehouse interface {
	store.Warehouse
	web.Store
}

// TestMain stops the PostgreSQL tests' cluster, if they started one.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openDB opens a new central warehouse on the test engine and returns it
// with its location (a file or a URL), for count.
func openDB(t *testing.T) (warehouse, string) {
	t.Helper()
	path := storetest.Location(t, "central.db")
	return storetest.OpenLocation(t, path).(warehouse), path
}

// spooledOne returns the only batch in cl's spool.
func spooledOne(t *testing.T, cl *push.Client) string {
	t.Helper()
	p, err := cl.Spooled()
	if err != nil || len(p) != 1 {
		t.Fatalf("spool holds %v, %v; want one batch", p, err)
	}
	return p[0]
}

func spooled(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.rwpush"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sink adapts the receiver to web.PushSink, as cmd does.
type sink struct{ *push.Receiver }

func (s sink) Push(ctx context.Context, collector string, r io.Reader) (web.PushResult, error) {
	res, err := s.Receiver.Push(ctx, collector, r)
	return web.PushResult(res), err
}

// central serves a real web.Server with the receiver over TLS. reads
// counts the calls the server made to read request bodies.
func central(t *testing.T, db warehouse) (ts *httptest.Server, reads *atomic.Int64) {
	t.Helper()
	srv := web.New(web.Config{DB: db, Push: sink{push.NewReceiver(db, ingest.LoaderOptions{}, nil)}})
	reads = new(atomic.Int64)
	ts = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = bodySpy{r.Body, reads}
		srv.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, reads
}

// bodySpy counts the reads of a request body.
type bodySpy struct {
	io.ReadCloser
	reads *atomic.Int64
}

func (b bodySpy) Read(p []byte) (int, error) {
	b.reads.Add(1)
	return b.ReadCloser.Read(p)
}

// caFile writes the test server's certificate (made at test time) as the
// client's CA file.
func caFile(t *testing.T, ts *httptest.Server) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func count(t *testing.T, path, q string) int {
	t.Helper()
	driver, dsn := "sqlite", "file:"+path+"?_pragma=query_only(1)"
	if postgres.IsURL(path) {
		driver, dsn = "pgx", path
	}
	d, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var n int
	if err := d.QueryRow(q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// post sends a batch file as the client does and decodes the answer.
func post(t *testing.T, ts *httptest.Server, tok string, body []byte) push.Result {
	t.Helper()
	code, res := postStatus(t, ts, tok, bytes.NewReader(body), int64(len(body)))
	if code != http.StatusOK {
		t.Fatalf("push: %d", code)
	}
	return res
}

func postStatus(t *testing.T, ts *httptest.Server, tok string, body io.Reader, n int64) (int, push.Result) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, ts.URL+push.Path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = n
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var res push.Result
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, res
}

// guard bounds a wait for an event the code must produce; reaching it is a
// failure.
const guard = 20 * time.Second
