package view_test

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"testing"
	"testing/quick"

	"github.com/a-h/templ"

	"github.com/restorewatch/restorewatch/web/chart"
	"github.com/restorewatch/restorewatch/web/view"
)

func render(t *testing.T, c templ.Component) string {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestSegmentRoundTrips(t *testing.T) {
	names := []string{"", ".", "..", "...", "~", "~x", "a/b", `HOST\INST`, "<script>alert(1)</script>", `O'Brien "&"`,
		"100%", "%2e%2e", "a?b#c", "ünï cødé", " lead", "trail ", "=cmd|' /C calc'!A0", "\x00nul"}
	for _, n := range names {
		seg := view.Segment(n)
		if strings.ContainsAny(seg, "/?#\\") || seg == "." || seg == ".." || seg == "" {
			t.Errorf("Segment(%q) = %q is not one safe path segment", n, seg)
		}
		// What a server sees is the escaped form; it must decode to the name.
		got, ok := view.ParseSegment(seg)
		if !ok || got != n {
			t.Errorf("ParseSegment(Segment(%q)) = %q, %v", n, got, ok)
		}
		// And a browser must not rewrite it (dot segments are removed even
		// when percent-encoded).
		u, err := url.Parse("http://x/instances/" + seg + "/databases/y")
		if err != nil {
			t.Fatal(err)
		}
		if ref := u.ResolveReference(&url.URL{}); ref.EscapedPath() != u.EscapedPath() {
			t.Errorf("Segment(%q) = %q is rewritten by URL resolution to %q", n, seg, ref.EscapedPath())
		}
	}
	if err := quick.Check(func(s string) bool {
		got, ok := view.ParseSegment(view.Segment(s))
		return ok && got == s
	}, nil); err != nil {
		t.Error(err)
	}
}

func TestLayoutEscapesAndMarksTheCurrentPage(t *testing.T) {
	p := view.Page{Title: "<b>t</b>", Nav: "builds", Path: `/x?"y"`, Theme: "dark", CSRF: "tok", CSS: "/static/app.css?v=1", Version: "1.2"}
	out := render(t, view.ErrorPage(p, view.ErrorModel{Status: 404, Title: "Not Found", Message: `<img src=x onerror=alert(1)>`}))
	for _, want := range []string{`data-theme="dark"`, `<a href="/builds" aria-current="page">`, "&lt;b&gt;t&lt;/b&gt;",
		"&lt;img src=x onerror=alert(1)&gt;", `href="#main"`, `<main id="main"`} {
		if !strings.Contains(out, want) {
			t.Errorf("layout lacks %s", want)
		}
	}
	if strings.Contains(out, "<img src=x") || strings.Contains(out, "style=") || strings.Contains(out, "<script") {
		t.Error("layout writes unescaped data, an inline style or a script")
	}
}

func TestRegressionTableShowsWordsNotOnlyColour(t *testing.T) {
	rows := []view.RegressionRow{{URL: "/regressions/1", Database: `O'Brien "&"`, Kind: "full", Instance: "<i>S</i>",
		InstanceURL: view.InstanceURL("<i>S</i>"), Ratio: "0.31×", Interval: view.Unknown, Status: "open", KnownIssues: []string{"KB4088193"},
		Why: "Known issue KB4088193: Slow restore"}}
	out := render(t, view.RegressionTable(rows, true))
	for _, want := range []string{"▼ open", "0.31×", "KB4088193", "O&#39;Brien &#34;&amp;&#34;", "&lt;i&gt;S&lt;/i&gt;",
		`href="/instances/%3Ci%3ES%3C%2Fi%3E"`, `scope="col"`, `scope="row"`} {
		if !strings.Contains(out, want) {
			t.Errorf("regression table lacks %s", want)
		}
	}
	if strings.Contains(out, "95 %") {
		t.Error("an unknown interval is shown as if there were one")
	}
}

func TestOverviewEmptyAndFull(t *testing.T) {
	p := view.Page{Title: "Overview", Nav: "overview", CSS: "/a.css"}
	empty := render(t, view.OverviewPage(p, view.Overview{Empty: true}))
	if !strings.Contains(empty, "restorewatch demo") || !strings.Contains(empty, `href="/import"`) {
		t.Error("the empty overview does not say how to load data")
	}
	full := render(t, view.OverviewPage(p, view.Overview{Restores: "1,174", OpenCount: "5", HasTrend: true,
		Trend: chart.Sparkline{Values: []float64{1, 2, 3}}, AtRisk: []view.RTORow{{Database: "DW", Expected: "9:52:43"}},
		Collector: view.CollectorStatus{Text: "No collector configured"}}))
	for _, want := range []string{"1,174", "<svg", "9:52:43", "No collector configured"} {
		if !strings.Contains(full, want) {
			t.Errorf("overview lacks %s", want)
		}
	}
}

func TestReportInlinesItsStylesheet(t *testing.T) {
	ev := view.Evidence{Database: "DB", Instance: "SQL01", Headline: "slower", Method: []view.MethodItem{{Term: "Test", Text: "rank"}}}
	saved := render(t, view.RegressionReport(view.Report{Title: "DB", InlineCSS: "body{color:#000}"}, ev))
	if !strings.Contains(saved, "<style>\nbody{color:#000}\n</style>") || strings.Contains(saved, `rel="stylesheet"`) {
		t.Error("a saved report must carry its stylesheet")
	}
	served := render(t, view.RegressionReport(view.Report{Title: "DB", CSSURL: "/static/report.css?v=1"}, ev))
	if strings.Contains(served, "<style>") || !strings.Contains(served, `href="/static/report.css?v=1"`) {
		t.Error("a served report must link its stylesheet (the CSP forbids inline styles)")
	}
	if strings.Contains(served, "<nav") {
		t.Error("a report has no navigation")
	}
}

func TestFormats(t *testing.T) {
	for got, want := range map[string]string{
		view.Int(1234567): "1,234,567", view.Int(-1000): "-1,000", view.Bytes(10 << 30): "10.0 GiB",
		view.Bytes(0): view.Unknown, view.Duration(0): view.Unknown, view.Duration(93784): "1 d 2 h",
		view.Ratio(0.314): "0.31×", view.Interval(0.25, 0.38): "0.25–0.38×", view.PText(0.00001): "p < 0.0001",
		view.PText(0.034): "p = 0.03", view.Hours(0.3): "18 min", view.Hours(1234.4): "1,234 h", view.MiBps(0): view.Unknown,
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
