package web_test

import (
	"cmp"
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/restorewatch/restorewatch/ingest/demo"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web"
	"github.com/restorewatch/restorewatch/web/view"
)

// manyRegressions is the size of the paged warehouse: more than two pages
// of the list (100 a page), as a fleet of thousands of instances has.
const manyRegressions = 250

// manyRegressionsDB is a warehouse with manyRegressions open regressions
// on three instances (one with a hostile name), saved through
// store.SaveFindings as the analysis saves them. Regression k (from 0)
// loses 250−k hours a year, so the list's order is k's; its ratio rises
// with k's remainder by 7, so the API's order (by ratio) is another one.
// The regressions of the hostile instance are on hostileDB; every fourth
// one is a log restore's, the others a full restore's.
func manyRegressionsDB(t testing.TB) warehouse {
	t.Helper()
	ctx := context.Background()
	db := emptyDB(t)
	names := []string{"SQL-PAGE-A", hostileInstance, "SQL-PAGE-B"}
	im, err := db.NewImport(ctx, "test", "hosts.txt")
	if err != nil {
		t.Fatal(err)
	}
	off := 0
	for _, n := range names {
		if err := im.Host(store.HostSnapshot{Instance: n, ObservedAt: demo.DefaultNow.AddDate(0, -3, 0), UTCOffset: &off,
			Version: "15.0.4153.1", Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := im.CommitAndReconcile(); err != nil {
		t.Fatal(err)
	}
	is, err := db.ListInstances(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, in := range is {
		ids[in.Name] = in.ID
	}
	regs := map[string][]store.Regression{}
	for k := range manyRegressions {
		inst := names[k%3]
		r := store.Regression{Database: "db-" + strconv.Itoa(k), Kind: store.KindFull, Direction: "regression",
			ChangedAt: demo.DefaultNow.AddDate(0, 0, -30), BaselineMiBps: 200, CurrentMiBps: 80,
			Ratio: 0.3 + float64(k%7)/100, RatioLow: 0.25, RatioHigh: 0.45, BaselineN: 20, CurrentN: 10, PValue: 0.0001,
			BaselineDurationS: 600, CurrentDurationS: 600 + float64(manyRegressions-k)*36, RestoresPerYear: 100}
		if inst == hostileInstance {
			r.Database = hostileDB + " " + strconv.Itoa(k)
		}
		if k%4 == 1 {
			r.Kind = store.KindLog
		}
		regs[inst] = append(regs[inst], r)
	}
	for inst, rs := range regs {
		if ids[inst] == 0 {
			t.Fatalf("instance %q was not imported", inst)
		}
		if err := db.SaveFindings(ctx, ids[inst], 0, nil, rs, nil); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

var regressionLink = regexp.MustCompile(`<th scope="row"[^>]*>\s*<a href="/regressions/(\d+)">`)

// listed is the ids of the regressions a list page shows, in its order.
func listed(t *testing.T, body string) []int64 {
	t.Helper()
	var ids []int64
	for _, m := range regressionLink.FindAllStringSubmatch(body, -1) {
		id, _ := strconv.ParseInt(m[1], 10, 64)
		ids = append(ids, id)
	}
	return ids
}

// byCost is the store's regressions of a status in the list's order (the
// most hours lost a year first), their ids only.
func byCost(t *testing.T, db warehouse, status string, keep func(store.Regression) bool) []int64 {
	t.Helper()
	regs, err := db.ListRegressions(t.Context(), store.RegressionFilter{Status: status})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortStableFunc(regs, func(a, b store.Regression) int {
		return cmp.Compare(b.HoursLostPerRestore()*b.RestoresPerYear, a.HoursLostPerRestore()*a.RestoresPerYear)
	})
	var ids []int64
	for _, r := range regs {
		if keep == nil || keep(r) {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// nextLink is the pager's link to the next page, unescaped ("" if none).
func nextLink(body string) string {
	m := regexp.MustCompile(`<a class="btn secondary" href="([^"]*)" rel="next">`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// TestRegressionsPaged: a fleet's hundreds of regressions come 100 a page
// in the order of hours lost, page 2 holds the next 100, the last page the
// rest, each regression once; the tab counts and the total of hours lost
// cover every page, not the one shown. Before the list was paged, the one
// page held all 250 rows and no pager.
func TestRegressionsPaged(t *testing.T) {
	db := manyRegressionsDB(t)
	_, ts := serve(t, web.Config{DB: db})
	c := client(t)
	want := byCost(t, db, store.StatusOpen, nil)
	if len(want) != manyRegressions {
		t.Fatalf("the warehouse holds %d open regressions, want %d", len(want), manyRegressions)
	}
	var got []int64
	u := ts.URL + "/regressions"
	for page := 1; u != ""; page++ {
		code, body, _ := get(t, c, u)
		if code != http.StatusOK {
			t.Fatalf("GET %s = %d", u, code)
		}
		ids := listed(t, body)
		if wantN := min(100, manyRegressions-len(got)); len(ids) != wantN {
			t.Fatalf("page %d lists %d regressions, want %d", page, len(ids), wantN)
		}
		got = append(got, ids...)
		// The counts are the fleet's on every page.
		for _, s := range []string{"Open (250)", "Acknowledged (0)", "250 open regressions · 31,375 h lost a year in all",
			strconv.Itoa(len(got)-len(ids)+1) + "–" + strconv.Itoa(len(got)) + " of 250"} {
			if !strings.Contains(body, s) {
				t.Errorf("page %d lacks %q", page, s)
			}
		}
		if page > 1 && !strings.Contains(body, `rel="prev"`) {
			t.Errorf("page %d has no link to the previous page", page)
		}
		next := nextLink(body)
		if next != "" {
			if want := "/regressions?page=" + strconv.Itoa(page+1) + "&status=open"; next != want {
				t.Errorf("page %d's next link is %q, want %q", page, next, want)
			}
			u = ts.URL + next
		} else {
			u = ""
		}
		if page > 3 {
			t.Fatal("more than three pages of 250 regressions")
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the pages list\n%v\nwant (by hours lost)\n%v", got, want)
	}
	// A page past the end says so and leads back to the last one.
	_, body, _ := get(t, c, ts.URL+"/regressions?page=9")
	if len(listed(t, body)) != 0 || !strings.Contains(body, "No regressions on this page (250 in all)") ||
		!strings.Contains(body, `href="/regressions?page=3&amp;status=open" rel="prev"`) {
		t.Errorf("page 9 of 3: %.2000s", body[strings.Index(body, "<main"):])
	}
	// A page number past any offset is a page past the end, not an error.
	if code, body, _ := get(t, c, ts.URL+"/regressions?page=9223372036854775807"); code != http.StatusOK || !strings.Contains(body, "No regressions on this page") {
		t.Errorf("page=MaxInt64: %d", code)
	}
	// An unknown kind is refused with the kinds there are.
	if code, body, _ := get(t, c, ts.URL+"/regressions?kind=bogus"); code != http.StatusBadRequest || !strings.Contains(body, "use full, diff, log, file or page") {
		t.Errorf("kind=bogus: %d", code)
	}
}

// TestRegressionsFilterAcrossPages: the name and kind filters narrow every
// page and its counts, and the pager's and the tabs' links keep them; a
// hostile name typed in the filter comes back escaped in the field and
// query-escaped in every link.
func TestRegressionsFilterAcrossPages(t *testing.T) {
	db := manyRegressionsDB(t)
	_, ts := serve(t, web.Config{DB: db})
	c := client(t)

	// "page-" (case aside) matches SQL-PAGE-A and SQL-PAGE-B: 167 of 250.
	keep := func(r store.Regression) bool { return strings.Contains(strings.ToLower(r.Instance), "page-") }
	want := byCost(t, db, store.StatusOpen, keep)
	_, body, _ := get(t, c, ts.URL+"/regressions?q=page-")
	p1 := listed(t, body)
	if !strings.Contains(body, "Open ("+strconv.Itoa(len(want))+")") || !strings.Contains(body, strconv.Itoa(len(want))+" open regressions") {
		t.Errorf("the counts are not those of the %d matching regressions", len(want))
	}
	next := nextLink(body)
	if next != "/regressions?page=2&q=page-&status=open" {
		t.Fatalf("the next link %q drops the filter", next)
	}
	if !strings.Contains(body, `href="/regressions?q=page-&amp;status=acknowledged"`) {
		t.Error("the acknowledged tab drops the filter")
	}
	_, body, _ = get(t, c, ts.URL+next)
	if got := append(p1, listed(t, body)...); !slices.Equal(got, want) {
		t.Errorf("the filtered pages list %v, want %v", got, want)
	}
	if !strings.Contains(body, `value="page-"`) {
		t.Error("page 2's filter field lost the name typed")
	}

	// Kind and name together: log regressions of SQL-PAGE-B.
	keep = func(r store.Regression) bool { return r.Instance == "SQL-PAGE-B" && r.Kind == store.KindLog }
	want = byCost(t, db, store.StatusOpen, keep)
	_, body, _ = get(t, c, ts.URL+"/regressions?q=sql-page-b&kind=log")
	if got := listed(t, body); len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("q=sql-page-b&kind=log lists %v, want %v", got, want)
	}
	if !strings.Contains(body, `<option value="log" selected>`) {
		t.Error("the kind select does not show the kind filtered on")
	}

	// A hostile name: 83 regressions of the hostile instance, one page.
	keep = func(r store.Regression) bool { return r.Instance == hostileInstance }
	want = byCost(t, db, store.StatusOpen, keep)
	code, body, _ := get(t, c, ts.URL+"/regressions?q="+url.QueryEscape(hostileInstance))
	if code != http.StatusOK {
		t.Fatalf("hostile filter: %d", code)
	}
	if got := listed(t, body); !slices.Equal(got, want) {
		t.Errorf("the hostile instance's regressions: %v, want %v", got, want)
	}
	if strings.Contains(body, hostileInstance) || strings.Contains(body, hostileDB) {
		t.Error("a hostile name is on the page unescaped")
	}
	for _, s := range []string{`value="&lt;script&gt;alert(1)&lt;/script&gt;"`, "O&#39;Brien &#34;&amp;&#34;",
		`href="/regressions?q=%3Cscript%3Ealert%281%29%3C%2Fscript%3E&amp;status=resolved"`} {
		if !strings.Contains(body, s) {
			t.Errorf("the page lacks %s", s)
		}
	}
	// A name matching no regression says so.
	_, body, _ = get(t, c, ts.URL+"/regressions?q=nothing-like-it")
	if !strings.Contains(body, "No open regression matches these filters.") || !strings.Contains(body, "Open (0)") {
		t.Error("a filter matching nothing does not say so")
	}
}

// TestRegressionStatusFromPageTwo: a regression reached from page 2 is
// acknowledged through its form (CSRF token, 303 back to it); it leaves
// the open list, whose counts and total drop by one, and the acknowledged
// tab lists it.
func TestRegressionStatusFromPageTwo(t *testing.T) {
	db := manyRegressionsDB(t)
	_, ts := serve(t, web.Config{DB: db})
	c := client(t)
	_, body, _ := get(t, c, ts.URL+"/regressions?page=2")
	ids := listed(t, body)
	if len(ids) == 0 {
		t.Fatal("page 2 is empty")
	}
	id := ids[0]
	_, body, _ = get(t, c, ts.URL+view.RegressionURL(id))
	m := regexp.MustCompile(`<form class="form" method="post" action="([^"]+)">\s*<input type="hidden" name="_csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("the regression page has no status form with a CSRF token")
	}
	resp := postForm(t, c, ts.URL+m[1], url.Values{"status": {"acknowledged"}, "note": {"from page 2"}, "_csrf": {m[2]}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != view.RegressionURL(id) {
		t.Fatalf("the status form: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	_, body, _ = get(t, c, ts.URL+"/regressions?page=2")
	if slices.Contains(listed(t, body), id) || !strings.Contains(body, "Open (249)") || !strings.Contains(body, "Acknowledged (1)") ||
		!strings.Contains(body, "249 open regressions") {
		t.Error("after acknowledging, page 2 still counts or lists it as open")
	}
	_, body, _ = get(t, c, ts.URL+"/regressions?status=acknowledged")
	if got := listed(t, body); !slices.Equal(got, []int64{id}) || !strings.Contains(body, "1 acknowledged regression ·") {
		t.Errorf("the acknowledged tab lists %v, want [%d]", got, id)
	}
}

// TestAPIRegressionsPaged: /api/regressions returns 100 by default with a
// Link and X-Next-Cursor to the next page; walking the cursors yields every
// regression once, in the CLI's order, also with a status filter; limit
// and cursor out of range are refused. Before, one response held them all
// and limit was ignored.
func TestAPIRegressionsPaged(t *testing.T) {
	db := manyRegressionsDB(t)
	for _, id := range []int64{5, 50, 150} {
		if err := db.SetRegressionStatus(t.Context(), id, store.StatusResolved, ""); err != nil {
			t.Fatal(err)
		}
	}
	_, ts := serve(t, web.Config{DB: db})
	c := client(t)
	walk := func(u string) (ids []int64, pages int) {
		for u != "" {
			code, body, h := get(t, c, ts.URL+u)
			if code != http.StatusOK {
				t.Fatalf("GET %s = %d: %s", u, code, body)
			}
			var rows []struct {
				ID int64 `json:"id"`
			}
			if err := json.Unmarshal([]byte(body), &rows); err != nil {
				t.Fatalf("GET %s: %v", u, err)
			}
			for _, r := range rows {
				ids = append(ids, r.ID)
			}
			pages++
			u = ""
			if l := h.Get("Link"); l != "" {
				m := regexp.MustCompile(`^<(/api/regressions\?[^>]+)>; rel="next"$`).FindStringSubmatch(l)
				if m == nil || h.Get("X-Next-Cursor") != strconv.FormatInt(rows[len(rows)-1].ID, 10) {
					t.Fatalf("GET %s: Link %q, X-Next-Cursor %q", u, l, h.Get("X-Next-Cursor"))
				}
				u = m[1]
			}
			if pages > 10 {
				t.Fatal("the cursor never ends")
			}
		}
		return ids, pages
	}
	idsOf := func(f store.RegressionFilter) []int64 {
		regs, err := db.ListRegressions(t.Context(), f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, r := range regs {
			ids = append(ids, r.ID)
		}
		return ids
	}
	if ids, pages := walk("/api/regressions"); pages != 3 || !slices.Equal(ids, idsOf(store.RegressionFilter{})) {
		t.Errorf("default pages: %d pages, ids %v", pages, ids)
	}
	if ids, pages := walk("/api/regressions?limit=1000"); pages != 1 || len(ids) != manyRegressions {
		t.Errorf("limit=1000: %d pages of %d regressions, want 1 of %d", pages, len(ids), manyRegressions)
	}
	if ids, pages := walk("/api/regressions?status=open&limit=60"); pages != 5 || !slices.Equal(ids, idsOf(store.RegressionFilter{Status: store.StatusOpen})) {
		t.Errorf("status=open&limit=60: %d pages, ids %v", pages, ids)
	}
	if ids, _ := walk("/api/regressions?status=resolved&limit=2"); !slices.Equal(ids, idsOf(store.RegressionFilter{Status: store.StatusResolved})) {
		t.Errorf("status=resolved: %v", ids)
	}
	// A regression resolved between two pages moves behind the cursor's
	// place (the resolved come last): it comes again among the resolved,
	// and no other regression is skipped or repeated.
	code, body, h := get(t, c, ts.URL+"/api/regressions?limit=100")
	if code != http.StatusOK || h.Get("Link") == "" {
		t.Fatalf("first page: %d", code)
	}
	var first []struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal([]byte(body), &first); err != nil {
		t.Fatal(err)
	}
	if err := db.SetRegressionStatus(t.Context(), first[10].ID, store.StatusResolved, ""); err != nil {
		t.Fatal(err)
	}
	rest, _ := walk(strings.TrimSuffix(strings.TrimPrefix(h.Get("Link"), "<"), `>; rel="next"`))
	seen := map[int64]int{}
	for _, r := range first {
		seen[r.ID]++
	}
	for _, id := range rest {
		seen[id]++
	}
	if len(seen) != manyRegressions || len(first)+len(rest) != manyRegressions+1 || seen[first[10].ID] != 2 {
		t.Errorf("after resolving one of page 1: %d rows, %d regressions, it seen %d times; want %d, %d, 2",
			len(first)+len(rest), len(seen), seen[first[10].ID], manyRegressions+1, manyRegressions)
	}
	for _, bad := range []string{"limit=0", "limit=1001", "limit=x", "cursor=0", "cursor=x", "cursor=99999"} {
		if code, body, _ := get(t, c, ts.URL+"/api/regressions?"+bad); code != http.StatusBadRequest {
			t.Errorf("%s: %d %s", bad, code, body)
		}
	}
}

// TestBrowserRegressionsPages walks the list in Chromium: Next page keeps
// the filter, page 2 shows other regressions, the evidence page's status
// form (with its CSRF token) acknowledges one of page 2, and the counts
// follow; no dialog or console error on the way (hostile names included).
func TestBrowserRegressionsPages(t *testing.T) {
	db := manyRegressionsDB(t)
	b := newBrowser(t)
	_, ts := serve(t, web.Config{DB: db})
	rowIDs := func() []string {
		ids, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll("main table tbody tr th > a")).map(a => a.getAttribute("href"))`))
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	b.do(t, chromedp.Navigate(ts.URL+"/regressions"), chromedp.WaitVisible(chromedp.CSS("main table")),
		chromedp.SendKeys(chromedp.CSS("#f-q"), "PAGE"),
		chromedp.SetValue(chromedp.CSS("#f-kind"), "full"),
		chromedp.Click(chromedp.CSS(`form.filters button[type=submit]`)))
	b.waitLocation(t, func(u *url.URL) bool { return u.Query().Get("q") == "PAGE" })
	b.do(t, chromedp.WaitVisible(chromedp.CSS(`a[rel="next"]`)))
	page1 := rowIDs()
	b.do(t, chromedp.Click(chromedp.CSS(`a[rel="next"]`)))
	q := b.waitLocation(t, func(u *url.URL) bool { return u.Query().Get("page") == "2" }).Query()
	if q.Get("q") != "PAGE" || q.Get("kind") != "full" || q.Get("status") != "open" {
		t.Fatalf("the next page's query %v drops the filter", q)
	}
	b.do(t, chromedp.WaitVisible(chromedp.CSS(`a[rel="prev"]`)))
	page2 := rowIDs()
	if len(page1) != 100 || len(page2) == 0 || slices.Contains(page1, page2[0]) {
		t.Fatalf("page 1 lists %d, page 2 %d, page 2 starting with one of page 1: %v", len(page1), len(page2), slices.Contains(page1, page2[0]))
	}
	if v := b.attr(t, "#f-q", "value"); v != "PAGE" {
		t.Errorf("page 2's name field holds %q", v)
	}
	b.shot(t, "regressions-page-2")
	b.do(t, chromedp.Click(chromedp.CSS(`main table tbody tr:first-child th a`)), chromedp.WaitVisible(chromedp.CSS("#status")))
	if p := b.location(t).Path; p != page2[0] {
		t.Fatalf("the first row of page 2 led to %s, want %s", p, page2[0])
	}
	b.do(t, chromedp.SendKeys(chromedp.CSS("#note"), "seen from page 2"),
		chromedp.Click(chromedp.CSS(`form.form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(".badge.warn")))
	if txt := b.text(t, "main"); !strings.Contains(txt, "seen from page 2") {
		t.Errorf("after saving, the page does not show the note: %.300s", txt)
	}
	b.do(t, chromedp.Navigate(ts.URL+"/regressions?status=acknowledged"), chromedp.WaitVisible(chromedp.CSS("main table")))
	if got := rowIDs(); !slices.Equal(got, page2[:1]) {
		t.Errorf("the acknowledged tab lists %v, want %v", got, page2[:1])
	}
	if txt := b.text(t, ".tabs"); !strings.Contains(txt, "Open (249)") || !strings.Contains(txt, "Acknowledged (1)") {
		t.Errorf("the tabs after acknowledging: %q", txt)
	}
}
