package web_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/demo"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web"
)

// guard bounds how long a test waits for an event that the code under test
// must produce; reaching it is a failure, never a pass.
const guard = 20 * time.Second

// started runs the dashboard with Start, on a real listener (the timeouts
// and the connection cap live there, not in Handler).
func started(t *testing.T, cfg web.Config) (*web.Server, string) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return demo.DefaultNow }
	}
	cfg.Addr = "127.0.0.1:0"
	if db, ok := cfg.DB.(store.Warehouse); ok && cfg.Importer == nil {
		cfg.Importer = uploads{db}
	}
	s := web.New(cfg)
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return s, s.Addr()
}

// rawConn dials addr and writes head (request line and headers, CRLF
// separated, without the blank line) and the blank line.
func rawConn(t *testing.T, addr, head string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, head+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	return conn
}

// readResponse reads one response from conn, failing the test after guard.
func readResponse(t *testing.T, conn net.Conn) *http.Response {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(guard))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	resp.Body.Close()
	return resp
}

// A wrong token in the headers is refused before the server reads a byte of
// the body: the 401 arrives while the upload has sent nothing but headers.
func TestImportChecksTheHeaderTokenBeforeTheBody(t *testing.T) {
	_, ts := serve(t, web.Config{DB: copyDemo(t), Token: "s3cret-token"})
	conn := rawConn(t, strings.TrimPrefix(ts.URL, "http://"), "POST /import HTTP/1.1\r\nHost: "+strings.TrimPrefix(ts.URL, "http://")+
		"\r\nAuthorization: Bearer wrong\r\nContent-Type: multipart/form-data; boundary=b\r\nTransfer-Encoding: chunked")
	if resp := readResponse(t, conn); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("upload with a wrong Bearer token: %d, want 401 before any body", resp.StatusCode)
	}
}

// fieldFlood streams a multipart form of ever more small fields, each with
// its own name, until the server stops reading or limit bytes are sent; it
// returns the server's status.
func fieldFlood(t *testing.T, base string, header map[string]string, limit int) int {
	t.Helper()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	var sent atomic.Int64
	go func() {
		value := strings.Repeat("v", 1000)
		for i := 0; sent.Load() < int64(limit); i++ {
			if err := mw.WriteField(fmt.Sprintf("f%d", i), value); err != nil {
				return // the server closed the body
			}
			sent.Add(int64(len(value)) + 80)
		}
		mw.Close()
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPost, base+"/import", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: guard}).Do(req)
	pr.CloseWithError(errors.New("done"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// countingListener adds every byte its connections read to n.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.n}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	k, err := c.Conn.Read(p)
	c.n.Add(int64(k))
	return k, err
}

// Before its checks pass, an upload's form is bounded in fields and bytes:
// the server stops reading a flood of fields long before 64 MiB (the code
// as found read all of it, 4 KiB a field, then answered 401).
func TestImportBoundsTheFormBeforeItsChecks(t *testing.T) {
	db := copyDemo(t)
	// What the server read is counted on its own connections, once it has
	// closed them: what the client managed to send also fills the pipe, the
	// transport's buffers and both sockets' (CI once saw 1.2 MB "sent").
	var read atomic.Int64
	flood := httptest.NewUnstartedServer(web.New(web.Config{DB: db, Token: "s3cret-token", Importer: uploads{db},
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))}).Handler())
	flood.Listener = countingListener{flood.Listener, &read}
	flood.Start()
	code := fieldFlood(t, flood.URL, nil, 64<<20)
	flood.Close() // waits for the connection's handler, and its drain of the body, to end
	if code != http.StatusBadRequest && code != http.StatusRequestEntityTooLarge {
		t.Errorf("a flood of fields: %d, want 400 or 413", code)
	}
	if n := read.Load(); n > 1<<20 {
		t.Errorf("the server read %d bytes of fields before refusing them", n)
	}
	_, ts := serve(t, web.Config{DB: db, Token: "s3cret-token"})
	// Even with the right Bearer token, fields before the files stay bounded.
	if code := fieldFlood(t, ts.URL, map[string]string{"Authorization": "Bearer s3cret-token"}, 64<<20); code != http.StatusBadRequest && code != http.StatusRequestEntityTooLarge {
		t.Errorf("a flood of fields with the token: %d, want 400 or 413", code)
	}
	// One field with a huge part header is cut at the pre-check bound too.
	var body strings.Builder
	body.WriteString("--b\r\nContent-Disposition: form-data; name=\"kind\"\r\nX-Pad: " + strings.Repeat("p", 200<<10) + "\r\n\r\nhistory\r\n--b--\r\n")
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/import", strings.NewReader(body.String()))
	req.Header.Set("Content-Type", "multipart/form-data; boundary=b")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 200 KiB part header before the checks: %d, want 413", resp.StatusCode)
	}
	// A normal upload still works with the token in the form.
	c := client(t)
	tok := csrf(t, c, ts.URL)
	if code := upload(t, c, ts.URL, map[string]string{"_csrf": tok, "token": "s3cret-token", "kind": "history"}, historyCSV, nil); code != http.StatusOK {
		t.Errorf("upload with the form token: %d, want 200", code)
	}
}

func TestTokenInTheQueryStringIsRefused(t *testing.T) {
	db := copyDemo(t)
	_, ts := serve(t, web.Config{DB: db, Token: "s3cret-token"})
	c := client(t)
	reg := firstRegression(t, db)
	tok := csrf(t, c, ts.URL)
	u := ts.URL + "/regressions/" + itoa(reg.ID) + "/status?token=s3cret-token"
	if resp := postForm(t, c, u, url.Values{"status": {"acknowledged"}, "_csrf": {tok}}, nil); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status with the token in the query: %d, want 400", resp.StatusCode)
	}
	for _, p := range []string{"/?token=s3cret-token", "/api/restores?token=x", "/metrics?token=s3cret-token"} {
		if code, _, _ := get(t, c, ts.URL+p); code != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", p, code)
		}
	}
	got, err := db.GetRegression(t.Context(), reg.ID)
	if err != nil || got.Status != store.StatusOpen {
		t.Errorf("the regression changed: %+v, %v", got, err)
	}
}

func TestStatusChangesAndWrongTokensAreRateLimited(t *testing.T) {
	db := copyDemo(t)
	_, ts := serve(t, web.Config{DB: db, Token: "s3cret-token"})
	reg := firstRegression(t, db)
	u := ts.URL + "/regressions/" + itoa(reg.ID) + "/status"
	api := &http.Client{Timeout: guard}
	bearer := map[string]string{"Authorization": "Bearer s3cret-token", "Accept": "application/json"}
	limited := 0
	for range 80 {
		if resp := postForm(t, api, u, url.Values{"status": {"acknowledged"}}, bearer); resp.StatusCode == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited == 0 {
		t.Error("80 status changes in a row were never refused with 429")
	}
	// Wrong tokens from one address: after the bucket empties, even the
	// right token is refused, so guessing cannot go on at full speed.
	_, ts2 := serve(t, web.Config{DB: db, Token: "s3cret-token"})
	for range 12 {
		req, _ := http.NewRequest(http.MethodGet, ts2.URL+"/api/regressions", nil)
		req.Header.Set("Authorization", "Bearer guess")
		resp, err := api.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	req, _ := http.NewRequest(http.MethodGet, ts2.URL+"/api/regressions", nil)
	req.Header.Set("Authorization", "Bearer s3cret-token")
	resp, err := api.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the right token after 12 wrong ones: %d, want 429", resp.StatusCode)
	}
}

func basic(token string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte("anyone:"+token))
}

// Beyond loopback (ProtectReads), pages, the API and /metrics need the
// token; /healthz and the stylesheets do not.
func TestReadsNeedTheTokenWhenProtected(t *testing.T) {
	db := copyDemo(t)
	_, ts := serve(t, web.Config{DB: db, Token: "s3cret-token", ProtectReads: true})
	c := client(t)
	reg := firstRegression(t, db)
	for _, p := range []string{"/", "/restores", "/instances", "/regressions/" + itoa(reg.ID), "/api/restores", "/api/instances", "/metrics", "/restores.csv", "/collector"} {
		code, body, h := get(t, c, ts.URL+p)
		if code != http.StatusUnauthorized || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("GET %s without the token: %d (WWW-Authenticate %q), want 401 asking for Basic", p, code, h.Get("WWW-Authenticate"))
		}
		if strings.Contains(body, "restore_") || strings.Contains(body, `\\nas`) {
			t.Errorf("GET %s without the token shows data", p)
		}
	}
	for _, p := range []string{"/healthz", "/static/app.css", "/favicon.ico"} {
		if code, _, _ := get(t, c, ts.URL+p); code != http.StatusOK {
			t.Errorf("GET %s without the token: %d, want 200", p, code)
		}
	}
	for _, auth := range []string{basic("s3cret-token"), "Bearer s3cret-token"} {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/metrics", nil)
		req.Header.Set("Authorization", auth)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET /metrics with %s: %d, want 200", strings.Fields(auth)[0], resp.StatusCode)
		}
	}
	// A browser signed in with Basic resends it by itself, so its writes
	// still need the CSRF token.
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/regressions/"+itoa(reg.ID), nil)
	req.Header.Set("Authorization", basic("s3cret-token"))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(page), `name="token"`) {
		t.Error("a signed-in page still asks for the token in its form")
	}
	tok := csrf(t, c, ts.URL)
	u := ts.URL + "/regressions/" + itoa(reg.ID) + "/status"
	if resp := postForm(t, c, u, url.Values{"status": {"acknowledged"}}, map[string]string{"Authorization": basic("s3cret-token")}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("Basic-authenticated write without CSRF: %d, want 403", resp.StatusCode)
	}
	if resp := postForm(t, c, u, url.Values{"status": {"acknowledged"}, "_csrf": {tok}}, map[string]string{"Authorization": basic("s3cret-token")}); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("Basic-authenticated write with CSRF: %d, want 303", resp.StatusCode)
	}
}

// withHost fetches path with the given Host header.
func withHost(t *testing.T, base, path, host string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+path, nil)
	req.Host = host
	resp, err := client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// DNS rebinding: a page of evil.example that rebinds its name to 127.0.0.1
// makes the browser send Host: evil.example; the server refuses it.
func TestForeignHostIsRefused(t *testing.T) {
	_, ts := serve(t, web.Config{DB: demoDB(t), AllowedHosts: []string{"Dash.Corp.Example"}})
	port := ts.URL[strings.LastIndex(ts.URL, ":"):]
	for host, want := range map[string]int{
		"127.0.0.1" + port: http.StatusOK, "localhost" + port: http.StatusOK, "LOCALHOST.": http.StatusOK,
		"dash.corp.example": http.StatusOK, "dash.corp.example" + port: http.StatusOK, "dash.corp.example.:443": http.StatusOK,
		"evil.example" + port: http.StatusMisdirectedRequest, "evil.example": http.StatusMisdirectedRequest,
		"127.0.0.1.evil.example" + port: http.StatusMisdirectedRequest, "10.1.2.3" + port: http.StatusMisdirectedRequest,
		"[::1]" + port: http.StatusMisdirectedRequest, "localhost.evil.example": http.StatusMisdirectedRequest,
	} {
		for _, p := range []string{"/", "/api/regressions", "/import"} {
			if got := withHost(t, ts.URL, p, host); got != want {
				t.Errorf("GET %s with Host %q: %d, want %d", p, host, got, want)
			}
		}
	}
}

// Writes from another origin are refused even with a valid CSRF token (a
// rebinding page could have read it).
func TestCrossSiteWritesAreRefused(t *testing.T) {
	db := copyDemo(t)
	_, ts := serve(t, web.Config{DB: db})
	c := client(t)
	reg := firstRegression(t, db)
	tok := csrf(t, c, ts.URL)
	u := ts.URL + "/regressions/" + itoa(reg.ID) + "/status"
	form := url.Values{"status": {"acknowledged"}, "_csrf": {tok}}
	for _, h := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"},
		{"Origin": "http://evil.example"}, {"Origin": "null"},
	} {
		if resp := postForm(t, c, u, form, h); resp.StatusCode != http.StatusForbidden {
			t.Errorf("status post with %v: %d, want 403", h, resp.StatusCode)
		}
	}
	if code := upload(t, c, ts.URL, map[string]string{"_csrf": tok, "kind": "history"}, historyCSV, map[string]string{"Sec-Fetch-Site": "cross-site"}); code != http.StatusForbidden {
		t.Errorf("cross-site upload: %d, want 403", code)
	}
	got, err := db.GetRegression(t.Context(), reg.ID)
	if err != nil || got.Status != store.StatusOpen {
		t.Fatalf("a cross-site post changed the regression: %+v, %v", got, err)
	}
	if resp := postForm(t, c, u, form, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": ts.URL}); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("same-origin post: %d, want 303", resp.StatusCode)
	}
}

// gatedStore's Ping counts calls, and blocks while the gate is shut, as a
// saturated read pool would.
type gatedStore struct {
	web.Store
	pings atomic.Int32
	mu    sync.Mutex
	gate  chan struct{}
}

func (g *gatedStore) Ping(ctx context.Context) error {
	g.pings.Add(1)
	g.mu.Lock()
	gate := g.gate
	g.mu.Unlock()
	select {
	case <-gate:
		return g.Store.Ping(ctx)
	case <-ctx.Done():
		return store.Errorf(store.EUNAVAILABLE, "the warehouse does not answer")
	}
}

// /healthz answers from a recent ping: a burst of probes while the read
// pool is stuck makes at most one more ping and no 503 (the code as found
// pinged once per probe, each waiting 2 s for a connection, then 503).
func TestHealthAnswersFromARecentPing(t *testing.T) {
	open := make(chan struct{})
	close(open)
	g := &gatedStore{Store: demoDB(t), gate: open}
	_, ts := serve(t, web.Config{DB: g})
	c := &http.Client{Timeout: guard}
	if code, _, _ := get(t, c, ts.URL+"/healthz"); code != http.StatusOK {
		t.Fatalf("healthz: %d", code)
	}
	g.mu.Lock()
	g.gate = make(chan struct{}) // from now on a ping waits
	g.mu.Unlock()
	var wg sync.WaitGroup
	var bad atomic.Int32
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.Get(ts.URL + "/healthz")
			if err != nil || resp.StatusCode != http.StatusOK {
				bad.Add(1)
			}
			if err == nil {
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	if bad.Load() > 0 {
		t.Errorf("%d of 200 probes failed while a ping was stuck", bad.Load())
	}
	if n := g.pings.Load(); n > 2 {
		t.Errorf("200 probes made %d pings, want at most 2", n)
	}
	// A warehouse that does not answer is reported: a fresh server whose
	// first ping fails answers 503.
	dead := &gatedStore{Store: demoDB(t), gate: make(chan struct{})}
	_, ts2 := serve(t, web.Config{DB: dead})
	if code, _, _ := get(t, c, ts2.URL+"/healthz"); code != http.StatusServiceUnavailable {
		t.Errorf("healthz of a warehouse that does not answer: %d, want 503", code)
	}
}

// A request body that stalls is cut at the read timeout, and the
// connection closed (the code as found had no read timeout: a slow body
// held its connection for ever).
func TestSlowBodyIsCutOff(t *testing.T) {
	_, addr := started(t, web.Config{DB: copyDemo(t), ReadTimeout: 300 * time.Millisecond})
	conn := rawConn(t, addr, "POST /regressions/1/status HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100")
	io.WriteString(conn, "status=ack")
	conn.SetReadDeadline(time.Now().Add(guard))
	_, err := io.ReadAll(conn) // whatever the server says, it must then close
	if err != nil {
		t.Fatalf("the server did not close a stalled body's connection: %v", err)
	}
	// A GET with a body is refused at once, its body unread (net/http would
	// otherwise read it after the page, up to 256 KiB).
	get := rawConn(t, addr, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\nContent-Length: 100000")
	if resp := readResponse(t, get); resp.StatusCode != http.StatusBadRequest || !resp.Close {
		t.Errorf("GET with a stalled body: %d (close %v), want 400 and the connection closed", resp.StatusCode, resp.Close)
	}
}

// An authenticated upload may take longer than the read timeout as long as
// its chunks keep coming; one that trickles is cut off.
func TestUploadDeadlineMovesWithEachChunk(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out upload deadlines (about 4 s): the full suite runs it")
	}
	_, addr := started(t, web.Config{DB: copyDemo(t), Token: "s3cret-token", ReadTimeout: 400 * time.Millisecond, UploadIdle: 1500 * time.Millisecond})
	send := func(chunk int, pause time.Duration, total int) (int, error) {
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		go func() {
			mw.WriteField("kind", "history")
			fw, _ := mw.CreateFormFile("files", "slow.csv")
			lines := strings.SplitAfter(historyCSV, "\n")
			fw.Write([]byte(lines[0] + lines[1]))
			pad := []byte(strings.Repeat("x", chunk-1) + "\n")
			for sent := 0; sent < total; sent += chunk {
				time.Sleep(pause)
				if _, err := fw.Write(pad); err != nil {
					return
				}
			}
			mw.Close()
			pw.Close()
		}()
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/import", pr)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Authorization", "Bearer s3cret-token")
		req.Header.Set("Accept", "application/json")
		resp, err := (&http.Client{Timeout: guard}).Do(req)
		pr.CloseWithError(errors.New("done"))
		if err != nil {
			return 0, err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("upload of %d-byte chunks: %d %.300s", chunk, resp.StatusCode, b)
		return resp.StatusCode, nil
	}
	// 24 chunks of 64 KiB, 100 ms apart: 2.4 s, six read timeouts.
	if code, err := send(64<<10, 100*time.Millisecond, 24*64<<10); err != nil || code != http.StatusOK {
		t.Errorf("a steady upload longer than the read timeout: %d, %v; want 200", code, err)
	}
	// 10 bytes every 50 ms never makes 64 KiB: the server cuts it after
	// 1.5 s of waiting (a 408, or the connection closed), long before the
	// client's own guard.
	code, err := send(10, 50*time.Millisecond, 10<<20)
	var ue *url.Error
	switch {
	case err == nil && code != http.StatusRequestTimeout:
		t.Errorf("a trickling upload: %d, want 408", code)
	case errors.As(err, &ue) && ue.Timeout():
		t.Errorf("the server held a trickling upload until the client gave up: %v", err)
	}
}

// The connection cap: with two connections held, a third is not served a
// page (503 from a reserved slot) but its health check is answered, and no
// more than two connections hold the general slots.
func TestConnectionCap(t *testing.T) {
	s, addr := started(t, web.Config{DB: demoDB(t), MaxConns: 2, ReadHeaderTimeout: time.Hour, ReadTimeout: time.Hour})
	for range 2 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
	}
	page := rawConn(t, addr, "GET / HTTP/1.1\r\nHost: "+addr+"\r\nConnection: close")
	if resp := readResponse(t, page); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a page beyond the cap: %d, want 503", resp.StatusCode)
	}
	probe := rawConn(t, addr, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\nConnection: close")
	if resp := readResponse(t, probe); resp.StatusCode != http.StatusOK {
		t.Errorf("healthz beyond the cap: %d, want 200 from a reserved slot", resp.StatusCode)
	}
	if n := s.OpenConns(); n > 2 {
		t.Errorf("%d connections open, cap 2", n)
	}
}

var cspMeta = regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)"`)

// The saved report carries its own CSP (a file has no headers): no script,
// no request, and its one inline stylesheet allowed by its hash alone.
func TestReportCarriesItsOwnCSP(t *testing.T) {
	db := demoDB(t)
	reg := firstRegression(t, db)
	var buf strings.Builder
	if err := web.RenderRegressionReport(t.Context(), db, reg.ID, &buf); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	m := cspMeta.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the saved report has no Content-Security-Policy meta element")
	}
	policy := html.UnescapeString(m[1])
	if strings.Index(page, m[0]) > strings.Index(page, "<style") {
		t.Error("the policy comes after the stylesheet")
	}
	for _, want := range []string{"default-src 'none'", "script-src 'none'", "base-uri 'none'", "form-action 'none'"} {
		if !strings.Contains(policy, want) {
			t.Errorf("the report's policy %q lacks %q", policy, want)
		}
	}
	if strings.Contains(policy, "unsafe-inline") {
		t.Errorf("the report's policy allows inline code: %q", policy)
	}
	// The hash must be the inline stylesheet's, or the report prints unstyled.
	start, end := strings.Index(page, "<style>"), strings.Index(page, "</style>")
	if start < 0 || end < start || strings.Count(page, "<style") != 1 {
		t.Fatal("the saved report has no single inline stylesheet")
	}
	sum := sha256.Sum256([]byte(page[start+len("<style>") : end]))
	if want := "style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(policy, want) {
		t.Errorf("the report's policy %q does not allow its stylesheet (%s)", policy, want)
	}
	// The served report carries it too, next to the header.
	_, ts := serve(t, web.Config{DB: db})
	_, body, h := get(t, client(t), ts.URL+"/reports/regressions/"+itoa(reg.ID))
	if m := cspMeta.FindStringSubmatch(body); m == nil || !strings.Contains(html.UnescapeString(m[1]), "script-src 'none'") || h.Get("Content-Security-Policy") == "" {
		t.Errorf("the served report's policies: meta %v, header %q", m, h.Get("Content-Security-Policy"))
	}
}
