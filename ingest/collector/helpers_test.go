package collector_test

import (
	"bytes"
	"context"
	"database/sql"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/collector"
	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/ingest/mssql/mssqltest"
	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
	"github.com/restorewatch/restorewatch/store"
)

// The password is chosen to need escaping in a URL and to be easy to find
// in bytes: it must appear nowhere the collector writes.
const (
	testUser   = "restorewatch"
	testPass   = "Pw;with@odd/chars?&%=rw-7F3A9"
	passEnv    = "RW_TEST_PASSWORD"
	wrongPass  = "Wrong;P@ss/9C41?&"
	wrongEnv   = "RW_TEST_WRONG_PASSWORD"
	testOffset = -300 // minutes: UTC-5
)

// base is the scripted servers' wall clock at the start of a test.
var base = time.Date(2026, 3, 2, 6, 0, 0, 0, time.UTC)

// fleet is a warehouse plus scripted instances served over TDS.
type fleet struct {
	t    *testing.T
	db   *store.DB
	path string
	cfg  *mssql.Config
	inst map[string]*mssqltest.Instance
	srv  map[string]*tdstest.Server
	logs *syncBuffer
}

func newFleet(t *testing.T) *fleet {
	t.Helper()
	t.Setenv(passEnv, testPass)
	t.Setenv(wrongEnv, wrongPass)
	path := t.TempDir() + "/warehouse.db"
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	jitter := time.Duration(0)
	return &fleet{t: t, db: db, path: path, inst: map[string]*mssqltest.Instance{}, srv: map[string]*tdstest.Server{},
		logs: &syncBuffer{},
		cfg: &mssql.Config{Collector: mssql.Collector{Interval: time.Hour, Timeout: 5 * time.Second, Concurrency: 4,
			InflightInterval: time.Second, Jitter: &jitter}}}
}

// add scripts an instance and configures the collector for it.
func (f *fleet) add(name, version string) *mssqltest.Instance {
	f.t.Helper()
	in := mssqltest.New(name, version, testOffset)
	in.SetClock(base)
	srv, addr, err := mssqltest.Serve(in, testUser, testPass)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { srv.Close() })
	_, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	f.inst[name], f.srv[name] = in, srv
	f.cfg.Instances = append(f.cfg.Instances, mssql.Instance{Name: name, Host: "127.0.0.1", Port: p, Auth: "sql",
		User: testUser, PasswordEnv: passEnv, Encrypt: "disable", Tags: map[string]string{"env": "test", "rto": "4h"}})
	return in
}

func (f *fleet) logger() *slog.Logger { return slog.New(slog.NewTextHandler(f.logs, nil)) }

// once runs one pass over the fleet.
func (f *fleet) once() {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := collector.Run(ctx, f.db, f.cfg, collector.Options{Once: true, Logger: f.logger()}); err != nil {
		f.t.Fatalf("Run: %v", err)
	}
}

// runs returns the last run of each instance by name.
func (f *fleet) runs() map[string]store.CollectorRun {
	f.t.Helper()
	rs, err := f.db.LatestRuns(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]store.CollectorRun{}
	for _, r := range rs {
		out[r.Instance] = r
	}
	return out
}

func (f *fleet) restores(instance string) []store.Restore {
	f.t.Helper()
	rs, _, err := f.db.ListRestores(context.Background(), store.RestoreFilter{Instance: instance, Sort: "at", Asc: true, Limit: 10000})
	if err != nil {
		f.t.Fatal(err)
	}
	return rs
}

// sqlite opens the warehouse file read-only for checks of raw tables.
func (f *fleet) sqlite() *sql.DB {
	f.t.Helper()
	return openSQLite(f.t, f.path)
}

func openSQLite(t *testing.T, path string) *sql.DB {
	t.Helper()
	d, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func count(t *testing.T, d *sql.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := d.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// syncBuffer is a log sink safe for concurrent passes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
