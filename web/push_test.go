package web_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/storetest"
	"github.com/restorewatch/restorewatch/web"
)

// fakePush accepts one collector token and counts the bodies it is handed.
type fakePush struct {
	bodies atomic.Int64
}

const collectorToken = "rwc_0123456789012345678901234567890123456789abc"

func (f *fakePush) Collector(_ context.Context, token string) (string, error) {
	if token == collectorToken {
		return "zone-b", nil
	}
	return "", store.Errorf(store.ENOTFOUND, "unknown or revoked collector token")
}

func (f *fakePush) Push(_ context.Context, _ string, r io.Reader) (web.PushResult, error) {
	f.bodies.Add(1)
	b, err := io.ReadAll(r)
	if err != nil {
		return web.PushResult{}, err
	}
	if string(b) == "bad" {
		return web.PushResult{}, store.Errorf(store.EINVALID, "push batch line 1: not a batch")
	}
	return web.PushResult{Batch: "b1", Status: "applied", Records: 1}, nil
}

func pushReq(t *testing.T, base, auth, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/api/push", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The push endpoint takes collector tokens, not the dashboard's: with a
// dashboard token set (as beyond loopback), a collector's token still
// reaches the handler, and the dashboard's own token is refused there.
func TestPushTakesCollectorTokensOnly(t *testing.T) {
	sink := &fakePush{}
	_, ts := serve(t, web.Config{DB: storetest.Open(t), Token: "dashboard-token", ProtectReads: true, Push: sink})
	if code, body := pushReq(t, ts.URL, "Bearer "+collectorToken, "batch"); code != http.StatusOK || !strings.Contains(body, `"status":"applied"`) {
		t.Errorf("collector token: %d %s", code, body)
	}
	for _, auth := range []string{"Bearer dashboard-token", "Basic " + "dXNlcjpkYXNoYm9hcmQtdG9rZW4=", "", "Bearer "} {
		if code, _ := pushReq(t, ts.URL, auth, "batch"); code != http.StatusUnauthorized {
			t.Errorf("%q: %d, want 401", auth, code)
		}
	}
	if n := sink.bodies.Load(); n != 1 {
		t.Errorf("the sink was handed %d bodies, want only the authenticated one", n)
	}
	// A malformed batch is a 400 with the reason, as JSON.
	if code, body := pushReq(t, ts.URL, "Bearer "+collectorToken, "bad"); code != http.StatusBadRequest || !strings.Contains(body, "not a batch") {
		t.Errorf("bad batch: %d %s", code, body)
	}
}

// Wrong tokens drain the address's bucket: once empty, even the right
// token waits (429), as for the dashboard's token.
func TestPushWrongTokensAreRateLimited(t *testing.T) {
	sink := &fakePush{}
	_, ts := serve(t, web.Config{DB: storetest.Open(t), Push: sink})
	limited := false
	for i := 0; i < 30 && !limited; i++ {
		code, _ := pushReq(t, ts.URL, "Bearer rwc_wrong", "batch")
		limited = code == http.StatusTooManyRequests
	}
	if !limited {
		t.Fatal("30 wrong tokens in a row were never refused with 429")
	}
	if code, _ := pushReq(t, ts.URL, "Bearer "+collectorToken, "batch"); code != http.StatusTooManyRequests {
		t.Errorf("the right token after the bucket emptied: %d, want 429", code)
	}
}

// A server without a push sink says so; a body over the limit is refused
// from its length before it is read.
func TestPushUnavailableAndTooLarge(t *testing.T) {
	_, ts := serve(t, web.Config{DB: storetest.Open(t)})
	if code, _ := pushReq(t, ts.URL, "Bearer "+collectorToken, "batch"); code != http.StatusNotFound {
		t.Errorf("no sink: %d, want 404", code)
	}
	sink := &fakePush{}
	_, ts = serve(t, web.Config{DB: storetest.Open(t), Push: sink})
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/api/push", strings.NewReader("x"))
	req.ContentLength = 64 << 20
	req.Header.Set("Authorization", "Bearer "+collectorToken)
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("64 MiB declared: %d, want 413", resp.StatusCode)
		}
	}
	if n := sink.bodies.Load(); n != 0 {
		t.Errorf("an oversized batch reached the sink")
	}
}
