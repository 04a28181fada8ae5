package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql/mssqltest"
	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
	"github.com/restorewatch/restorewatch/ingest/push"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/postgres"
)

// backupSet is the nth backup set of database Sales, finished at finish.
func backupSet(n int, typ string, finish time.Time) store.BackupSet {
	lsn := func(k int) string { return fmt.Sprintf("%d", int64(39000000010000001)+int64(n*1000+k*100)) }
	return store.BackupSet{Database: "Sales", UUID: fmt.Sprintf("6C1B0E1E-77A1-4A8E-9E1B-3F2D1C0B0A%02d", n),
		Type: typ, Families: 1, FirstLSN: lsn(0), LastLSN: lsn(5), CheckpointLSN: lsn(1), DatabaseBackupLSN: lsn(0),
		Start: finish.Add(-time.Minute), Finish: finish, Size: 1 << 30, SoftwareBuild: "15.0.4236",
		Media: []store.BackupMedia{{Family: 1, DeviceType: 2, Device: `G:\b\Sales_` + typ + `.bak`}}}
}

// script adds n restores (full, diff and log in turn) of two databases.
func script(in *mssqltest.Instance, from time.Time, n int) {
	kinds := []store.Kind{store.KindFull, store.KindDiff, store.KindLog}
	for i := range n {
		for j, db := range []string{"Sales", "HR"} {
			in.AddRestore(mssqltest.Restore{Database: db, Kind: kinds[i%3],
				Start: from.Add(time.Duration(i)*time.Hour + time.Duration(j)*time.Minute), Seconds: float64(30 + 10*i + j), Bytes: 2 << 30})
		}
	}
}

// tdsFleet serves instances over TDS with TLS (its CA in dir/tds-ca.pem),
// each with four restores of two databases two days before base.
func tdsFleet(t *testing.T, dir string, base time.Time, names ...string) (map[string]*mssqltest.Instance, map[string]int) {
	t.Helper()
	ca, err := tdstest.NewCA("restorewatch test TDS CA")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "tds-ca.pem", ca.PEM)
	fleet, ports := map[string]*mssqltest.Instance{}, map[string]int{}
	for _, name := range names {
		in := mssqltest.New(name, "15.0.4236.7", -300)
		in.SetClock(base)
		in.Startup(base.Add(-72 * time.Hour))
		script(in, base.Add(-48*time.Hour), 4)
		tc, err := ca.ServerTLS("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		srv := tdstest.New(tdstest.Config{User: pushUser, Password: pushPass, Handler: in, ServerVersion: "15.0.4236.7", TLS: tc})
		addr, err := srv.Start()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		_, port, _ := net.SplitHostPort(addr)
		var p int
		fmt.Sscan(port, &p)
		fleet[name], ports[name] = in, p
	}
	return fleet, ports
}

// pushOnce runs `collect --once --push` and returns its stderr and exit code.
// wait is --push-wait: long where the central server is reachable (a busy
// machine, or the race detector, must not turn a slow answer into a
// failure), short where it is cut off (the pass gives up sooner).
func pushOnce(t *testing.T, config, local, url, tokenFile, caFile, wait string) (string, int) {
	t.Helper()
	_, stderr, code := runMainWith(t, func(m *Main) {
		m.cli.Collect.pushTune = func(o *push.Options) { o.MinBackoff, o.MaxBackoff = 20*time.Millisecond, 100*time.Millisecond }
	}, "collect", "--db", local, "--config", config, "--once", "--push", url, "--push-token-file", tokenFile,
		"--ca-file", caFile, "--push-wait", wait)
	return stderr, code
}

// runMainWith is runMain with a hook between parsing and running.
func runMainWith(t *testing.T, hook func(*Main), args ...string) (string, string, int) {
	t.Helper()
	var out, errb lockedBuffer
	m := NewMain()
	m.Stdout, m.Stderr, m.IsTerminal, m.Width = &out, &errb, false, 0
	m.Logger = slog.New(slog.NewTextHandler(&errb, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := m.ParseFlags(args); err != nil {
		return out.String(), err.Error(), 2
	}
	hook(m)
	err := m.Run(context.Background())
	if cerr := m.Close(); err == nil {
		err = cerr
	}
	code := 0
	if err != nil {
		errb.Write([]byte(err.Error()))
		code = 1
	}
	return out.String(), errb.String(), code
}

func createToken(t *testing.T, db, name string) string {
	t.Helper()
	out, stderr, code := runMain(t, "token", "create", "--db", db, name)
	if code != 0 {
		t.Fatalf("token create %s: exit %d: %s", name, code, stderr)
	}
	return strings.TrimSpace(out)
}

func collectorConfig(t *testing.T, dir, file, caFile string, ports map[string]int, names ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("[collector]\ninterval = \"1h\"\ntimeout = \"10s\"\nconcurrency = 4\njitter = \"0s\"\n")
	for _, n := range names {
		fmt.Fprintf(&b, "\n[[instance]]\nname = %q\nhost = \"127.0.0.1\"\nport = %d\nuser = %q\npassword_env = %q\ncertificate = %q\ntags = { rto = \"2h\", zone = %q }\n",
			n, ports[n], pushUser, pushPassEnv, caFile, strings.ToLower(n[4:5]))
	}
	return writeFile(t, dir, file, []byte(b.String()))
}

func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func spoolFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.rwpush"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(m)
	return m
}

func countRows(t *testing.T, path, q string) string {
	t.Helper()
	driver, dsn := "sqlite", "file:"+path+"?_pragma=query_only(1)"
	if postgres.IsURL(path) {
		driver, dsn = "pgx", path // SQL both engines read alike: string_agg, an alias on each subquery
	}
	d, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var s string
	if err := d.QueryRow(q).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func diffLines(want, got []string) string {
	var b strings.Builder
	for _, w := range want {
		if !slices.Contains(got, w) {
			fmt.Fprintf(&b, "- %s\n", w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			fmt.Fprintf(&b, "+ %s\n", g)
		}
	}
	fmt.Fprintf(&b, "(%d want, %d got)", len(want), len(got))
	return b.String()
}

// serveWarehouse runs `restorewatch serve --db path ARGS` until the test
// ends and returns its address.
func serveWarehouse(t *testing.T, path string, args ...string) string {
	t.Helper()
	return serveWarehouseWith(t, path, func(*Main) {}, args...)
}

// serveWarehouseWith is serveWarehouse with a hook between parsing and
// running.
func serveWarehouseWith(t *testing.T, path string, hook func(*Main), args ...string) string {
	t.Helper()
	var out lockedBuffer
	m := NewMain()
	m.Stdout, m.Stderr, m.IsTerminal = &out, &out, false
	m.Logger = slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--addr") }) {
		args = append(args, "--addr", "127.0.0.1:0") // never the default port another server may hold
	}
	if err := m.ParseFlags(append([]string{"serve", "--db", path}, args...)); err != nil {
		t.Fatal(err)
	}
	hook(m)
	ready := make(chan string, 1)
	m.cli.Serve.ready = ready
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- m.Run(ctx) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-served:
		stop()
		t.Fatalf("serve stopped before listening: %v\n%s", err, out.String())
	case <-time.After(guard):
		stop()
		t.Fatal("serve did not start")
	}
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
		m.Close()
		if strings.Contains(out.String(), "level=ERROR") {
			t.Errorf("serve logged errors:\n%s", out.String())
		}
	})
	return addr
}

// serverCA makes a CA and a certificate it signs for 127.0.0.1, now; it
// returns the CA's PEM file and the certificate's and key's.
func serverCA(t *testing.T, dir string) (caFile, certFile, keyFile string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "restorewatch push test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "central"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	caFile = writeFile(t, dir, "push-ca.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))
	certFile = writeFile(t, dir, "central.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	keyFile = writeFile(t, dir, "central.key", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
	return caFile, certFile, keyFile
}

// postBatch sends a batch file as a collector would.
func postBatch(t *testing.T, addr, caFile, tok string, body []byte) (int, string) {
	t.Helper()
	pool := x509.NewCertPool()
	b, _ := os.ReadFile(caFile)
	pool.AppendCertsFromPEM(b)
	c := &http.Client{Timeout: guard, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest(http.MethodPost, "https://"+addr+"/api/push", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(rb)
}

// cutProxy forwards TCP connections to the central server, or cuts them:
// the network between a zone and the center.
type cutProxy struct {
	ln     net.Listener
	target string
	mode   atomic.Int32
	cuts   atomic.Int32
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn
}

const (
	forward   = iota
	refuse    // accept and close at once (a firewall's reset)
	cutMidway // forward the client's first bytes, then drop the connection
)

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *cutProxy) addr() string { return p.ln.Addr().String() }
func (p *cutProxy) set(mode int) { p.mode.Store(int32(mode)) }

// forwarding reports whether the proxy passes connections through.
func (p *cutProxy) forwarding() bool { return p.mode.Load() == forward }

func (p *cutProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		mode := p.mode.Load()
		if mode == refuse {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		p.wg.Add(2)
		up := io.Writer(s)
		if mode == cutMidway {
			// Past the TLS handshake and into the request, then gone.
			up = &cutAfter{w: s, left: 2500, cut: func() { p.cuts.Add(1); c.Close(); s.Close() }}
		}
		go func() { defer p.wg.Done(); io.Copy(up, c); s.Close() }()
		go func() { defer p.wg.Done(); io.Copy(c, s); c.Close() }()
	}
}

// cutAfter writes left bytes, then cuts the connection.
type cutAfter struct {
	w    io.Writer
	left int
	cut  func()
}

func (c *cutAfter) Write(b []byte) (int, error) {
	if len(b) >= c.left {
		n, _ := c.w.Write(b[:c.left])
		c.left = 0
		c.cut()
		return n, io.ErrClosedPipe
	}
	c.left -= len(b)
	return c.w.Write(b)
}
