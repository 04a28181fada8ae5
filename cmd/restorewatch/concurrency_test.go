package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/ingest/demo"
)

// busy are the words of SQLite's lock errors; neither a page nor a log line
// may ever show them while imports run (SPEC §7; STYLE: one writer
// connection and a separate read pool so pages stay fast while an import
// runs).
var busy = []string{"database is locked", "SQLITE_BUSY"}

// TestImportsWhileServing serves a warehouse holding a demo fleet's history
// while two imports write to it, as two `restorewatch import` runs beside
// `restorewatch serve` would (each import opens the warehouse itself): the
// demo's error logs and captured messages, and a second history CSV. Eight
// clients read pages the whole time. No response may be a 5xx, no body or
// log line may mention a lock, and the restores afterwards must equal, ids
// aside, those of a warehouse that ran the same imports one after another.
func TestImportsWhileServing(t *testing.T) {
	if testing.Short() {
		t.Skip("serves and imports a demo fleet concurrently (under a minute)")
	}
	// A bound, not a target: the race detector makes the test three times slower.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := t.TempDir()
	fleet, err := demo.Generate(demo.Config{Instances: 12, Restores: 2000, Seed: 1, Dir: filepath.Join(dir, "demo")})
	if err != nil {
		t.Fatal(err)
	}
	var seed, logs []demo.File
	var instances []string
	for _, f := range fleet.Files {
		switch f.Kind {
		case ingest.History:
			seed = append(seed, f)
		default:
			logs = append(logs, f)
			if f.Kind == ingest.ErrorLog && !slices.Contains(instances, f.Instance) {
				instances = append(instances, f.Instance)
			}
		}
	}
	if len(seed) != 1 || len(logs) == 0 || len(instances) == 0 {
		t.Fatalf("demo wrote %d history files, %d others, %d instances", len(seed), len(logs), len(instances))
	}
	batch := []demo.File{{Kind: ingest.History, Path: writeHistoryBatch(t, dir, instances[:4])}}

	// The reference: the same imports, one after another.
	began := time.Now()
	seq := newDB(t, "sequential.db")
	for _, files := range [][]demo.File{seed, logs, batch} {
		if err := importFiles(ctx, seq, files); err != nil {
			t.Fatalf("sequential import: %v", err)
		}
	}

	t.Logf("sequential imports: %.1f s", time.Since(began).Seconds())
	began = time.Now()

	// The live warehouse holds the history, served while the rest imports.
	live := newDB(t, "live.db")
	if err := importFiles(ctx, live, seed); err != nil {
		t.Fatalf("seed import: %v", err)
	}
	var logBuf lockedBuffer
	m := NewMain()
	m.Stdout, m.Stderr, m.IsTerminal = &logBuf, &logBuf, false
	m.Logger = slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if err := m.ParseFlags([]string{"serve", "--db", live, "--addr", "127.0.0.1:0"}); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	m.cli.Serve.ready = ready
	serveCtx, stopServe := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- m.Run(serveCtx) }()
	var base string
	select {
	case addr := <-ready:
		base = "http://" + addr
	case err := <-served:
		t.Fatalf("serve stopped before listening: %v\n%s", err, logBuf.String())
	case <-ctx.Done():
		t.Fatal("serve did not start")
	}
	defer func() {
		stopServe()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
		if err := m.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()

	pages := []string{"/", "/restores", "/regressions", "/builds", "/instances/" + url.PathEscape(instances[0]),
		"/api/restores?instance=" + url.QueryEscape(instances[1])}
	importsDone := make(chan struct{})
	var importErrs [2]error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); importErrs[0] = importFiles(ctx, live, logs) }()
	go func() { defer wg.Done(); importErrs[1] = importFiles(ctx, live, batch) }()
	go func() { wg.Wait(); close(importsDone) }()

	var mu sync.Mutex
	var failures []string
	requests := 0
	fail := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, a...))
		}
	}
	client := &http.Client{Timeout: 60 * time.Second}
	var clients sync.WaitGroup
	for c := range 8 {
		clients.Add(1)
		go func() {
			defer clients.Done()
			for round := 0; ; round++ {
				// Every client keeps reading until the imports end, then makes one more round.
				select {
				case <-importsDone:
					if round > 0 {
						return
					}
				default:
				}
				if ctx.Err() != nil {
					return
				}
				for i := range pages {
					p := pages[(i+c)%len(pages)]
					status, body, err := get(ctx, client, base+p)
					mu.Lock()
					requests++
					mu.Unlock()
					switch {
					case err != nil:
						fail("GET %s: %v", p, err)
					case status >= 500:
						fail("GET %s: status %d: %.300s", p, status, body)
					case status != http.StatusOK:
						// Not the bar, but a 404 would mean the page was never really read.
						fail("GET %s: status %d, want 200", p, status)
					}
					for _, w := range busy {
						if strings.Contains(body, w) {
							fail("GET %s: body mentions %q", p, w)
						}
					}
				}
			}
		}()
	}
	<-importsDone
	t.Logf("concurrent imports: %.1f s", time.Since(began).Seconds())
	clients.Wait()

	for i, err := range importErrs {
		if err != nil {
			t.Errorf("concurrent import %d: %v", i+1, err)
		}
	}
	for _, f := range failures {
		t.Error(f)
	}
	for _, line := range strings.Split(logBuf.String(), "\n") {
		for _, w := range busy {
			if strings.Contains(line, w) {
				t.Errorf("log line mentions %q: %s", w, line)
			}
		}
	}
	t.Logf("%d page requests while the imports ran", requests)
	if requests < len(pages)*8 {
		t.Errorf("only %d page requests were made", requests)
	}

	want := restoresJSON(t, seq)
	got := restoresJSON(t, live)
	t.Logf("%d restores", len(want))
	if len(got) != len(want) {
		t.Errorf("concurrent imports left %d restores, sequential ones %d", len(got), len(want))
	}
	shown := 0
	for i := 0; i < min(len(got), len(want)) && shown < 5; i++ {
		if got[i] != want[i] {
			t.Errorf("restore %d differs:\nconcurrent: %s\nsequential: %s", i, got[i], want[i])
			shown++
		}
	}
}

// importFiles opens the warehouse, imports the files in order through
// ingest.ImportFile (as `restorewatch import` does) and closes it.
func importFiles(ctx context.Context, path string, files []demo.File) error {
	db, err := openWarehouse(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, f := range files {
		var opt ingest.Options
		if f.Kind == ingest.Messages {
			opt.Instance = f.Instance // client output never names its server
		}
		sum, err := ingest.ImportFile(ctx, db, f.Kind, f.Path, opt)
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(f.Path), err)
		}
		if len(sum.Rejects) > 0 {
			return fmt.Errorf("%s: %d rejected lines, first %s", filepath.Base(f.Path), len(sum.Rejects), sum.Rejects[0])
		}
	}
	return nil
}

// writeHistoryBatch writes a second history export: 150 restores for each of
// the given demo instances and for two instances the demo does not have,
// with restore_history_ids far above the demo's.
func writeHistoryBatch(t *testing.T, dir string, instances []string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(strings.Join(demo.HistoryHeader, ",") + "\r\n")
	start := time.Date(2025, 1, 6, 1, 0, 0, 0, time.UTC)
	for i, in := range append(instances, "CONC-SQL01", `CONC-SQL02\REPORTING`) {
		for k := range 150 {
			at := start.Add(time.Duration(k)*24*time.Hour + time.Duration(i)*time.Minute)
			lsn := int64(7000+k)*1_000_000_000_000_000 + int64(i+1)*100_000
			db := fmt.Sprintf("ConcBatch_%d", k%3)
			fmt.Fprintf(&b, `"%s",%d,%s,"%s","CORP\svc_restore",D,1,1,NULL,1,%08X-0000-4000-8000-%012X,`+
				`%08X-1111-4000-8000-000000000000,"SRC%02d","SRC%02d","%s",D,%s,%s,%d,%d,%d,%d,15,0,4236,0,1,NULL,1,2,`+
				`"\\nas09\sql\%s_%d.bak",NULL`+"\r\n",
				in, 900_000_000+i*1000+k, at.Format("2006-01-02 15:04:05.000"), db, i, k, i, i, i, db,
				at.Add(-5*time.Hour).Format("2006-01-02 15:04:05.000"), at.Add(-4*time.Hour).Format("2006-01-02 15:04:05.000"),
				lsn+1, lsn+9_001, int64(20+k%5)<<30, int64(6+k%5)<<30, db, k)
		}
	}
	path := filepath.Join(dir, "second-batch.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// restoresJSON lists a warehouse's restores as `restorewatch restores
// --format json` prints them, each without its id, sorted.
func restoresJSON(t *testing.T, path string) []string {
	t.Helper()
	out, stderr, code := runMain(t, "restores", "--db", path, "--format", "json", "--all")
	if code != 0 {
		t.Fatalf("restores --db %s: exit %d: %s", path, code, stderr)
	}
	var rows []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("restores --db %s: %v", path, err)
	}
	list := make([]string, len(rows))
	for i, r := range rows {
		delete(r, "id")
		b, err := json.Marshal(r) // map keys marshal sorted
		if err != nil {
			t.Fatal(err)
		}
		list[i] = string(b)
	}
	slices.Sort(list)
	return list
}

func get(ctx context.Context, c *http.Client, u string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, string(body), errors.Join(errors.New("reading the body"), err)
	}
	return resp.StatusCode, string(body), nil
}

// lockedBuffer is a bytes.Buffer safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
