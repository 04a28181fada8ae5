package web_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/storetest"
	"github.com/restorewatch/restorewatch/web"
	"github.com/restorewatch/restorewatch/web/view"
)

func TestEmptyWarehouseSaysWhatToDo(t *testing.T) {
	_, ts := serve(t, web.Config{DB: storetest.Open(t)})
	c := client(t)
	for _, p := range []string{"/", "/restores", "/instances", "/regressions", "/builds", "/compare", "/import",
		"/compare?a=build:1.0.0.0&b=x"} {
		code, body, _ := get(t, c, ts.URL+p)
		if code != http.StatusOK {
			t.Errorf("GET %s on an empty warehouse = %d: %.200s", p, code, body)
		}
		if p != "/import" && !strings.HasPrefix(p, "/compare") && !strings.Contains(body, "restorewatch demo") {
			t.Errorf("GET %s on an empty warehouse does not say how to load data", p)
		}
	}
	for _, p := range []string{"/api/restores", "/api/regressions", "/api/instances", "/api/builds"} {
		code, body, _ := get(t, c, ts.URL+p)
		if code != http.StatusOK || strings.TrimSpace(body) != "[]" {
			t.Errorf("GET %s on an empty warehouse = %d %q, want 200 []", p, code, body)
		}
	}
}

func TestNotFound(t *testing.T) {
	db := demoDB(t)
	_, ts := serve(t, web.Config{DB: db})
	c := client(t)
	for _, p := range []string{"/instances/NO-SUCH-SQL", view.DatabaseURL("NO-SUCH-SQL", "x"), view.DatabaseURL(hostileInstance, "nope"),
		"/regressions/987654", "/regressions/abc", "/restores/0", "/restores/987654321", "/reports/regressions/987654", "/nowhere"} {
		code, body, h := get(t, c, ts.URL+p)
		if code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", p, code)
		}
		if !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(body, "<nav") {
			t.Errorf("GET %s: the 404 is not a dashboard page", p)
		}
	}
	code, body, h := get(t, c, ts.URL+"/api/nothing")
	if code != http.StatusNotFound || !strings.HasPrefix(h.Get("Content-Type"), "application/json") || !strings.Contains(body, `"error"`) {
		t.Errorf("GET /api/nothing = %d %s %q, want a JSON 404", code, h.Get("Content-Type"), body)
	}
	for _, p := range []string{"/restores?kind=bogus", "/restores?from=yesterday", "/api/restores?to=31/12/2025", "/reports/builds?a=13.0.4474.0"} {
		if code, _, _ := get(t, c, ts.URL+p); code != http.StatusBadRequest {
			t.Errorf("GET %s = %d, want 400", p, code)
		}
	}
}

var hrefRE = regexp.MustCompile(`href="([^"]+)"`)

// TestHostileNamesAreEscapedAndRoundTrip follows the links the pages make
// for names holding markup, quotes, slashes and dot segments.
func TestHostileNamesAreEscapedAndRoundTrip(t *testing.T) {
	_, ts := serve(t, web.Config{DB: demoDB(t)})
	c := client(t)
	_, body, _ := get(t, c, ts.URL+"/instances")
	if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Fatal("the hostile instance is not listed, escaped")
	}
	visited := 0
	for _, m := range hrefRE.FindAllStringSubmatch(body, -1) {
		href := html.UnescapeString(m[1])
		if !strings.HasPrefix(href, view.InstanceURL(hostileInstance)) && !strings.HasPrefix(href, view.InstanceURL(slashInstance)) {
			continue
		}
		code, page, _ := get(t, c, ts.URL+href)
		if code != http.StatusOK {
			t.Fatalf("GET %s = %d", href, code)
		}
		visited++
		for _, dbm := range hrefRE.FindAllStringSubmatch(page, -1) {
			dhref := html.UnescapeString(dbm[1])
			if !strings.Contains(dhref, "/databases/") {
				continue
			}
			code, dpage, _ := get(t, c, ts.URL+dhref)
			if code != http.StatusOK {
				t.Fatalf("GET %s = %d", dhref, code)
			}
			if strings.Contains(dpage, "<script>alert") || strings.Contains(dpage, `O'Brien "&"`) {
				t.Errorf("GET %s: a name is not escaped", dhref)
			}
			visited++
		}
	}
	if visited < 9 {
		t.Errorf("followed %d links to hostile instances and databases, want at least 9", visited)
	}
	for name, want := range map[string]string{hostileDB: "O&#39;Brien &#34;&amp;&#34;", dotDB: "<h1>.. <span", slashDB: `a/b\c ..`} {
		_, page, _ := get(t, c, ts.URL+view.DatabaseURL(hostileInstance, name))
		if !strings.Contains(page, want) {
			t.Errorf("database %q: page lacks %q", name, want)
		}
	}
}

func TestRestoresFilters(t *testing.T) {
	db := demoDB(t)
	_, ts := serve(t, web.Config{DB: db})
	c := client(t)
	_, body, _ := get(t, c, ts.URL+view.RestoresURL("instance", hostileInstance))
	if !strings.Contains(body, "32 restores") {
		t.Errorf("filter on the hostile instance: want 32 restores")
	}
	_, body, _ = get(t, c, ts.URL+view.RestoresURL("instance", hostileInstance, "database", hostileDB, "from", "2025-04-30", "to", "2025-05-02"))
	if !strings.Contains(body, "3 restores") {
		t.Errorf("filter on database and dates: want the 3 restores of 2025-04-30..05-02")
	}
	var rows []map[string]any
	code, js, _ := get(t, c, ts.URL+"/api/restores?kind=log&limit=50")
	if code != http.StatusOK || json.Unmarshal([]byte(js), &rows) != nil || len(rows) != 50 {
		t.Fatalf("api kind=log limit=50: %d, %d rows", code, len(rows))
	}
	for _, r := range rows {
		if r["kind"] != "log" {
			t.Fatalf("kind=log returned a %v restore", r["kind"])
		}
	}
	// Pages: 100 rows each, the next link keeps the filters.
	_, body, _ = get(t, c, ts.URL+"/restores?kind=full")
	if n := strings.Count(body[strings.Index(body, `<table id="restores"`):], `<tr>`) - 1; n != 100 {
		t.Errorf("first page has %d rows, want 100", n)
	}
	if !strings.Contains(body, `href="/restores?kind=full&amp;page=2"`) {
		t.Error("the next-page link lost the filter")
	}
	if !strings.Contains(body, `href="/restores.csv?kind=full"`) {
		t.Error("the CSV link does not carry the filters")
	}
}

func TestCSVExportNeutralisesFormulas(t *testing.T) {
	_, ts := serve(t, web.Config{DB: demoDB(t)})
	code, body, h := get(t, client(t), ts.URL+strings.Replace(view.RestoresURL("instance", slashInstance), "/restores", "/restores.csv", 1))
	if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/csv") {
		t.Fatalf("CSV export: %d %s", code, h.Get("Content-Type"))
	}
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 33 || recs[0][0] != "id" {
		t.Fatalf("CSV export: %d records, header %v", len(recs), recs[0])
	}
	formulas := 0
	for _, r := range recs[1:] {
		for _, cell := range r {
			if cell != "" && strings.ContainsRune("=+@", rune(cell[0])) {
				t.Fatalf("cell %q would run as a spreadsheet formula", cell)
			}
			if strings.HasPrefix(cell, "'=") {
				formulas++
			}
		}
	}
	if formulas == 0 {
		t.Error("no neutralised formula found; the fixture has =cmd and =HYPERLINK values")
	}
}

func TestAPIShapes(t *testing.T) {
	_, ts := serve(t, web.Config{DB: demoDB(t)})
	c := client(t)
	decode := func(p string) []map[string]any {
		code, body, h := get(t, c, ts.URL+p)
		var out []map[string]any
		if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "application/json") || json.Unmarshal([]byte(body), &out) != nil || len(out) == 0 {
			t.Fatalf("GET %s: %d %s %.200s", p, code, h.Get("Content-Type"), body)
		}
		return out
	}
	has := func(what string, obj map[string]any, keys ...string) {
		for _, k := range keys {
			if _, ok := obj[k]; !ok {
				t.Errorf("%s lacks %q: %v", what, k, obj)
			}
		}
	}
	r := decode("/api/restores?limit=3")[0]
	has("restore", r, "instance", "database", "kind", "started_at", "finished_at", "duration_s", "duration_source", "backup_bytes",
		"compressed_bytes", "logical_mibps", "read_mibps", "instance_build", "source_server", "source_build", "compressed",
		"devices", "stripes", "buffer_count", "max_transfer_kib", "io_alignment")
	regs := decode("/api/regressions")
	g := regs[0]
	has("regression", g, "id", "instance", "database", "kind", "changed_at", "baseline_mibps", "current_mibps", "ratio",
		"baseline_n", "current_n", "p_value", "changed_factors", "known_issues")
	if _, err := time.Parse(time.RFC3339, g["changed_at"].(string)); err != nil {
		t.Errorf("changed_at is not RFC 3339: %v", g["changed_at"])
	}
	found := false
	for _, g := range regs {
		for _, f := range g["changed_factors"].([]any) {
			has("changed factor", f.(map[string]any), "factor", "before", "after")
			found = true
		}
		for _, k := range g["known_issues"].([]any) {
			if !strings.HasPrefix(k.(string), "KB") {
				t.Errorf("known issue %v is not a KB id", k)
			}
		}
	}
	if !found {
		t.Error("no regression names a changed factor")
	}
	has("instance", decode("/api/instances")[0], "name", "build", "release")
	has("cohort", decode("/api/builds")[0], "by", "build", "release", "n", "median", "ci_low", "ci_high")
	if code, body, _ := get(t, c, ts.URL+"/healthz"); code != http.StatusOK || !strings.Contains(body, `"ok"`) {
		t.Errorf("healthz: %d %s", code, body)
	}
}

func TestMetrics(t *testing.T) {
	_, ts := serve(t, web.Config{DB: demoDB(t)})
	c := client(t)
	get(t, c, ts.URL+"/")
	get(t, c, ts.URL+view.InstanceURL(hostileInstance))
	get(t, c, ts.URL+"/no/such")
	_, body, h := get(t, c, ts.URL+"/metrics")
	if !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		t.Errorf("metrics Content-Type %q", h.Get("Content-Type"))
	}
	for _, want := range []string{`restorewatch_http_requests_total{code="200",method="GET",route="/"} 1`,
		`route="/instances/:name"`, `route="unmatched"`, "restorewatch_http_request_duration_seconds_bucket",
		"restorewatch_restores_total ", "restorewatch_open_regressions "} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// The hostile instance is <script>alert(1)</script>; the alert
	// deliveries' own gauges are named restorewatch_alert_…
	if strings.Contains(body, "alert(") || strings.Contains(body, "<script") || strings.Contains(body, "/no/such") {
		t.Error("a metric label carries a request path or a name from a server")
	}
}

func TestRegressionListsAndTabs(t *testing.T) {
	db := demoDB(t)
	_, ts := serve(t, web.Config{DB: db})
	_, body, _ := get(t, client(t), ts.URL+"/regressions")
	regs, _ := db.ListRegressions(t.Context(), store.RegressionFilter{Status: store.StatusOpen})
	if !strings.Contains(body, "Open ("+itoa(int64(len(regs)))+")") {
		t.Errorf("the open tab does not count %d regressions", len(regs))
	}
	// The costliest first: the first row loses the most hours a year
	// (TestRegressionsRankedByCost checks the whole order).
	costliest := regs[0]
	for _, r := range regs[1:] {
		if r.HoursLostPerRestore()*r.RestoresPerYear > costliest.HoursLostPerRestore()*costliest.RestoresPerYear {
			costliest = r
		}
	}
	first := strings.Index(body, view.RegressionURL(costliest.ID))
	for _, r := range regs {
		if i := strings.Index(body, `href="`+view.RegressionURL(r.ID)+`"`); r.ID != costliest.ID && i >= 0 && i < first {
			t.Errorf("regression %d is listed before the costliest (%d)", r.ID, costliest.ID)
		}
	}
}

func TestReportFunctionsWriteSelfContainedHTML(t *testing.T) {
	db := demoDB(t)
	reg := firstRegression(t, db)
	var buf bytes.Buffer
	if err := web.RenderRegressionReport(context.Background(), db, reg.ID, &buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"<style>", "How this was measured", "Hours lost", "<svg", reg.Database} {
		if !strings.Contains(out, want) {
			t.Errorf("regression report lacks %q", want)
		}
	}
	if strings.Contains(out, `rel="stylesheet"`) || strings.Contains(out, "<nav") {
		t.Error("a saved report must not depend on a stylesheet URL or carry the navigation")
	}
	// Its charts' points link nowhere: a saved file has no dashboard to
	// link to (the dashboard's charts, drawn once and kept, do link).
	if strings.Contains(out, `href="/restores/`) {
		t.Error("a saved report's charts link to the dashboard's restores")
	}
	buf.Reset()
	if err := web.RenderBuildReport(context.Background(), db, "14.0.3048.4", "13.0.4474.0", &buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "<style>") || !strings.Contains(buf.String(), "13.0.4474.0") {
		t.Error("the build report is not self-contained or lacks the build")
	}
	if err := web.RenderRegressionReport(context.Background(), db, 987654, &buf); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("report of a missing regression: %v, want not found", err)
	}
	if err := web.RenderBuildReport(context.Background(), db, "1.2.3.4", "13.0.4474.0", &buf); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("report of a build without restores: %v, want invalid", err)
	}
}

func TestStartServesAndShutsDown(t *testing.T) {
	s := web.New(web.Config{DB: storetest.Open(t), Addr: "127.0.0.1:0"})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	addr := s.Addr()
	if addr == "" || strings.HasSuffix(addr, ":0") {
		t.Fatalf("Addr() = %q after Start", addr)
	}
	if code, _, _ := get(t, client(t), "http://"+addr+"/healthz"); code != http.StatusOK {
		t.Errorf("healthz on the started server: %d", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + addr + "/healthz"); err == nil {
		t.Error("the server still answers after Shutdown")
	}
	if err := web.New(web.Config{DB: storetest.Open(t), Addr: "256.0.0.1:1"}).Start(context.Background()); store.ErrorCode(err) != store.EUNAVAILABLE {
		t.Errorf("listening on a bad address: %v, want unavailable", err)
	}
}

// TestAPIRestoresPages walks /api/restores by its Link header and gets
// every restore of the filter exactly once, in series order, a page at a
// time; bad page parameters are a 400 that says what to send.
func TestAPIRestoresPages(t *testing.T) {
	db := demoDB(t)
	_, ts := serve(t, web.Config{DB: db})
	c := client(t)
	for _, filter := range []string{"", "kind=log&", "instance=" + url.QueryEscape(hostileInstance) + "&"} {
		f := store.RestoreFilter{}
		if filter == "kind=log&" {
			f.Kind = store.KindLog
		} else if filter != "" {
			f.Instance = hostileInstance
		}
		var want []int64
		if err := storetest.EachRestore(t.Context(), db, f, func(r *store.Restore) error { want = append(want, r.ID); return nil }); err != nil {
			t.Fatal(err)
		}
		var got []int64
		next, pages := "/api/restores?"+filter+"limit=37", 0
		for next != "" {
			code, js, h := get(t, c, ts.URL+next)
			var rows []struct {
				ID int64 `json:"id"`
			}
			if code != http.StatusOK || json.Unmarshal([]byte(js), &rows) != nil {
				t.Fatalf("GET %s = %d: %.200s", next, code, js)
			}
			if len(rows) > 37 {
				t.Fatalf("GET %s: %d rows, limit 37", next, len(rows))
			}
			for _, r := range rows {
				got = append(got, r.ID)
			}
			next = ""
			if l := h.Get("Link"); l != "" {
				next = strings.TrimPrefix(strings.TrimSuffix(l, `>; rel="next"`), "<")
				if cur := h.Get("X-Next-Cursor"); !strings.Contains(next, "cursor="+cur) || len(rows) != 37 {
					t.Fatalf("Link %q, X-Next-Cursor %q after a page of %d", l, cur, len(rows))
				}
			}
			if pages++; pages > 200 {
				t.Fatal("the pages never end")
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("filter %q: pages gave %d restores, EachRestore %d (first %v vs %v)", filter, len(got), len(want),
				got[:min(5, len(got))], want[:min(5, len(want))])
		}
	}
	code, js, _ := get(t, c, ts.URL+"/api/restores")
	var rows []map[string]any
	if code != http.StatusOK || json.Unmarshal([]byte(js), &rows) != nil || len(rows) != 100 {
		t.Errorf("/api/restores without limit: %d, %d rows; want the default page of 100", code, len(rows))
	}
	for _, p := range []string{"limit=0", "limit=1001", "limit=ten", "cursor=abc", "cursor=-4", "cursor=999999999"} {
		code, body, _ := get(t, c, ts.URL+"/api/restores?"+p)
		if code != http.StatusBadRequest || !strings.Contains(body, strings.SplitN(p, "=", 2)[0]) {
			t.Errorf("/api/restores?%s = %d %.200s; want a 400 naming the parameter", p, code, body)
		}
	}
}

// TestRestoresSortAliases: ?sort=duration is the longest-first order; an
// unknown order is a 400 that lists the valid ones.
func TestRestoresSortAliases(t *testing.T) {
	db := demoDB(t)
	_, ts := serve(t, web.Config{DB: db})
	c := client(t)
	code, alias, _ := get(t, c, ts.URL+"/restores?sort=duration&kind=full")
	_, longest, _ := get(t, c, ts.URL+"/restores?sort=longest&kind=full")
	if code != http.StatusOK {
		t.Fatalf("/restores?sort=duration = %d", code)
	}
	rowsOf := func(body string) string {
		i, j := strings.Index(body, "<tbody>"), strings.Index(body, "</tbody>")
		if i < 0 || j < i {
			return ""
		}
		return body[i:j]
	}
	if rowsOf(alias) == "" || rowsOf(alias) != rowsOf(longest) {
		t.Error("sort=duration does not list what sort=longest does")
	}
	if !strings.Contains(alias, `<option value="longest" selected`) {
		t.Error("sort=duration does not show the longest-first order as chosen")
	}
	code, body, _ := get(t, c, ts.URL+"/restores?sort=bogus")
	if code != http.StatusBadRequest || !strings.Contains(body, "longest") || !strings.Contains(body, "fastest") {
		t.Errorf("/restores?sort=bogus = %d %.300s; want a 400 listing the orders", code, body)
	}
}

// TestRestorePageShowsDestinations: where a restore put the database's files
// (msdb's restorefile) reaches the API and the restore page, escaped.
func TestRestorePageShowsDestinations(t *testing.T) {
	_, ts := serve(t, web.Config{DB: demoDB(t)})
	c := client(t)
	code, js, _ := get(t, c, ts.URL+"/api/restores?limit=1&instance="+url.QueryEscape(hostileInstance)+"&database="+url.QueryEscape(hostileDB))
	if code != http.StatusOK {
		t.Fatalf("GET /api/restores = %d", code)
	}
	var rows []struct {
		ID               int64    `json:"id"`
		DestinationFiles []string `json:"destination_files"`
	}
	if err := json.Unmarshal([]byte(js), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("api: %v, %d rows", err, len(rows))
	}
	want := []string{`D:\<img src=x onerror=alert(1)>\` + hostileDB + `.mdf`, `L:\Log\` + hostileDB + `_log.ldf`}
	if !reflect.DeepEqual(rows[0].DestinationFiles, want) {
		t.Errorf("api destination_files = %q, want %q", rows[0].DestinationFiles, want)
	}
	_, page, _ := get(t, c, ts.URL+"/restores/"+strconv.FormatInt(rows[0].ID, 10))
	if !strings.Contains(page, `D:\&lt;img src=x onerror=alert(1)&gt;\`) || !strings.Contains(page, `L:\Log\`) {
		t.Error("the restore page does not list the destination files, escaped")
	}
	if strings.Contains(page, "<img src=x") {
		t.Error("the restore page shows a destination path unescaped")
	}
}
