package web_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/web"
)

// send makes a request with a Bearer token and an optional X-Forwarded-For.
func send(t *testing.T, method, url, tok, xff string) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader("x"))
	req.Header.Set("Authorization", "Bearer "+tok)
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Wrong dashboard tokens from an address (issue 28 item 5) do not lock
// out a valid collector pushing from the same address: the two have
// buckets of their own.
func TestWrongDashboardTokensDoNotStopPushes(t *testing.T) {
	_, ts := serve(t, web.Config{DB: demoDB(t), Token: "dashboard-token", Push: &fakePush{}})
	last := 0
	for range 15 {
		last = send(t, http.MethodPost, ts.URL+"/regressions/1/status", "wrong", "")
	}
	if last != http.StatusTooManyRequests {
		t.Fatalf("the 15th wrong dashboard token: %d, want 429", last)
	}
	if code := send(t, http.MethodPost, ts.URL+"/api/push", collectorToken, ""); code != http.StatusOK {
		t.Errorf("a valid collector's push after wrong dashboard tokens: %d, want 200", code)
	}
}

// Behind a trusted proxy the client its X-Forwarded-For names has the
// bucket: one client's wrong tokens do not lock out the others. From an
// untrusted peer the header is ignored (a client cannot pick its bucket).
func TestTrustedProxyNamesTheClient(t *testing.T) {
	_, loop, _ := net.ParseCIDR("127.0.0.1/32")
	for _, tc := range []struct {
		name    string
		proxies []*net.IPNet
		want    int
	}{
		{"trusted proxy", []*net.IPNet{loop}, http.StatusUnauthorized},
		{"no trusted proxy", nil, http.StatusTooManyRequests},
	} {
		_, ts := serve(t, web.Config{DB: demoDB(t), Token: "dashboard-token", TrustedProxies: tc.proxies})
		for range 12 {
			send(t, http.MethodPost, ts.URL+"/regressions/1/status", "wrong", "203.0.113.5")
		}
		if code := send(t, http.MethodPost, ts.URL+"/regressions/1/status", "wrong", "203.0.113.6"); code != tc.want {
			t.Errorf("%s: another client's wrong token after 12 of one client's: %d, want %d", tc.name, code, tc.want)
		}
	}
}

// Strict-Transport-Security on a TLS connection (issue 28 item 6), never
// on plain HTTP, where a browser ignores it.
func TestHSTSUnderTLS(t *testing.T) {
	s := web.New(web.Config{DB: demoDB(t)})
	tls := httptest.NewTLSServer(s.Handler())
	defer tls.Close()
	resp, err := tls.Client().Get(tls.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if h := resp.Header.Get("Strict-Transport-Security"); !strings.Contains(h, "max-age=") {
		t.Errorf("HTTPS without HSTS: %q", h)
	}
	_, plain := serve(t, web.Config{DB: demoDB(t)})
	_, _, h := get(t, client(t), plain.URL+"/healthz")
	if v := h.Get("Strict-Transport-Security"); v != "" {
		t.Errorf("plain HTTP with HSTS: %q", v)
	}
}
