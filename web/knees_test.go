package web_test

import (
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/restorewatch/restorewatch/ingest/demo"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/storetest"
	"github.com/restorewatch/restorewatch/web"
	"github.com/restorewatch/restorewatch/web/view"
)

var hrefRe = regexp.MustCompile(`href="([^"]*)"`)

// links returns the same-origin links of a page, unescaped.
func links(body string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range hrefRe.FindAllStringSubmatch(body, -1) {
		u := html.UnescapeString(m[1])
		if strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "//") && !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	return out
}

// following is a client that follows redirects, as a browser does.
func following() *http.Client { return &http.Client{Timeout: 30 * time.Second} }

// TestLiveLinksAnswerForEveryName: restores in flight on an instance and of
// databases whose names hold backslashes, quotes, slashes and markup, known
// only from the collector's samples; every link /live shows answers 200,
// and the database page shows the curve and its knee.
func TestLiveLinksAnswerForEveryName(t *testing.T) {
	db := storetest.Open(t)
	ctx := t.Context()
	inst := `SQL\PROD'S "EU"`
	im, err := db.NewImport(ctx, "test", "host")
	if err != nil {
		t.Fatal(err)
	}
	zero := 0
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if err := im.Host(store.HostSnapshot{Instance: inst, ObservedAt: now.Add(-24 * time.Hour), UTCOffset: &zero,
		Version: "13.0.4474.0", Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := im.CommitAndReconcile(); err != nil {
		t.Fatal(err)
	}
	names := []string{`O'Brien "&" <b>`, `a\b/c ..`, `..`, `~x`}
	start := now.Add(-3 * time.Hour)
	for i := 0; i <= 120; i++ {
		at := start.Add(time.Duration(i) * 90 * time.Second)
		var samples []store.InflightSample
		for s, name := range names {
			p := float64(i) * 55 / 40 // 55 % at sample 40, then ten times slower
			if i > 40 {
				p = 55 + float64(i-40)*55/400
			}
			samples = append(samples, store.InflightSample{Instance: inst, Database: name, SessionID: int64(60 + s),
				Command: "RESTORE DATABASE", Statement: "RESTORE DATABASE [x] FROM DISK = N'\\\\nas\\it''s.bak'", Start: start,
				SampledAt: at, Percent: p, WaitType: "BACKUPIO"})
		}
		if err := db.AddInflightSamples(ctx, inst, samples); err != nil {
			t.Fatal(err)
		}
	}
	_, ts := serve(t, web.Config{DB: db, Now: func() time.Time { return now }})
	c := following()
	code, body, _ := get(t, c, ts.URL+"/live")
	if code != http.StatusOK || strings.Count(body, "slowed after 55 %") < len(names) {
		t.Fatalf("/live: %d, %d knees; want 200 and one knee a restore", code, strings.Count(body, "slowed after 55 %"))
	}
	ls := links(body)
	for _, name := range names {
		want := view.DatabaseURL(inst, name)
		found := false
		for _, l := range ls {
			found = found || l == want
		}
		if !found {
			t.Errorf("/live does not link %q's page (%s)", name, want)
		}
	}
	for _, l := range ls {
		if code, _, _ := get(t, c, ts.URL+l); code != http.StatusOK {
			t.Errorf("/live links %s, which answers %d", l, code)
		}
	}
	for _, name := range names {
		_, page, _ := get(t, c, ts.URL+view.DatabaseURL(inst, name))
		if !strings.Contains(page, `id="progress"`) || !strings.Contains(page, "slowed after 55 %") || !strings.Contains(page, "known from the collector") {
			t.Errorf("the page of %q, known only in flight, lacks its curve or knee", name)
		}
	}
}

// TestDemoKneesReachableFromOverview: the overview lists the knees of seed
// 000 (the 16 TB restore in flight, and Billing's) and seed 002 (Archive's
// FileTable crawl), each a link to a page that states it; the API and the
// restores list carry the same findings.
func TestDemoKneesReachableFromOverview(t *testing.T) {
	db := demoDB(t)
	_, ts := serve(t, web.Config{DB: db, Now: func() time.Time { return demo.DefaultNow }})
	c := following()
	_, body, _ := get(t, c, ts.URL+"/")
	i := strings.Index(body, `id="overview-knees"`)
	if i < 0 {
		t.Fatal("the overview lists no knees")
	}
	table := body[i : i+strings.Index(body[i:], "</table>")]
	for _, tc := range []struct{ database, knee, issue string }{
		{"Warehouse", "55 %", "KB4088193"}, {"Billing", "55 %", "KB4088193"}, {"Archive", "92 %", ""},
	} {
		row := ""
		for _, r := range strings.Split(table, "<tr>") {
			if strings.Contains(r, ">"+tc.database+"</a>") {
				row = r
			}
		}
		if row == "" || !strings.Contains(row, tc.knee) || !strings.Contains(row, tc.issue) {
			t.Errorf("the overview's knee of %s: %q; want %s and %q", tc.database, row, tc.knee, tc.issue)
			continue
		}
		u := links(row)[0]
		code, page, _ := get(t, c, ts.URL+u)
		if code != http.StatusOK || !strings.Contains(page, "slowed after "+tc.knee) || !strings.Contains(page, "Why it may have slowed") {
			t.Errorf("%s's knee links %s (%d), which does not state it", tc.database, u, code)
		}
	}
	var ks []analysis.KneeFinding
	_, js, _ := get(t, c, ts.URL+"/api/knees")
	if err := json.Unmarshal([]byte(js), &ks); err != nil || len(ks) != 3 {
		t.Fatalf("/api/knees: %d findings, %v", len(ks), err)
	}
	if k := ks[0]; k.Database != "Warehouse" || !k.Running || k.Bytes != 16e12 || len(k.Issues) != 1 || k.Issues[0].ID != "KB4088193" {
		t.Errorf("/api/knees' newest: %+v; want the 16 TB Warehouse restore in flight, with KB4088193", k)
	}
	archive := ks[2]
	var rows []struct {
		ID   int64 `json:"id"`
		Knee *struct {
			Percent float64  `json:"percent"`
			Checks  []string `json:"checks"`
		} `json:"knee"`
	}
	_, js, _ = get(t, c, ts.URL+"/api/restores?"+url.Values{"instance": {archive.Instance}, "database": {"Archive"}, "kind": {"full"}, "limit": {"1000"}}.Encode())
	if err := json.Unmarshal([]byte(js), &rows); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		if r.Knee != nil {
			n++
			if r.ID != archive.RestoreID || r.Knee.Percent != 92 || len(r.Knee.Checks) == 0 || !strings.HasPrefix(r.Knee.Checks[0], "FILESTREAM") {
				t.Errorf("/api/restores' knee of restore %d: %+v; want restore %d's, at 92 %%, FILESTREAM first", r.ID, r.Knee, archive.RestoreID)
			}
		}
	}
	if n != 1 {
		t.Errorf("/api/restores of Archive: %d restores with a knee, want 1", n)
	}
	_, body, _ = get(t, c, ts.URL+view.RestoresURL("instance", archive.Instance))
	if !strings.Contains(body, `id="restores-knees"`) || !strings.Contains(body, "▼ slowed after 92 %") {
		t.Error("the restores list of the archive server neither lists nor marks its knee")
	}
	_, body, _ = get(t, c, ts.URL+view.InstanceURL(archive.Instance))
	if !strings.Contains(body, `id="instance-knees"`) {
		t.Error("the archive server's page does not list its knee")
	}
}

// TestDemoLiveStaysCurrent: while `serve --demo` serves, demo.SampleLive
// goes on sampling the running restore, so /live does not ask whether the
// collector is running; once that restore would have finished, the next
// one starts.
func TestDemoLiveStaysCurrent(t *testing.T) {
	db := copyDemo(t)
	ctx := t.Context()
	running := func() store.InflightCurve {
		t.Helper()
		cs, err := db.InflightCurves(ctx, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		var out []store.InflightCurve
		for _, c := range cs {
			if !c.Ended {
				out = append(out, c)
			}
		}
		if len(out) != 1 {
			t.Fatalf("%d restores in flight, want 1", len(out))
		}
		return out[0]
	}
	first := running()
	now := first.LastSeen.Add(20 * time.Minute)
	_, ts := serve(t, web.Config{DB: db, Now: func() time.Time { return now }})
	c := following()
	if _, body, _ := get(t, c, ts.URL+"/live"); !strings.Contains(body, "not sampled lately") {
		t.Fatal("twenty minutes unsampled, /live does not say so: the test would prove nothing")
	}
	if err := demo.SampleLive(ctx, db, now); err != nil {
		t.Fatal(err)
	}
	if _, body, _ := get(t, c, ts.URL+"/live"); strings.Contains(body, "not sampled lately") {
		t.Error("after a sample, /live still says the restore was not sampled lately")
	}
	if got := running(); !got.LastSeen.Equal(now) || got.Points[len(got.Points)-1].Percent <= first.Points[len(first.Points)-1].Percent {
		t.Errorf("sampled at %v to %.1f %%, want at %v and further than %.1f %%", got.LastSeen, got.Points[len(got.Points)-1].Percent,
			now, first.Points[len(first.Points)-1].Percent)
	}
	later := first.StartUTC.Add(13 * time.Hour)
	if err := demo.SampleLive(ctx, db, later); err != nil {
		t.Fatal(err)
	}
	if next := running(); !next.StartUTC.After(first.StartUTC) || !next.LastSeen.Equal(later) {
		t.Errorf("after the restore would have finished, the one in flight started %v (last seen %v); want a new one", next.StartUTC, next.LastSeen)
	}
}

// TestEvidenceNextSteps: demo regression 2 (seed 001's 4 h → 10 h, no
// recorded factor) ends with what to gather and how, on its page and in its
// report; a regression whose factor changed does not.
func TestEvidenceNextSteps(t *testing.T) {
	db := demoDB(t)
	_, ts := serve(t, webConfig(db))
	c := following()
	regs, err := db.ListRegressions(t.Context(), store.RegressionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var none, some int64
	for _, r := range regs {
		if len(r.ChangedFactors) == 0 && r.Database == "DW_Sales" {
			none = r.ID
		} else if len(r.ChangedFactors) > 0 {
			some = r.ID
		}
	}
	if none == 0 || some == 0 {
		t.Fatalf("the demo lacks a regression without a factor (%d) or with one (%d)", none, some)
	}
	for _, u := range []string{view.RegressionURL(none), view.RegressionReportURL(none)} {
		_, body, _ := get(t, c, ts.URL+u)
		for _, want := range []string{`id="next-steps"`, "Read latency and throughput of the backup share", "fltmc instances",
			"sys.dm_os_loaded_modules", "sys.dm_db_log_info(DB_ID(N&#39;DW_Sales&#39;))", "sys.master_files"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q", u, want)
			}
		}
	}
	if _, body, _ := get(t, c, ts.URL+view.RegressionURL(some)); !strings.Contains(body, `id="next-steps"`) || strings.Contains(body, "The warehouse lacks these facts") {
		t.Errorf("regression %d, whose factor changed, lists no next step about it (or asks for facts instead)", some)
	}
}

// TestBrowserOverviewToKnee follows a DBA's path in Chromium: the
// overview's knee of the 16 TB restore in flight, to its database's page,
// which states its rates and the known issue; then the FileTable crawl's
// knee, to its restore's page.
func TestBrowserOverviewToKnee(t *testing.T) {
	db := demoDB(t)
	b := newBrowser(t)
	_, ts := serve(t, web.Config{DB: db, Now: func() time.Time { return demo.DefaultNow }})
	b.do(t, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#overview-knees")),
		chromedp.Click(chromedp.CSS(`#overview-knees a[href*="/databases/Warehouse"]`)), chromedp.WaitVisible(chromedp.CSS("#progress")))
	if p := b.location(t).Path; !strings.HasSuffix(p, "/databases/Warehouse") {
		t.Fatalf("the Warehouse knee led to %s", p)
	}
	if txt := b.text(t, "#progress + section"); !strings.Contains(txt, "slowed after 55 %") || !strings.Contains(txt, "KB4088193") ||
		!strings.Contains(txt, "MiB/s →") || !strings.Contains(txt, "TiB") {
		t.Errorf("the Warehouse page's curve lacks its knee, rates, size or known issue: %.600s", txt)
	}
	b.shot(t, "knee-warehouse")
	b.do(t, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#overview-knees")),
		chromedp.Click(chromedp.CSS(`#overview-knees tr:has(a[href*="ARCH-SQL"]) th a`)), chromedp.WaitVisible(chromedp.CSS(".knee-finding")))
	if p := b.location(t).Path; !strings.HasPrefix(p, "/restores/") {
		t.Fatalf("the Archive knee led to %s", p)
	}
	if txt := b.text(t, ".knee-finding"); !strings.Contains(txt, "FILESTREAM / FileTable") || !strings.Contains(txt, "fltmc instances") {
		t.Errorf("the Archive restore's knee lacks the FileTable check: %.600s", txt)
	}
}
