package web_test

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web"
)

// Security round four (issue 40) at the dashboard's doors.

// An X-Forwarded-For entry with a port names its client, and one that
// names no address ("unknown") is not charged to the proxy: before, both
// fell back to the proxy, so one client's wrong tokens locked out everyone
// behind it.
func TestForwardedForParsedStrictly(t *testing.T) {
	_, loop, _ := net.ParseCIDR("127.0.0.1/32")
	for _, bad := range []string{"203.0.113.5:4711", "unknown", "[2001:db8::5]:443", "unknown, 203.0.113.5:1"} {
		_, ts := serve(t, web.Config{DB: demoDB(t), Token: "dashboard-token", TrustedProxies: []*net.IPNet{loop}})
		for range 12 {
			send(t, http.MethodPost, ts.URL+"/regressions/1/status", "wrong", bad)
		}
		if code := send(t, http.MethodPost, ts.URL+"/regressions/1/status", "wrong", "203.0.113.6"); code != http.StatusUnauthorized {
			t.Errorf("X-Forwarded-For %q: another client's wrong token after 12 of its: %d, want 401", bad, code)
		}
		if code := send(t, http.MethodPost, ts.URL+"/regressions/1/status", "wrong", bad); code != http.StatusTooManyRequests {
			t.Errorf("X-Forwarded-For %q: its own 13th wrong token: %d, want 429", bad, code)
		}
	}
}

// Plans the cache cannot serve are charged to the address that asks (each
// costs ~85 ms of CPU); a plan another request made is free. A new
// data_path no longer makes a new plan.
func TestNewPlansAreRateLimitedPerAddress(t *testing.T) {
	db := demoDB(t)
	cfg := webConfig(db)
	cfg.PlanBurst, cfg.PlanEvery = 10, time.Hour // a bucket the test's pace cannot refill
	_, ts := serve(t, cfg)
	c := client(t)
	series, err := db.ListSeries(t.Context(), store.SeriesFilter{Instance: "LNX-SQL05"})
	if err != nil || len(series) == 0 {
		t.Fatalf("LNX-SQL05's series: %v", err)
	}
	base := ts.URL + "/api/plan?" + url.Values{"instance": {"LNX-SQL05"}, "database": {series[0].Database}}.Encode()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	// One plan, many folders: one plan made.
	for i := range 60 {
		if code, body, _ := get(t, c, base+"&data_path="+url.QueryEscape(`E:\Data\d`+strings.Repeat("x", i))); code != http.StatusOK {
			t.Fatalf("folder %d: %d %.200s", i, code, body)
		}
	}
	// 16 clients' worth of new plans at once, from one address.
	var limited, made atomic.Int64
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := range 8 {
				code, _, _ := get(t, c, base+"&at="+t0.Add(time.Duration(w*8+i)*time.Minute).Format(time.RFC3339))
				switch code {
				case http.StatusTooManyRequests:
					limited.Add(1)
				case http.StatusOK, http.StatusUnprocessableEntity:
					made.Add(1)
				default:
					t.Errorf("at %d: %d", w*8+i, code)
				}
			}
		})
	}
	wg.Wait()
	if limited.Load() != 128-9 || made.Load() != 9 {
		t.Errorf("128 new plans at once from one address: %d made, %d refused; want the burst made (10, one spent above) and the rest refused",
			made.Load(), limited.Load())
	}
}

// Every door refuses what a plan cannot have with a 4xx and the reason:
// an instant beyond the dates restorewatch keeps (it answered 500), a
// folder holding $( or a line break, a folder that is not absolute; an
// over-long query or name; and HEAD answers as GET.
func TestDoorsRefuseWithReasons(t *testing.T) {
	_, ts := serve(t, webConfig(demoDB(t)))
	c := client(t)
	plan := ts.URL + "/api/plan?instance=LNX-SQL05&database=Orders"
	for _, tc := range []struct{ q, want string }{
		{"&at=" + url.QueryEscape("9999-12-31T23:59:59-01:00"), "outside"},
		{"&at=" + url.QueryEscape("1700-01-01T00:00:00Z"), "outside"},
		{"&data_path=" + url.QueryEscape(`\\evil.example\s\$(SQLCMDPASSWORD)`), "$("},
		{"&log_path=" + url.QueryEscape("L:\\Log\nGO\nSHUTDOWN"), "control"},
		{"&data_path=" + url.QueryEscape(`Data`), "absolute"},
	} {
		code, body, _ := get(t, c, plan+tc.q)
		if code != http.StatusBadRequest || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %.300s, want 400 saying %q", tc.q, code, body, tc.want)
		}
	}
	if code, _, _ := get(t, c, ts.URL+"/api/restores?database="+strings.Repeat("a", 513)); code != http.StatusBadRequest {
		t.Errorf("a 513-character name: %d, want 400", code)
	}
	if code, _, _ := get(t, c, ts.URL+"/api/restores?x="+strings.Repeat("a", 5000)); code != http.StatusRequestURITooLong {
		t.Errorf("a 5,000-byte query: %d, want 414", code)
	}
	// A 512-character name that matches nothing is compared with every
	// stored name, but only by their first 128 characters: quick.
	start := time.Now()
	if code, _, _ := get(t, c, ts.URL+"/api/restores?database="+strings.Repeat("q", 512)); code >= 500 {
		t.Errorf("a 512-character name: %d", code)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a 512-character name took %v", d)
	}
	req, _ := http.NewRequest(http.MethodHead, ts.URL+"/", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") == "" {
		t.Errorf("HEAD /: %d %v, want 200 with GET's headers", resp.StatusCode, resp.Header)
	}
}
