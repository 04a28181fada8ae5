package web_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/sqlite"
	"github.com/restorewatch/restorewatch/web"
	"github.com/restorewatch/restorewatch/web/view"
)

// TestPerfWarehouse measures every page against a large warehouse named by
// RW_PERF_DB (for example one built by `go run ./bench/fleet build`), with
// 8 clients for RW_PERF_DURATION (default 20s), and reports p50/p95 per
// page. It is a development aid; bench/dashboard.sh is the benchmark of
// record. Skipped without RW_PERF_DB.
func TestPerfWarehouse(t *testing.T) {
	path := os.Getenv("RW_PERF_DB")
	if path == "" {
		t.Skip("RW_PERF_DB not set")
	}
	dur, err := time.ParseDuration(os.Getenv("RW_PERF_DURATION"))
	if err != nil {
		dur = 20 * time.Second
	}
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, ts := serve(t, web.Config{DB: db, Now: time.Now})
	urls := perfURLs(t, db)
	c := &http.Client{Timeout: 5 * time.Minute}
	fetch := func(u string) (time.Duration, int) {
		start := time.Now()
		resp, err := c.Get(ts.URL + u)
		if err != nil {
			return time.Since(start), 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(start), resp.StatusCode
	}
	for _, u := range urls {
		d, code := fetch(u)
		t.Logf("cold %-60.60s %d %8.1f ms", u, code, float64(d.Microseconds())/1000)
	}
	var mu sync.Mutex
	lat := map[string][]time.Duration{}
	var wg sync.WaitGroup
	deadline := time.Now().Add(dur)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; time.Now().Before(deadline); i++ {
				u := urls[i%len(urls)]
				d, code := fetch(u)
				if code != http.StatusOK {
					t.Errorf("GET %s = %d", u, code)
				}
				mu.Lock()
				lat[u] = append(lat[u], d)
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	keys := make([]string, 0, len(lat))
	for k := range lat {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ds := lat[k]
		slices.Sort(ds)
		p := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))].Microseconds()) / 1000 }
		flag := ""
		if p(0.95) > 100 {
			flag = "  > 100 ms"
		}
		t.Logf("%-60.60s n=%4d p50 %7.1f ms p95 %7.1f ms%s", k, len(ds), p(0.5), p(0.95), flag)
	}
}

func perfURLs(t *testing.T, db warehouse) []string {
	t.Helper()
	ctx := context.Background()
	is, err := db.ListInstances(ctx, "")
	if err != nil || len(is) < 2 {
		t.Fatalf("instances: %v", err)
	}
	slices.SortFunc(is, func(a, b store.InstanceSummary) int { return b.Restores - a.Restores })
	rs, _, err := db.ListRestores(ctx, store.RestoreFilter{Instance: is[0].Name, Limit: 1})
	if err != nil || len(rs) == 0 {
		t.Fatalf("restores: %v", err)
	}
	urls := []string{"/", "/restores", view.RestoresURL("instance", is[0].Name), "/restores?sort=longest",
		"/restores?sort=slowest&kind=full", "/restores?page=50", view.RestoreURL(rs[0].ID), "/instances", view.InstanceURL(is[0].Name),
		view.DatabaseURL(is[0].Name, rs[0].Database), "/regressions", "/builds", view.CompareURL(is[0].Name, is[1].Name),
		"/api/restores?instance=" + url.QueryEscape(is[0].Name), "/api/regressions", "/api/instances", "/api/builds", "/healthz"}
	if regs, _ := db.ListRegressions(ctx, store.RegressionFilter{}); len(regs) > 0 {
		urls = append(urls, view.RegressionURL(regs[0].ID), view.RegressionReportURL(regs[0].ID))
	}
	if len(is[0].Build) > 0 {
		urls = append(urls, view.RestoresURL("build", is[0].Build))
	}
	return urls
}
