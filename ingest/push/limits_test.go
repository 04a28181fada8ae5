package push_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/ingest/push"
	"github.com/restorewatch/restorewatch/store"
)

// rawBatch gzips a header naming instance and the record lines, as a
// collector (or an attacker holding its token) would send them.
func rawBatch(t testing.TB, instance string, lines ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	fmt.Fprintf(gz, `{"restorewatch_push":1,"batch":"%032x","source":"live","name":%q,"records":%d}`+"\n",
		time.Now().UnixNano(), instance, len(lines))
	for _, l := range lines {
		io.WriteString(gz, l+"\n")
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// backupLine is a backup set line with the given media and files arrays.
func backupLine(instance, media, files string) string {
	return fmt.Sprintf(`{"backup":{"instance":%q,"database":"Sales","backup_set_uuid":"5B0C1E1A-0000-4000-8000-000000000001","type":"D",`+
		`"first_lsn":"1000","last_lsn":"2000","backup_start":"2026-03-01T01:00:00Z","backup_finish":"2026-03-01T01:10:00Z",`+
		`"media":%s,"files":%s}}`, instance, media, files)
}

// The amplification of issue 28: a backup set whose files array holds
// empty objects (3 bytes of JSON, a 72-byte struct each). Refused with 413
// as the line is scanned, before it is decoded: one set beyond SQL
// Server's 32,767 files, or many sets within it whose total is beyond the
// batch's budget.
func TestAmplifiedBatchRefusedBeforeDecoding(t *testing.T) {
	db, _ := openDB(t)
	tok, _ := db.CreateCollectorToken(context.Background(), "zone-b")
	ts, _ := central(t, db)
	empties := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("{},", n), ",") + "]" }
	one := rawBatch(t, "SQLB01", backupLine("SQLB01", "[]", empties(40_000)))
	many := make([]string, 20)
	for i := range many {
		many[i] = backupLine("SQLB01", "[]", empties(30_000))
	}
	for name, body := range map[string][]byte{"one set of 40,000 files": one, "20 sets of 30,000": rawBatch(t, "SQLB01", many...)} {
		_, err := push.Decode(bytes.NewReader(body))
		if !errors.Is(err, push.ErrTooLarge) {
			t.Errorf("%s: Decode: %v, want ErrTooLarge", name, err)
		}
		if code, _ := postStatus(t, ts, tok, bytes.NewReader(body), int64(len(body))); code != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: pushed: %d, want 413", name, code)
		}
	}
}

// Per-record limits: SQL Server's own (64 media families) and the length
// of one string; a refused set is named by its line, and the message does
// not start with an empty origin (": backup set:").
func TestRecordLimitsNameTheLine(t *testing.T) {
	media := make([]string, 70)
	for i := range media {
		media[i] = fmt.Sprintf(`{"family_sequence_number":%d,"physical_device_name":"X:\\b%d.bak"}`, i+1, i)
	}
	for name, tc := range map[string]struct {
		line, want string
	}{
		"70 stripes":   {backupLine("SQLB01", "["+strings.Join(media, ",")+"]", "[]"), "70 media families"},
		"long string":  {backupLine("SQLB01", `[{"physical_device_name":"`+strings.Repeat("x", 40<<10)+`"}]`, "[]"), "a string of"},
		"year 9999":    {strings.Replace(backupLine("SQLB01", "[]", "[]"), "2026-03-01T01:10:00Z", "9999-12-31T23:59:59-23:59", 1), "backup_finish_date"},
		"time_zone 99": {strings.Replace(backupLine("SQLB01", "[]", "[]"), `"type":"D",`, `"type":"D","utc_offset":5940,`, 1), "time_zone"},
	} {
		_, err := push.Decode(bytes.NewReader(rawBatch(t, "SQLB01", tc.line)))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "push batch line 2: ") || strings.Contains(err.Error(), ": : ") {
			t.Errorf("%s: %v, want an error of line 2 naming %q", name, err, tc.want)
		}
	}
	// A tag's value is bounded in the header too.
	tagged := taggedBatch(t, "SQLB01", map[string]string{"rto": strings.Repeat("9", 2000)})
	if _, err := push.Decode(bytes.NewReader(tagged)); err == nil || !strings.Contains(err.Error(), "tag") {
		t.Errorf("a 2,000-byte tag value: %v", err)
	}
}

// gate is a request body that blocks until opened and counts the pushes
// that began reading it.
type gate struct {
	r       io.Reader
	open    chan struct{}
	started *atomic.Int64
	once    atomic.Bool
}

func (g *gate) Read(p []byte) (int, error) {
	if g.once.CompareAndSwap(false, true) {
		g.started.Add(1)
	}
	<-g.open
	return g.r.Read(p)
}

// At most push.Decoding pushes hold a batch at once: a further push does
// not read its body until one of them is done.
func TestConcurrentPushesBounded(t *testing.T) {
	db, _ := openDB(t)
	rcv := push.NewReceiver(db, ingest.LoaderOptions{}, nil)
	var started atomic.Int64
	n := push.Decoding + 1
	gates := make([]*gate, n)
	done := make(chan error, n)
	for i := range gates {
		gates[i] = &gate{r: bytes.NewReader(rawBatch(t, fmt.Sprintf("SQLB%02d", i))), open: make(chan struct{}), started: &started}
		go func() { _, err := rcv.Push(context.Background(), "zone-b", gates[i]); done <- err }()
	}
	deadline := time.Now().Add(guard)
	for started.Load() < int64(push.Decoding) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // give a push beyond the bound the chance to start
	if got := started.Load(); got != int64(push.Decoding) {
		t.Fatalf("%d pushes reading at once, want %d", got, push.Decoding)
	}
	for _, g := range gates {
		close(g.open)
	}
	for range n {
		if err := <-done; err != nil && store.ErrorCode(err) != store.EFORBIDDEN {
			t.Error(err)
		}
	}
	if got := started.Load(); got != int64(n) {
		t.Errorf("%d pushes read in the end, want %d", got, n)
	}
}
