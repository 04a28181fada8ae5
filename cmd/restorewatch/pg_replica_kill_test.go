package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
)

// Two serve replicas on one PostgreSQL database behind a load balancer
// (issue 41, item 3). A collector's first pass lands on replica A, and the
// next request to replica B shows its restores: a replica's pages follow
// the others' writes through the change log. On its second pass replica A
// is killed with SIGKILL in the middle of applying a batch (a trigger holds
// the push's transaction open after its records are written, before the
// batch is marked); the collector sends the batch again, the balancer
// passes it to B, and nothing is lost or doubled: the restores are a direct
// collection's, each pass's run recorded once, and a replica started
// afterwards shows the pages B shows.
func TestKilledReplicaMidPushLosesNothing(t *testing.T) {
	ranInTheDefaultPass(t, "its replicas share a PostgreSQL warehouse whatever the engine")
	if testing.Short() {
		t.Skip("kills a process; skipped with -short")
	}
	u := pgtest.URL(t)
	t.Setenv(pushPassEnv, pushPass)
	dir := t.TempDir()
	base := time.Date(2026, 3, 2, 6, 0, 0, 0, time.UTC)
	ctx := context.Background()

	fleet, ports := tdsFleet(t, dir, base, "SQL-A1", "SQL-A2")
	tdsCAFile := filepath.Join(dir, "tds-ca.pem")
	zone := collectorConfig(t, dir, "zone.toml", tdsCAFile, ports, "SQL-A1", "SQL-A2")
	tokFile := writeFile(t, dir, "zone.token", []byte(createToken(t, u, "zone-a")+"\n"))
	caFile, certFile, keyFile := serverCA(t, dir)

	// Replica A is a real process that names itself to PostgreSQL, whose
	// server drops its transaction within 100 ms of the process's death;
	// replica B runs in this one.
	urlA := withParams(u, "application_name=replica-a&client_connection_check_interval=100")
	a := startServe(t, urlA, "--tls-cert", certFile, "--tls-key", keyFile)
	addrB := serveWarehouse(t, u, "--tls-cert", certFile, "--tls-key", keyFile)
	lb := newFailover(t, a.addr, addrB)
	client := tlsClient(t, caFile)
	collect := func() <-chan string {
		done := make(chan string, 1)
		go func() {
			stderr, code := pushOnce(t, zone, filepath.Join(dir, "local.db"), "https://"+lb.addr(), tokFile, caFile, "2m")
			if code != 0 {
				stderr = fmt.Sprintf("exit %d: %s", code, stderr)
			} else {
				stderr = ""
			}
			done <- stderr
		}()
		return done
	}
	direct := filepath.Join(dir, "direct.db")
	all := collectorConfig(t, dir, "all.toml", tdsCAFile, ports, "SQL-A1", "SQL-A2")
	collectDirect := func() {
		if _, stderr, code := runMain(t, "collect", "--db", direct, "--config", all, "--once"); code != 0 {
			t.Fatalf("direct collect: exit %d: %s", code, stderr)
		}
	}

	// Pass 1, applied by A; B has served its pages before and shows the
	// new restores at once.
	if ids := restoreLinks(t, client, addrB); len(ids) != 0 {
		t.Fatalf("B shows %d restores in an empty warehouse", len(ids))
	}
	if msg := <-collect(); msg != "" {
		t.Fatalf("pass 1: %s", msg)
	}
	collectDirect()
	if got, want := len(restoreLinks(t, client, addrB)), 2*2*4; got != want {
		t.Fatalf("after a push to A, B's /restores shows %d restores, want %d", got, want)
	}

	// Pass 2: A stalls inside the push's transaction and is killed there.
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE FUNCTION rw_test_stall() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF current_setting('application_name') = 'replica-a' THEN PERFORM pg_sleep(60); END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER rw_test_stall BEFORE INSERT ON push_batch FOR EACH ROW EXECUTE FUNCTION rw_test_stall()`); err != nil {
		t.Fatal(err)
	}
	for _, in := range fleet {
		script(in, base.Add(time.Hour), 3)
		in.SetClock(base.Add(6 * time.Hour))
	}
	pass2 := collect()
	waitFor(t, "replica A stalled inside a push", func() bool {
		var n int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE application_name = 'replica-a' AND wait_event = 'PgSleep'`).Scan(&n)
		return err == nil && n > 0
	})
	// What A wrote so far is not seen: the batch is still one transaction.
	var held string
	if err := conn.QueryRow(ctx, `SELECT count(*)::text FROM history_row`).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if want := countRows(t, direct, `SELECT COUNT(*) FROM history_row`); held != want {
		t.Errorf("while A's push is held, the warehouse shows %s history rows, want pass 1's %s", held, want)
	}
	a.kill()
	if msg := <-pass2; msg != "" {
		t.Fatalf("pass 2, A killed mid-push: %s\nreplica A said:\n%s", msg, a.out.String())
	}
	collectDirect()

	// Nothing lost, nothing doubled.
	want, got := restoresJSON(t, direct), restoresJSON(t, u)
	if len(want) != 2*2*(4+3) {
		t.Fatalf("the direct warehouse has %d restores, want %d", len(want), 2*2*7)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the replicas' warehouse differs from a direct collection:\n%s", diffLines(want, got))
	}
	var facts string
	if err := conn.QueryRow(ctx, `SELECT count(*)::text FROM history_row`).Scan(&facts); err != nil {
		t.Fatal(err)
	}
	if want := countRows(t, direct, `SELECT COUNT(*) FROM history_row`); facts != want {
		t.Errorf("the warehouse holds %s history rows (%s before A was killed), a direct collection %s", facts, held, want)
	}
	var runs string
	if err := conn.QueryRow(ctx, `SELECT string_agg(k, ',' ORDER BY k) FROM (SELECT instance || ':' || count(*) || ':' || min(status) AS k
		FROM collector_run GROUP BY instance) r`).Scan(&runs); err != nil {
		t.Fatal(err)
	}
	if runs != "SQL-A1:2:ok,SQL-A2:2:ok" {
		t.Errorf("run records by instance: %s, want each instance's two passes once", runs)
	}

	// A replica started afterwards shows what B shows.
	addrC := serveWarehouse(t, u, "--tls-cert", certFile, "--tls-key", keyFile)
	for _, path := range []string{"/api/restores?limit=1000", "/api/regressions", "/api/instances"} {
		if b, c := getPage(t, client, addrB, path), getPage(t, client, addrC, path); b != c {
			t.Errorf("%s differs between replicas:\nB: %s\nC: %s", path, b, c)
		}
	}
	if b, c := restoreLinks(t, client, addrB), restoreLinks(t, client, addrC); !slices.Equal(b, c) || len(b) != len(want) {
		t.Errorf("/restores lists %d restores on B, %d on a new replica; want %d each", len(b), len(c), len(want))
	}
}

// withParams adds query parameters to a URL.
func withParams(u, params string) string {
	if strings.Contains(u, "?") {
		return u + "&" + params
	}
	return u + "?" + params
}

// served is a `restorewatch serve` process.
type served struct {
	cmd  *exec.Cmd
	addr string
	out  lockedBuffer
	once sync.Once
	done chan struct{}
}

// startServe runs `restorewatch serve --db db ARGS` as a process of its own
// (this test binary, as TestMain allows), killed when the test ends.
func startServe(t *testing.T, db string, args ...string) *served {
	t.Helper()
	s := &served{done: make(chan struct{})}
	s.cmd = exec.Command(os.Args[0], append([]string{"serve", "--db", db, "--addr", "127.0.0.1:0"}, args...)...)
	s.cmd.Env = append(os.Environ(), "RW_AS_MAIN=1")
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stdout = &s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.kill)
	ready := make(chan string, 1)
	listening := regexp.MustCompile(`dashboard on https?://([^/]+)/`)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			fmt.Fprintln(&s.out, sc.Text())
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				ready <- m[1]
			}
		}
		_, _ = io.Copy(&s.out, stderr)
		close(s.done)
	}()
	select {
	case s.addr = <-ready:
	case <-s.done:
		t.Fatalf("serve stopped before listening:\n%s", s.out.String())
	case <-time.After(guard):
		t.Fatalf("serve did not start:\n%s", s.out.String())
	}
	return s
}

// kill sends SIGKILL and waits for the process to go.
func (s *served) kill() {
	s.once.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGKILL)
		_ = s.cmd.Wait()
		<-s.done
	})
}

// failover is a load balancer of TCP connections: each goes to the first
// target that accepts it.
type failover struct {
	ln      net.Listener
	targets []string
	wg      sync.WaitGroup
}

func newFailover(t *testing.T, targets ...string) *failover {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &failover{ln: ln, targets: targets}
	var mu sync.Mutex
	var conns []net.Conn
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			var s net.Conn
			for _, to := range f.targets {
				if s, err = net.DialTimeout("tcp", to, 2*time.Second); err == nil {
					break
				}
			}
			if s == nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, s)
			mu.Unlock()
			f.wg.Add(2)
			go func() { defer f.wg.Done(); io.Copy(s, c); s.Close() }()
			go func() { defer f.wg.Done(); io.Copy(c, s); c.Close() }()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		f.wg.Wait()
	})
	return f
}

func (f *failover) addr() string { return f.ln.Addr().String() }

// tlsClient trusts the CA in caFile.
func tlsClient(t *testing.T, caFile string) *http.Client {
	t.Helper()
	b, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(b)
	return &http.Client{Timeout: guard, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// getPage GETs path from the server at addr and fails the test unless it
// answers 200.
func getPage(t *testing.T, c *http.Client, addr, path string) string {
	t.Helper()
	code, body, err := get(context.Background(), c, "https://"+addr+path)
	if err != nil || code != http.StatusOK {
		t.Fatalf("GET %s from %s: %d, %v\n%s", path, addr, code, err, body)
	}
	return body
}

var restoreLink = regexp.MustCompile(`href="/restores/(\d+)"`)

// restoreLinks lists the restores /restores links to, in its order (its
// first page, which holds every restore of these tests).
func restoreLinks(t *testing.T, c *http.Client, addr string) []string {
	t.Helper()
	var ids []string
	for _, m := range restoreLink.FindAllStringSubmatch(getPage(t, c, addr, "/restores"), -1) {
		if !slices.Contains(ids, m[1]) {
			ids = append(ids, m[1])
		}
	}
	return ids
}

// waitFor polls cond until it holds, failing the test after guard.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", guard, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
