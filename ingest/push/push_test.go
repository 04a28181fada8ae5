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
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/ingest/errorlog"
	"github.com/restorewatch/restorewatch/ingest/push"
	"github.com/restorewatch/restorewatch/store"
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
		return nil
	}
}

func openDB(t *testing.T) (*store.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "central.db")
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
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
func central(t *testing.T, db *store.DB) (ts *httptest.Server, reads *atomic.Int64) {
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
	d, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)")
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

// What a pass hands the client comes out of the spool as it went in, and
// the spool keeps it until the server acknowledged it.
func TestSpoolRoundTrip(t *testing.T) {
	c := records(t)
	dir := t.TempDir()
	cl, err := push.New(push.Options{URL: "http://127.0.0.1:1", Token: "rwc_x", Spool: dir})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := cl.Records(context.Background(), "live", "SQLPROD01\\PROD", feed(c))
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(len(c.Hosts) + len(c.LogRestores)); sum.Read != want {
		t.Errorf("Read = %d, want %d", sum.Read, want)
	}
	files := spooled(t, dir)
	if len(files) != 1 {
		t.Fatalf("%d batches spooled, want 1", len(files))
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := push.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	var got store.Collect
	if err := b.Feed(&got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.LogRestores, c.LogRestores) || !reflect.DeepEqual(got.Hosts, c.Hosts) {
		t.Errorf("the batch does not hold the records handed in:\ngot  %+v\nwant %+v", got.LogRestores, c.LogRestores)
	}
	if b.Name != "SQLPROD01\\PROD" || b.Source != "live" || !strings.Contains(files[0], b.Batch) {
		t.Errorf("header %+v, file %s", b.Header, files[0])
	}
	// The server is unreachable: the batch stays.
	if err := cl.SendAll(context.Background()); err == nil {
		t.Error("SendAll to a closed port succeeded")
	}
	if n, _ := cl.Pending(); n != 1 {
		t.Errorf("%d batches pending after a failed send, want 1", n)
	}
}

// A pass larger than a batch is split, and every part is spooled.
func TestLargePassSplits(t *testing.T) {
	dir := t.TempDir()
	cl, err := push.New(push.Options{URL: "http://localhost:1", Token: "rwc_x", Spool: dir})
	if err != nil {
		t.Fatal(err)
	}
	c := records(t)
	n := push.BatchRecords*2 + 7
	_, err = cl.Records(context.Background(), "live", "X", func(s store.Sink) error {
		for i := range n {
			l := c.LogRestores[i%len(c.LogRestores)]
			if err := s.LogRestore(l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	var more []bool
	for _, p := range spooled(t, dir) {
		f, _ := os.Open(p)
		b, err := push.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		total += b.Records
		more = append(more, b.More)
	}
	if got := len(spooled(t, dir)); got != 3 || total != n {
		t.Errorf("%d batches holding %d records, want 3 holding %d", got, total, n)
	}
	// Only the last batch of the pass lets the server derive.
	if want := []bool{true, true, false}; !reflect.DeepEqual(more, want) {
		t.Errorf("more flags %v, want %v", more, want)
	}
}

// A pass of several batches is derived once, after its last batch: before
// it the instance's facts are stored and it is still marked for derivation.
func TestSplitPassDerivedAfterItsLastBatch(t *testing.T) {
	db, path := openDB(t)
	ctx := context.Background()
	dir := t.TempDir()
	cl, err := push.New(push.Options{URL: "http://localhost:1", Token: "rwc_x", Spool: dir})
	if err != nil {
		t.Fatal(err)
	}
	c := records(t)
	n := push.BatchRecords + len(c.LogRestores)
	_, err = cl.Records(ctx, "live", "SQLPROD01\\PROD", func(s store.Sink) error {
		for i := range n {
			l := c.LogRestores[i%len(c.LogRestores)]
			l.Origin.Line = i + 1
			if err := s.LogRestore(l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	files := spooled(t, dir)
	if len(files) != 2 {
		t.Fatalf("%d batches, want 2", len(files))
	}
	rcv := push.NewReceiver(db, ingest.LoaderOptions{}, nil)
	apply := func(p string) {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := rcv.Push(ctx, "zone-b", f); err != nil {
			t.Fatal(err)
		}
	}
	apply(files[0])
	if got := count(t, path, `SELECT COUNT(*) FROM instance WHERE dirty > 0`); got != 1 {
		t.Errorf("after the first batch %d instances wait for derivation, want 1", got)
	}
	if got := count(t, path, `SELECT COUNT(*) FROM restore`); got != 0 {
		t.Errorf("after the first batch %d restores are derived, want 0", got)
	}
	apply(files[1])
	if got := count(t, path, `SELECT COUNT(*) FROM instance WHERE dirty > 0`); got != 0 {
		t.Errorf("after the last batch %d instances wait for derivation", got)
	}
	if got := count(t, path, `SELECT COUNT(*) FROM restore`); got == 0 {
		t.Error("after the last batch no restore is derived")
	}
}

// Pushed to a real server over TLS: applied once; the same batch again is
// acknowledged without being applied; the same facts in a new batch add
// nothing; the spool is empty once acknowledged.
func TestPushAppliesOnceAndReplaysAddNothing(t *testing.T) {
	db, path := openDB(t)
	tok, err := db.CreateCollectorToken(context.Background(), "zone-b")
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := central(t, db)
	dir := t.TempDir()
	cl, err := push.New(push.Options{URL: ts.URL, Token: tok, Spool: dir, CAFile: caFile(t, ts)})
	if err != nil {
		t.Fatal(err)
	}
	c := records(t)
	if _, err := cl.Records(context.Background(), "live", "SQLPROD01\\PROD", feed(c)); err != nil {
		t.Fatal(err)
	}
	batch := spooled(t, dir)[0]
	saved, err := os.ReadFile(batch)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.SendAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, _ := cl.Pending(); n != 0 {
		t.Errorf("%d batches left after the server acknowledged them", n)
	}
	restores := count(t, path, `SELECT COUNT(*) FROM restore`)
	logs := count(t, path, `SELECT COUNT(*) FROM log_restore`)
	if restores != len(c.LogRestores) || logs != len(c.LogRestores) {
		t.Fatalf("central holds %d restores from %d log records, want %d", restores, logs, len(c.LogRestores))
	}

	// The acknowledgement was lost: the collector sends the same file again.
	res := post(t, ts, tok, saved)
	first, err := push.Decode(bytes.NewReader(saved))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != push.Duplicate || res.Batch != first.Batch {
		t.Errorf("replayed batch: %+v, want a duplicate of %s", res, first.Batch)
	}
	// The same facts collected again (watermarks lost) in a new batch.
	if _, err := cl.Records(context.Background(), "live", "SQLPROD01\\PROD", feed(c)); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(spooled(t, dir)[0])
	res = post(t, ts, tok, again)
	if res.Status != push.Applied || res.Added != 0 {
		t.Errorf("the same facts in a new batch: %+v, want applied adding 0", res)
	}
	if got := count(t, path, `SELECT COUNT(*) FROM restore`); got != restores {
		t.Errorf("restores %d after replays, want %d", got, restores)
	}
	if got := count(t, path, `SELECT COUNT(*) FROM log_restore`); got != logs {
		t.Errorf("log records %d after replays, want %d", got, logs)
	}
	if got := count(t, path, `SELECT COUNT(*) FROM push_batch`); got != 2 {
		t.Errorf("%d batches remembered, want 2", got)
	}
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

// A revoked, wrong or missing token is refused from the headers alone:
// the server never reads the body, a whole valid batch.
func TestRefusedBeforeTheBodyIsRead(t *testing.T) {
	db, path := openDB(t)
	ctx := context.Background()
	tok, err := db.CreateCollectorToken(ctx, "zone-b")
	if err != nil {
		t.Fatal(err)
	}
	ts, reads := central(t, db)
	cl, err := push.New(push.Options{URL: ts.URL, Token: tok, Spool: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Records(ctx, "live", "A", feed(records(t))); err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(spooledOne(t, cl))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeCollectorToken(ctx, "zone-b"); err != nil {
		t.Fatal(err)
	}
	for _, presented := range []string{tok, "rwc_" + strings.Repeat("A", 43), ""} {
		code, _ := postStatus(t, ts, presented, bytes.NewReader(body), int64(len(body)))
		if code != http.StatusUnauthorized {
			t.Errorf("token %.8q…: %d, want 401", presented, code)
		}
	}
	if n := reads.Load(); n != 0 {
		t.Errorf("the server read refused bodies %d times", n)
	}
	if got := count(t, path, `SELECT COUNT(*) FROM push_batch`); got != 0 {
		t.Errorf("%d batches applied with refused tokens", got)
	}
	// The same body with a valid token is read and applied: the spy sees
	// reads when there are some.
	tok2, _ := db.CreateCollectorToken(ctx, "zone-b")
	if code, res := postStatus(t, ts, tok2, bytes.NewReader(body), int64(len(body))); code != http.StatusOK || res.Status != push.Applied {
		t.Fatalf("valid token: %d %+v", code, res)
	}
	if reads.Load() == 0 {
		t.Error("the spy saw no read of an applied body")
	}
}

// A malformed batch is refused with 400, applied not at all, and the
// client moves it out of the queue (kept under refused/) so the batches
// after it still go.
func TestMalformedBatchRefusedAndSetAside(t *testing.T) {
	db, path := openDB(t)
	tok, _ := db.CreateCollectorToken(context.Background(), "zone-b")
	ts, _ := central(t, db)
	dir := t.TempDir()
	cl, err := push.New(push.Options{URL: ts.URL, Token: tok, Spool: dir, CAFile: caFile(t, ts)})
	if err != nil {
		t.Fatal(err)
	}
	c := records(t)
	if _, err := cl.Records(context.Background(), "live", "A", feed(c)); err != nil {
		t.Fatal(err)
	}
	bad := spooled(t, dir)[0]
	raw, _ := os.ReadFile(bad)
	if err := os.WriteFile(bad, raw[:len(raw)/2], 0o600); err != nil { // truncated
		t.Fatal(err)
	}
	if _, err := cl.Records(context.Background(), "live", "SQLPROD01\\PROD", feed(c)); err != nil {
		t.Fatal(err)
	}
	if err := cl.SendAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, _ := cl.Pending(); n != 0 {
		t.Errorf("%d pending, want 0", n)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "refused", "*.rwpush")); len(m) != 1 {
		t.Errorf("refused/ holds %d batches, want the truncated one", len(m))
	}
	if got := count(t, path, `SELECT COUNT(*) FROM push_batch`); got != 1 {
		t.Errorf("%d batches applied, want only the good one", got)
	}
}

func TestPlainHTTPBeyondLoopbackRefused(t *testing.T) {
	for _, tc := range []struct {
		url      string
		insecure bool
		ok       bool
	}{
		{"https://central.example:8080", false, true},
		{"http://127.0.0.1:8080", false, true},
		{"http://[::1]:8080", false, true},
		{"http://localhost:8080", false, true},
		{"http://central.example:8080", false, false},
		{"http://10.1.2.3:8080", false, false},
		{"http://central.example:8080", true, true},
		{"https://user:pw@central.example", false, false},
		{"ftp://central.example", false, false},
		{"central.example:8080", false, false},
	} {
		_, err := push.New(push.Options{URL: tc.url, Insecure: tc.insecure, Token: "rwc_x", Spool: t.TempDir()})
		if (err == nil) != tc.ok {
			t.Errorf("%s insecure=%v: %v, want ok=%v", tc.url, tc.insecure, err, tc.ok)
		}
		if err != nil && strings.Contains(err.Error(), "pw@") {
			t.Errorf("%s: the error shows the password: %v", tc.url, err)
		}
	}
}

// The client checks the server's certificate: without the CA that signed
// it, nothing is sent and the batch stays.
func TestUnknownCertificateRefused(t *testing.T) {
	db, _ := openDB(t)
	tok, _ := db.CreateCollectorToken(context.Background(), "zone-b")
	ts, _ := central(t, db)
	dir := t.TempDir()
	cl, err := push.New(push.Options{URL: ts.URL, Token: tok, Spool: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Records(context.Background(), "live", "A", feed(records(t))); err != nil {
		t.Fatal(err)
	}
	err = cl.SendAll(context.Background())
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("SendAll to an unknown certificate: %v, want a certificate error", err)
	}
	if n, _ := cl.Pending(); n != 1 {
		t.Errorf("%d pending, want 1", n)
	}
}

// Run keeps retrying, backing off, while the server refuses (503, as a
// proxy in front of a stopped serve answers), and delivers once it is back.
func TestRunRetriesUntilTheServerIsBack(t *testing.T) {
	db, path := openDB(t)
	tok, _ := db.CreateCollectorToken(context.Background(), "zone-b")
	srv := web.New(web.Config{DB: db, Push: sink{push.NewReceiver(db, ingest.LoaderOptions{}, nil)}})
	var down atomic.Bool
	down.Store(true)
	attempts := make(chan struct{}, 100)
	applied := make(chan struct{}, 10)
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			select {
			case attempts <- struct{}{}:
			default:
			}
			http.Error(w, `{"error":"down"}`, http.StatusServiceUnavailable)
			return
		}
		srv.Handler().ServeHTTP(w, r)
		applied <- struct{}{}
	}))
	defer ts.Close()
	cl, err := push.New(push.Options{URL: ts.URL, Token: tok, Spool: t.TempDir(), CAFile: caFile(t, ts),
		MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c := records(t)
	if _, err := cl.Records(context.Background(), "live", "SQLPROD01\\PROD", feed(c)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); cl.Run(ctx) }()
	defer func() { cancel(); <-done }()
	for range 3 {
		select {
		case <-attempts:
		case <-time.After(guard):
			t.Fatal("the client stopped retrying")
		}
	}
	if n, _ := cl.Pending(); n != 1 {
		t.Fatalf("%d pending while the server is down, want 1", n)
	}
	down.Store(false)
	select {
	case <-applied:
	case <-time.After(guard):
		t.Fatal("the batch was not delivered once the server was back")
	}
	if got := count(t, path, `SELECT COUNT(*) FROM log_restore`); got != len(c.LogRestores) {
		t.Errorf("central holds %d log records, want %d", got, len(c.LogRestores))
	}
	// A new pass wakes the sender (Derive), which delivers it too.
	if _, err := cl.Records(context.Background(), "live", "SQLPROD01\\PROD", feed(c)); err != nil {
		t.Fatal(err)
	}
	cl.Derive(context.Background())
	select {
	case <-applied:
	case <-time.After(guard):
		t.Fatal("a pass spooled after the reconnection was not sent")
	}
}

// guard bounds a wait for an event the code must produce; reaching it is a
// failure.
const guard = 20 * time.Second
