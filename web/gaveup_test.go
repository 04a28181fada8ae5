package web_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web"
)

// slowInstances is the warehouse with a list of instances that takes until
// the request gives up, as a first view after a restart of a large
// warehouse once did.
type slowInstances struct {
	web.Store
	once    *sync.Once
	started chan struct{}
}

func (s slowInstances) ListInstances(ctx context.Context, name string) ([]store.InstanceSummary, error) {
	s.once.Do(func() { close(s.started) })
	<-ctx.Done()
	return nil, ctx.Err()
}

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

// A client that gives up is not a server error: the log says it went away
// and records no failed request (issue 32: 8 of 200 first views at 10 M
// were logged as 500 "context canceled").
func TestClientThatGivesUpIsNotAServerError(t *testing.T) {
	var logs lockedBuffer
	started := make(chan struct{})
	cfg := webConfig(demoDB(t))
	cfg.DB = slowInstances{Store: cfg.DB, once: new(sync.Once), started: started}
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	_, ts := serve(t, cfg)
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/instances", nil)
	go func() {
		<-started
		cancel()
	}()
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the request was answered (%d) although the client gave up", resp.StatusCode)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "client went away") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if out := logs.String(); !strings.Contains(out, "client went away") || strings.Contains(out, "request failed") {
		t.Errorf("log:\n%s", out)
	}
}
