package push_test

import (
	"context"
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
	"github.com/restorewatch/restorewatch/ingest/push"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web"
)

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
	if want := int64(len(c.Hosts) + len(c.LogRestores) + len(c.BackupSets)); sum.Read != want {
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
	if !reflect.DeepEqual(got.LogRestores, c.LogRestores) || !reflect.DeepEqual(got.Hosts, c.Hosts) ||
		!reflect.DeepEqual(got.BackupSets, c.BackupSets) {
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
