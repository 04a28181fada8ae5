package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/web"
)

// guard bounds a wait for an event the code under test must produce;
// reaching it is a failure.
const guard = 20 * time.Second

// serveFor runs `restorewatch serve ARGS` on a fresh warehouse until the
// test ends, and returns the bound address and what it wrote.
func serveFor(t *testing.T, tune func(*web.Config), args ...string) (string, *lockedBuffer) {
	t.Helper()
	var out lockedBuffer
	m := NewMain()
	m.Stdout, m.Stderr, m.IsTerminal = &out, &out, false
	m.Logger = slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn}))
	args = append([]string{"serve", "--db", newDB(t, "rw.db")}, args...)
	if err := m.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	m.cli.Serve.ready, m.cli.Serve.tune = ready, tune
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
	})
	return addr, &out
}

// do sends one request and returns its status (and Location).
func do(t *testing.T, c *http.Client, method, u string, header map[string]string, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}

func noRedirect() *http.Client {
	return &http.Client{Timeout: guard, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// The dashboard as `serve` runs it on loopback: Host and Origin checks, no
// token in a query, strict redirects, slow bodies cut while /healthz keeps
// answering, and a wrong header token refused before any body.
func TestServeRefusesTheIssue12Attacks(t *testing.T) {
	t.Setenv("RW_TOKEN", "s3cret-token")
	addr, out := serveFor(t, func(c *web.Config) { c.ReadTimeout = 500 * time.Millisecond },
		"--addr", "127.0.0.1:0", "--allowed-host", "dash.corp.example")
	base := "http://" + addr
	c := noRedirect()

	t.Run("host", func(t *testing.T) {
		for host, want := range map[string]int{addr: 200, "localhost": 200, "dash.corp.example:8080": 200,
			"evil.example:" + addr[strings.LastIndex(addr, ":")+1:]: http.StatusMisdirectedRequest} {
			if got, _ := do(t, c, "GET", base+"/import", map[string]string{"Host": host}, nil); got != want {
				t.Errorf("Host %s: %d, want %d", host, got, want)
			}
		}
	})
	t.Run("cross-site write", func(t *testing.T) {
		h := map[string]string{"Authorization": "Bearer s3cret-token", "Origin": "http://evil.example",
			"Content-Type": "application/x-www-form-urlencoded"}
		if got, _ := do(t, c, "POST", base+"/regressions/1/status", h, strings.NewReader("status=resolved")); got != http.StatusForbidden {
			t.Errorf("cross-origin status post: %d, want 403", got)
		}
	})
	t.Run("query token", func(t *testing.T) {
		if got, _ := do(t, c, "GET", base+"/?token=s3cret-token", nil, nil); got != http.StatusBadRequest {
			t.Errorf("token in the query: %d, want 400", got)
		}
	})
	t.Run("redirect", func(t *testing.T) {
		for _, back := range []string{"/%09/evil.example", "/%5Cevil.example", "//evil.example", "/%0D%0A/evil.example", "https:evil.example"} {
			if _, loc := do(t, c, "GET", base+"/theme?set=dark&back="+back, nil, nil); loc != "/" {
				t.Errorf("theme back=%s: Location %q, want /", back, loc)
			}
		}
	})
	t.Run("header token before body", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		io.WriteString(conn, "POST /import HTTP/1.1\r\nHost: "+addr+"\r\nAuthorization: Bearer wrong\r\n"+
			"Content-Type: multipart/form-data; boundary=b\r\nTransfer-Encoding: chunked\r\n\r\n")
		conn.SetReadDeadline(time.Now().Add(guard))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil || resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("upload with a wrong Bearer token and no body: %v %v, want 401", resp, err)
		}
	})
	t.Run("slow bodies", func(t *testing.T) {
		// 100 uploads that send their headers and a few bytes, then stall.
		var conns []net.Conn
		for range 100 {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			io.WriteString(conn, "POST /import HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: multipart/form-data; boundary=b\r\n"+
				"Content-Length: 100000\r\n\r\n--b\r\nContent-Disposition: form-data; name=\"kind\"\r\n\r\nhist")
			conns = append(conns, conn)
		}
		// Meanwhile the health check answers.
		if got, _ := do(t, c, "GET", base+"/healthz", nil, nil); got != http.StatusOK {
			t.Errorf("healthz under 100 slow bodies: %d", got)
		}
		// And each stalled upload is cut: the server closes its connection.
		var wg sync.WaitGroup
		var mu sync.Mutex
		held := 0
		for _, conn := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				conn.SetReadDeadline(time.Now().Add(guard))
				if _, err := io.ReadAll(conn); err != nil {
					mu.Lock()
					held++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if held > 0 {
			t.Errorf("%d of 100 stalled uploads were still held after %s", held, guard)
		}
	})
	if strings.Contains(out.String(), "s3cret-token") {
		t.Error("the token was written to the output")
	}
}

// Beyond loopback, reads need the token unless --public-read, and plain
// HTTP is warned about. (The test binds loopback: tune moves the address
// after serve has judged the one given.)
func TestServeBeyondLoopbackProtectsReads(t *testing.T) {
	t.Setenv("RW_TOKEN", "s3cret-token")
	onLoopback := func(c *web.Config) { c.Addr = "127.0.0.1:0" }
	addr, out := serveFor(t, onLoopback, "--addr", "0.0.0.0:0")
	base := "http://" + addr
	c := noRedirect()
	for _, p := range []string{"/", "/instances", "/restores", "/api/instances", "/metrics"} {
		if got, _ := do(t, c, "GET", base+p, nil, nil); got != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %d, want 401", p, got)
		}
		auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("me:s3cret-token"))
		if got, _ := do(t, c, "GET", base+p, map[string]string{"Authorization": auth}, nil); got != http.StatusOK {
			t.Errorf("GET %s signed in: %d, want 200", p, got)
		}
	}
	if got, _ := do(t, c, "GET", base+"/healthz", nil, nil); got != http.StatusOK {
		t.Errorf("healthz without the token: %d, want 200", got)
	}
	if !strings.Contains(out.String(), "warning: serving plain HTTP beyond loopback") {
		t.Errorf("no warning about plain HTTP beyond loopback:\n%s", out.String())
	}

	addr, _ = serveFor(t, onLoopback, "--addr", "0.0.0.0:0", "--public-read")
	if got, _ := do(t, c, "GET", "http://"+addr+"/instances", nil, nil); got != http.StatusOK {
		t.Errorf("--public-read: GET /instances without the token: %d, want 200", got)
	}
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	if got, _ := do(t, c, "POST", "http://"+addr+"/regressions/1/status", h, strings.NewReader("status=resolved")); got != http.StatusUnauthorized {
		t.Errorf("--public-read: a write without the token: %d, want 401", got)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key, made now.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "restorewatch test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestServeTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	addr, out := serveFor(t, nil, "--addr", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile)
	c := &http.Client{Timeout: guard, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Get("https://" + addr + "/import")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.TLS == nil {
		t.Fatalf("GET over TLS: %d, TLS %v", resp.StatusCode, resp.TLS != nil)
	}
	secure := false
	for _, ck := range resp.Cookies() {
		if ck.Name == "rw_csrf" {
			secure = ck.Secure
		}
	}
	if !secure {
		t.Error("over TLS the CSRF cookie is not Secure")
	}
	if resp, err := (&http.Client{Timeout: guard}).Get("http://" + addr + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP was served on the TLS port")
		}
	}
	if !strings.Contains(out.String(), "https://"+addr) {
		t.Errorf("serve did not announce https://%s:\n%s", addr, out.String())
	}

	m := NewMain()
	m.Stdout, m.Stderr = io.Discard, io.Discard
	err = m.ParseFlags([]string{"serve", "--db", newDB(t, "x.db"), "--tls-cert", certFile})
	if err == nil {
		err = m.Run(t.Context())
	}
	var u usageError
	if !errors.As(err, &u) {
		t.Errorf("--tls-cert without --tls-key: %v, want a usage error", err)
	}
	m.Close()
}

// The PDF is printed with script execution off: a script in the printed
// page never runs, while the page itself loads (its image is fetched).
func TestPDFPrintingRunsNoScript(t *testing.T) {
	bin, err := chromium()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	var mu sync.Mutex
	hits := map[string]int{}
	probe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		w.Header().Set("Content-Type", "image/gif")
		w.Write([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"))
	}))
	defer probe.Close()
	page := `<!DOCTYPE html><html><body><script>new Image().src="` + probe.URL + `/script-ran"; document.body.append("SCRIPT RAN")</script>` +
		`<p>report</p><img src="` + probe.URL + `/page-loaded" alt=""></body></html>`
	var out strings.Builder
	m := &Main{Stdout: &out}
	pdf := filepath.Join(t.TempDir(), "r.pdf")
	if err := writePDF(t.Context(), m, []byte(page), pdf, papers["a4"]); err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	b, err := os.ReadFile(pdf)
	if err != nil || !strings.HasPrefix(string(b), "%PDF-") {
		t.Fatalf("no PDF written: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits["/page-loaded"] == 0 {
		t.Fatalf("the page's image was never fetched, so the probe proves nothing: %v", hits)
	}
	if hits["/script-ran"] > 0 {
		t.Error("a script ran while the PDF was printed")
	}
}
