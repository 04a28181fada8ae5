// Package pgtest gives tests a real PostgreSQL server: a throw-away cluster
// (initdb and pg_ctl in a temporary folder, on a Unix socket only) started
// the first time a test asks for a database and stopped when the package's
// tests end, or an existing server named by RW_PG_URL. Each test gets a new
// empty database, dropped when it ends.
//
// Where no server can be had the tests skip, saying how to enable them;
// with CI=true they fail instead, so CI never passes without PostgreSQL.
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Environment that configures the server.
const (
	// EnvURL names an existing server's URL whose user may create
	// databases (postgres://postgres@localhost/postgres?sslmode=disable):
	// no cluster is started.
	EnvURL = "RW_PG_URL"
	// EnvBin names the folder of initdb, pg_ctl and postgres.
	EnvBin = "RW_PG_BIN"
)

const howTo = "no PostgreSQL server for the PostgreSQL tests: install Debian's postgresql (apt-get install postgresql; " +
	"the tests start their own throw-away cluster with its initdb and pg_ctl, found on PATH, in /usr/lib/postgresql/*/bin or in " +
	EnvBin + "), or set " + EnvURL + " to a server's URL whose user may create databases"

var (
	once    sync.Once
	admin   string // URL of the server's maintenance database
	failure string // why there is no server
	stop    func()
	seq     atomic.Int64
)

// Main runs the package's tests and stops the cluster they started, if any.
func Main(m *testing.M) int {
	code := m.Run()
	for _, name := range kept {
		drop(name)
	}
	if stop != nil {
		stop()
	}
	return code
}

// URL returns the URL of a new, empty database on the test server (its
// password, if any, in the URL), dropped when tb ends. Without a server it
// skips tb, or fails it when CI=true.
func URL(tb testing.TB) string {
	tb.Helper()
	name := create(tb, "")
	tb.Cleanup(func() { drop(name) })
	return withDatabase(admin, name)
}

// Kept returns the URL of a new database kept until Main returns: for what
// a package's tests build once and share. It is empty, or a copy of the
// database at from (CopyOf) when from is not "".
func Kept(tb testing.TB, from string) string {
	tb.Helper()
	var name string
	if from != "" {
		copyMu.Lock()
		name = create(tb, databaseOf(from))
		copyMu.Unlock()
	} else {
		name = create(tb, "")
	}
	keptMu.Lock()
	kept = append(kept, name)
	keptMu.Unlock()
	return withDatabase(admin, name)
}

// CopyOf returns the URL of a new database holding what the database at
// src (a URL this package gave) holds, dropped when tb ends: a copy made
// by the server (CREATE DATABASE … TEMPLATE), far quicker than building
// the data again. Nothing may be connected to src meanwhile (PostgreSQL
// refuses to copy a database in use); copies are made one at a time.
func CopyOf(tb testing.TB, src string) string {
	tb.Helper()
	copyMu.Lock()
	name := create(tb, databaseOf(src))
	copyMu.Unlock()
	tb.Cleanup(func() { drop(name) })
	return withDatabase(admin, name)
}

var (
	keptMu sync.Mutex
	kept   []string // databases Kept, dropped by Main
	copyMu sync.Mutex
)

// create creates a database, empty or copied from template, and returns
// its name.
func create(tb testing.TB, template string) string {
	tb.Helper()
	once.Do(start)
	if admin == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("pgtest: %s", failure)
		}
		tb.Skipf("pgtest: %s", failure)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		tb.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("rwtest_%d_%d", os.Getpid(), seq.Add(1))
	q := "CREATE DATABASE " + name
	if template != "" {
		// FILE_COPY: the files copied whole, not written through the WAL
		// page by page (the default since PostgreSQL 15, slow for a
		// filled database).
		q += " TEMPLATE " + pgx.Identifier{template}.Sanitize() + " STRATEGY FILE_COPY"
	}
	if _, err := conn.Exec(ctx, q); err != nil {
		tb.Fatalf("pgtest: create database: %v", err)
	}
	return name
}

// drop drops a database, closing whatever is still connected to it.
func drop(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if c, err := pgx.Connect(ctx, admin); err == nil {
		_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		c.Close(ctx)
	}
}

// databaseOf returns the database a URL names.
func databaseOf(u string) string {
	_, rest, _ := strings.Cut(u, "://")
	_, path, _ := strings.Cut(rest, "/")
	name, _, _ := strings.Cut(path, "?")
	return name
}

// withDatabase replaces the database of a URL.
func withDatabase(u, name string) string {
	scheme, rest, _ := strings.Cut(u, "://")
	auth, path, _ := strings.Cut(rest, "/")
	_, query, _ := strings.Cut(path, "?")
	out := scheme + "://" + auth + "/" + name
	if query != "" {
		out += "?" + query
	}
	return out
}

func start() {
	if u := os.Getenv(EnvURL); u != "" {
		admin = u
		return
	}
	bin := binDir()
	if bin == "" {
		failure = howTo
		return
	}
	asPG, err := runAs()
	if err != nil {
		failure = err.Error()
		return
	}
	dir, err := os.MkdirTemp("", "rwpg-")
	if err != nil {
		failure = fmt.Sprintf("temporary folder: %v", err)
		return
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		failure = err.Error()
		return
	}
	if asPG != nil {
		if err := asPG.chown(dir, data); err != nil {
			failure = err.Error()
			return
		}
	}
	run := func(args ...string) error {
		var cmd *exec.Cmd
		if asPG != nil {
			cmd = exec.Command("runuser", append([]string{"-u", asPG.name, "--"}, args...)...)
		} else {
			cmd = exec.Command(args[0], args[1:]...)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %v: %s", filepath.Base(args[0]), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	if err := run(filepath.Join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"); err != nil {
		failure = "initdb: " + err.Error()
		os.RemoveAll(dir)
		return
	}
	port := freePort()
	opts := fmt.Sprintf("-c listen_addresses='' -c unix_socket_directories='%s' -c port=%d -c fsync=off "+
		"-c synchronous_commit=off -c full_page_writes=off -c shared_buffers=64MB -c max_connections=200", dir, port)
	if err := run(filepath.Join(bin, "pg_ctl"), "-D", data, "-l", filepath.Join(dir, "server.log"), "-w", "-t", "120", "-o", opts, "start"); err != nil {
		failure = "pg_ctl start: " + err.Error()
		os.RemoveAll(dir)
		return
	}
	stop = func() {
		_ = run(filepath.Join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop")
		os.RemoveAll(dir)
	}
	admin = fmt.Sprintf("postgres://postgres@/postgres?host=%s&port=%d&sslmode=disable", dir, port)
}

// binDir finds the folder of initdb and pg_ctl: RW_PG_BIN, PATH, or the
// newest /usr/lib/postgresql/N/bin.
func binDir() string {
	if d := os.Getenv(EnvBin); d != "" {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
		return "" // a wrong RW_PG_BIN says how to enable the tests, not initdb's error
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), "initdb")); err == nil {
			return filepath.Dir(p)
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		a, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		b, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return a < b
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "pg_ctl")); err == nil {
			return dirs[i]
		}
	}
	return ""
}

// pgUser is the account the cluster runs as when the tests run as root
// (initdb refuses root).
type pgUser struct {
	name     string
	uid, gid int
}

func (u *pgUser) chown(paths ...string) error {
	for _, p := range paths {
		if err := os.Chown(p, u.uid, u.gid); err != nil {
			return fmt.Errorf("chown %s: %w", p, err)
		}
	}
	return nil
}

func runAs() (*pgUser, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("the tests run as root and there is no postgres user to run the cluster as (initdb refuses root): %v; %s", err, howTo)
	}
	if _, err := exec.LookPath("runuser"); err != nil {
		return nil, fmt.Errorf("the tests run as root and runuser is missing: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &pgUser{name: u.Username, uid: uid, gid: gid}, nil
}

// freePort picks a port number for the socket's name (the server listens
// on no TCP port, but the number names its socket).
func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 55000 + os.Getpid()%5000
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
