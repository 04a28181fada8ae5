package collector_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx", for raw checks on PostgreSQL

	"github.com/restorewatch/restorewatch/ingest/collector"
	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/ingest/mssql/mssqltest"
	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/postgres"
	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// TestMain stops the PostgreSQL tests' cluster, if they started one
// (RW_TEST_ENGINE=postgres).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

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
	db   store.Warehouse
	path string
	cfg  *mssql.Config
	inst map[string]*mssqltest.Instance
	srv  map[string]*tdstest.Server
	logs *syncBuffer
	// ca signs the servers' certificates; caFile is its PEM, the
	// instances' certificate setting.
	ca     *tdstest.CA
	caFile string
}

func newFleet(t *testing.T) *fleet {
	t.Helper()
	t.Setenv(passEnv, testPass)
	t.Setenv(wrongEnv, wrongPass)
	path := storetest.Location(t, "warehouse.db")
	db := storetest.OpenLocation(t, path)
	jitter := time.Duration(0)
	ca, err := tdstest.NewCA("restorewatch test CA")
	if err != nil {
		t.Fatal(err)
	}
	caFile := t.TempDir() + "/ca.pem"
	if err := os.WriteFile(caFile, ca.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return &fleet{t: t, db: db, path: path, inst: map[string]*mssqltest.Instance{}, srv: map[string]*tdstest.Server{},
		logs: &syncBuffer{}, ca: ca, caFile: caFile,
		cfg: &mssql.Config{Collector: mssql.Collector{Interval: time.Hour, Timeout: 5 * time.Second, Concurrency: 4,
			InflightInterval: time.Second, Jitter: &jitter}}}
}

// serving says how add serves an instance and configures its encryption.
type serving struct {
	noTLS   bool     // the server has no certificate and answers ENCRYPT_NOT_SUP
	hosts   []string // the names in its certificate; default 127.0.0.1
	encrypt string   // the instance's encrypt setting; "" is the collector's default
	// wrap, if set, wraps the scripted instance's handler.
	wrap func(tdstest.Handler) tdstest.Handler
	// fedAuth, if set, makes the server take Entra ID logins it verifies.
	fedAuth tdstest.FedAuthVerifier
}

// add scripts an instance, serves it with TLS, and configures the collector
// for it with the default encryption (strict, else TDS 7.x TLS) and the
// fleet's CA as its certificate.
func (f *fleet) add(name, version string) *mssqltest.Instance {
	f.t.Helper()
	return f.addServed(name, version, serving{})
}

func (f *fleet) addServed(name, version string, how serving) *mssqltest.Instance {
	f.t.Helper()
	in := mssqltest.New(name, version, testOffset)
	in.SetClock(base)
	cfg := tdstest.Config{User: testUser, Password: testPass, Handler: in, ServerVersion: version, FedAuth: how.fedAuth}
	if how.wrap != nil {
		cfg.Handler = how.wrap(in)
	}
	if !how.noTLS {
		hosts := how.hosts
		if len(hosts) == 0 {
			hosts = []string{"127.0.0.1"}
		}
		var err error
		if cfg.TLS, err = f.ca.ServerTLS(hosts...); err != nil {
			f.t.Fatal(err)
		}
	}
	srv := tdstest.New(cfg)
	addr, err := srv.Start()
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { srv.Close() })
	_, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	f.inst[name], f.srv[name] = in, srv
	inst := mssql.Instance{Name: name, Host: "127.0.0.1", Port: p, Auth: "sql",
		User: testUser, PasswordEnv: passEnv, Encrypt: how.encrypt, Tags: map[string]string{"env": "test", "rto": "4h"}}
	if how.encrypt != mssql.EncryptDisable {
		inst.Certificate = f.caFile
	}
	f.cfg.Instances = append(f.cfg.Instances, inst)
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

// sqlite opens the warehouse read-only for checks of raw tables: the
// SQLite file, or the PostgreSQL database (its queries in SQL both read
// alike).
func (f *fleet) sqlite() *sql.DB {
	f.t.Helper()
	return openSQLite(f.t, f.path)
}

func openSQLite(t *testing.T, path string) *sql.DB {
	t.Helper()
	driver, dsn := "sqlite", "file:"+path+"?_pragma=query_only(1)"
	if postgres.IsURL(path) {
		driver, dsn = "pgx", path
	}
	d, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// tablesText returns every row of the PostgreSQL warehouse at u as text,
// to search for what it must not hold.
func tablesText(t *testing.T, u string) string {
	t.Helper()
	d := openSQLite(t, u)
	rows, err := d.Query(`SELECT table_name::text FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	var b strings.Builder
	for _, name := range tables {
		var text string
		if err := d.QueryRow(`SELECT COALESCE(string_agg(t::text, E'\n'), '') FROM "` + name + `" AS t`).Scan(&text); err != nil {
			t.Fatal(err)
		}
		b.WriteString(text)
	}
	if b.Len() == 0 {
		t.Fatal("the PostgreSQL warehouse holds nothing to search")
	}
	return b.String()
}

// onPostgres reports whether d is a PostgreSQL warehouse.
func onPostgres(d *sql.DB) bool {
	_, ok := d.Driver().(*stdlib.Driver)
	return ok
}

// rebind numbers a raw check's ? placeholders for PostgreSQL.
func rebind(d *sql.DB, q string) string {
	if !onPostgres(d) {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// utcText is SQL for a stored millisecond time as "2006-01-02 15:04:05".
func utcText(d *sql.DB, column string) string {
	if onPostgres(d) {
		return "to_char(to_timestamp(" + column + " / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')"
	}
	return "datetime(" + column + "/1000, 'unixepoch')"
}

// fact is SQL for position i of a history row's facts (a JSON array kept
// as text).
func fact(d *sql.DB, i int) string {
	if onPostgres(d) {
		return fmt.Sprintf("facts::jsonb ->> %d", i)
	}
	return fmt.Sprintf("facts ->> %d", i)
}

func count(t *testing.T, d *sql.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := d.QueryRow(rebind(d, q), args...).Scan(&n); err != nil {
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

// waitFor polls cond until it holds: the test waits on an event, not on a
// clock of its own. Only the test binary's -timeout bounds the wait; shortly
// before it the test fails naming what it waited for.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline, bounded := t.Deadline()
	for !cond() {
		if bounded && time.Until(deadline) < 10*time.Second {
			t.Fatalf("still waiting for %s when the test binary's -timeout was near", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
