package web_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web"
	"github.com/restorewatch/restorewatch/web/view"
)

// pagesOf lists one URL of every page for the demo warehouse.
func pagesOf(t *testing.T, db warehouse) []string {
	t.Helper()
	regs, err := db.ListRegressions(t.Context(), store.RegressionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(regs) == 0 {
		t.Fatal("the demo fleet has no regression")
	}
	rs, _, err := db.ListRestores(t.Context(), store.RestoreFilter{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := regs[0]
	return []string{
		"/", "/restores", "/restores?kind=full&sort=slowest", "/restores?page=2", view.RestoreURL(rs[0].ID),
		"/instances", view.InstanceURL(r.Instance), view.DatabaseURL(r.Instance, r.Database),
		view.InstanceURL(hostileInstance), view.DatabaseURL(hostileInstance, hostileDB), view.DatabaseURL(slashInstance, slashDB),
		view.DatabaseURL(slashInstance, dotDB), view.DatabaseURL(slashInstance, formulaDB),
		"/regressions", "/regressions?status=resolved", "/regressions?kind=full&q=" + url.QueryEscape(hostileInstance), view.RegressionURL(r.ID), view.RegressionReportURL(r.ID),
		"/builds", "/compare", view.CompareURL("build:14.0.3048.4", "build:13.0.4474.0"),
		view.CompareURL("period:2025-01-01..2025-03-01", "period:2025-03-01..2025-06-30"), view.CompareURL(r.Instance, hostileInstance),
		"/reports/builds?a=14.0.3048.4&b=13.0.4474.0", "/import", "/live", "/collector", "/alerts",
		"/collector?instance=" + url.QueryEscape(hostileInstance),
	}
}

func TestEveryPageRenders(t *testing.T) {
	db := demoDB(t)
	_, ts := serve(t, web.Config{DB: db})
	c := client(t)
	for _, p := range everyRoute(t, db) {
		start := time.Now()
		code, body, h := get(t, c, ts.URL+p)
		t.Logf("%-70s %d %6.1f ms %7d bytes", p, code, float64(time.Since(start).Microseconds())/1000, len(body))
		if code != http.StatusOK {
			t.Errorf("GET %s = %d: %.300s", p, code, body)
			continue
		}
		if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("GET %s: Content-Type %q", p, ct)
		}
		if strings.Contains(body, "<script>alert(1)</script>") || strings.Contains(body, "<img src=x") {
			t.Errorf("GET %s: a hostile name is not escaped", p)
		}
		if strings.Contains(body, "style=") {
			t.Errorf("GET %s: inline style attribute (the CSP forbids it)", p)
		}
		// Words (issue 30): labels, not keys; no "-0 %"; counts with
		// thousands separators; no space before a full stop or comma.
		text := pageText(body)
		for _, bad := range []string{"authentication_mode", "banner_level", "service_account", "-0 %", "+0 %", "kib i/o", " . ", " , "} {
			if strings.Contains(text, bad) {
				t.Errorf("GET %s shows %q", p, bad)
			}
		}
		if m := ungrouped.FindString(text); m != "" {
			t.Errorf("GET %s: a count without thousands separators: %q", p, m)
		}
	}
}

var (
	tags      = regexp.MustCompile(`(?s)<script.*?</script>|<style.*?</style>|<[^>]*>`)
	spaces    = regexp.MustCompile(`\s+`)
	ungrouped = regexp.MustCompile(`\bn ?= ?\d{4,}`)
)

// pageText is a page's text as a reader sees it: inline tags out (a full
// stop after a link follows it), block tags a space, entities decoded, runs
// of white space one space.
func pageText(body string) string {
	t := tags.ReplaceAllStringFunc(body, func(tag string) string {
		if inline.MatchString(tag) {
			return ""
		}
		return " "
	})
	return spaces.ReplaceAllString(html.UnescapeString(t), " ")
}

var inline = regexp.MustCompile(`^</?(a|strong|em|span|code|abbr|b|i|small)[\s>]`)
