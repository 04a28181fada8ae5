package web_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web/view"
)

// widths are the screens every page must fit: a phone and a laptop.
var widths = []struct {
	name string
	w, h int64
}{{"390", 390, 844}, {"1440", 1440, 900}}

// pageFit is what a page reports about its own layout in the browser.
type pageFit struct {
	ScrollWidth int      `json:"scrollWidth"`
	InnerWidth  int      `json:"innerWidth"`
	Theme       string   `json:"theme"`
	Wide        []string `json:"wide"`
	Cut         []string `json:"cut"`
	Charts      []string `json:"charts"`
	Text        string   `json:"text"`
}

// fitJS measures the page: the document's scroll width against the
// viewport, and the outermost elements sticking out past its right edge,
// so a failure names the culprit.
const fitJS = `(() => {
	const iw = window.innerWidth, wide = [];
	const name = el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
		(typeof el.className === "string" && el.className ? "." + el.className.split(" ").join(".") : "");
	for (const el of document.body.querySelectorAll("*")) {
		const r = el.getBoundingClientRect(), p = el.parentElement;
		if (r.right <= iw + 1 || r.width === 0 || !p || p.getBoundingClientRect().right > iw + 1) continue;
		if (["auto", "scroll", "hidden"].includes(getComputedStyle(p).overflowX)) continue; // scrolls in its own box
		if (wide.length < 5) wide.push(name(p) + " > " + name(el) + " right=" + Math.round(r.right));
	}
	// A table laid out as cards on a phone must fit its box: scrolling
	// inside it would hide the card's own figures (issue 38).
	const cut = [];
	for (const t of document.querySelectorAll(".table-wrap > table.cards")) {
		const w = t.parentElement;
		if (w.scrollWidth > w.clientWidth + 1 && cut.length < 5) cut.push(name(t) + " " + w.scrollWidth + " > " + w.clientWidth);
	}
	// A chart one sees opens with its value axis in view (not scrolled
	// away sideways) and text one can read: no label under 8 CSS px
	// (issue 38: a phone scrolled the evidence charts past their axis and
	// drew the plan's timeline text at ~5 px).
	const charts = [];
	for (const svg of document.querySelectorAll("svg.rw-chart")) {
		const r = svg.getBoundingClientRect();
		if (r.width === 0 || svg.closest("details:not([open])")) continue;
		const vb = svg.viewBox.baseVal, scale = vb && vb.width ? r.width / vb.width : 1;
		let small = 1e9;
		for (const t of svg.querySelectorAll("text")) {
			if (!t.getBBox().width) continue;
			small = Math.min(small, parseFloat(getComputedStyle(t).fontSize) * scale);
		}
		let box = svg.parentElement;
		while (box && !["auto", "scroll", "hidden"].includes(getComputedStyle(box).overflowX)) box = box.parentElement;
		const hidden = box ? box.getBoundingClientRect().left - r.left : 0;
		if ((small < 8 || hidden > 2) && charts.length < 5)
			charts.push(name(svg) + (svg.id ? "" : "[" + (svg.getAttribute("aria-labelledby") || "") + "]") +
				" smallest text " + small.toFixed(1) + " px, " + Math.round(Math.max(hidden, 0)) + " px of it scrolled out of view");
	}
	return {scrollWidth: document.documentElement.scrollWidth, innerWidth: iw,
		theme: document.documentElement.dataset.theme || "", wide, cut, charts, text: document.body.innerText};
})()`

// TestBrowserEveryWidth walks every route of the demo at 390 and 1440 px
// (issue 30: plan pages, a restore of each kind, every regression's
// evidence and report, live, collector, compare's form),
// in the light and the dark theme: no page scrolls sideways (tables and
// charts scroll inside their own box, the navigation collapses), and no
// catalogue provenance or machine key reaches the reader (issue 15 items
// 1, 5 and 8). Screenshots of each go to $RW_ARTIFACTS.
func TestBrowserEveryWidth(t *testing.T) {
	db := demoDB(t)
	b := newBrowser(t)
	_, ts := serve(t, webConfig(db))
	pages := everyRoute(t, db)
	for _, theme := range []string{"light", "dark"} {
		b.do(t, chromedp.Navigate(ts.URL+"/theme?set="+theme+"&back=/"), chromedp.WaitVisible(chromedp.CSS("h1")))
		for _, w := range widths {
			b.do(t, chromedp.EmulateViewport(w.w, w.h))
			for i, p := range pages {
				b.do(t, chromedp.Navigate(ts.URL+p), chromedp.WaitVisible(chromedp.CSS("h1")))
				fit, err := chromedp.Run(b.ctx, chromedp.Evaluate[pageFit](fitJS))
				if err != nil {
					t.Fatalf("%s at %s px: %v", p, w.name, err)
				}
				if fit.ScrollWidth > fit.InnerWidth {
					t.Errorf("%s at %s px (%s): the page scrolls sideways (scrollWidth %d > innerWidth %d); too wide: %s",
						p, w.name, theme, fit.ScrollWidth, fit.InnerWidth, strings.Join(fit.Wide, ", "))
				}
				if len(fit.Charts) > 0 {
					t.Errorf("%s at %s px (%s): a chart cannot be read as it opens: %s", p, w.name, theme, strings.Join(fit.Charts, "; "))
				}
				if w.name == "390" && len(fit.Cut) > 0 {
					t.Errorf("%s at 390 px (%s): a table of cards is cut in its box: %s", p, theme, strings.Join(fit.Cut, ", "))
				}
				if !strings.HasPrefix(p, "/reports/") && fit.Theme != theme {
					t.Errorf("%s: theme %q, want %q", p, fit.Theme, theme)
				}
				if m := internalText.FindString(fit.Text); m != "" {
					t.Errorf("%s shows internal text %q", p, m)
				}
				for _, key := range []string{"io_alignment_4096", "source_build", "instance_build", "device_kind"} {
					if strings.Contains(fit.Text, key) {
						t.Errorf("%s shows the machine key %q instead of words", p, key)
					}
				}
				if theme == "light" || w.name == "390" || p == "/" {
					b.shot(t, fmt.Sprintf("%s-%s-%02d-%s", theme, w.name, i, url.PathEscape(strings.Trim(p, "/"))))
				}
			}
		}
	}
}

// everyRoute is pagesOf and every page the demo's links reach beyond it:
// every database's restore plan, every regression's evidence and report,
// a restore of each kind (issue 30 item 1: the plan pages were missing,
// and each of them scrolled sideways).
func everyRoute(t *testing.T, db warehouse) []string {
	t.Helper()
	pages := pagesOf(t, db)
	series, err := db.ListSeries(t.Context(), store.SeriesFilter{})
	if err != nil {
		t.Fatal(err)
	}
	backedUp, err := db.BackupDatabases(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, s := range series {
		u := view.DatabaseURL(s.Instance, s.Database) + "/plan"
		if !backedUp[strings.ToLower(s.Instance)+"\x00"+s.Database] || seen[u] {
			continue // the test's own instances and a log-shipped copy have no backup history
		}
		seen[u] = true
		pages = append(pages, u)
	}
	regs, err := db.ListRegressions(t.Context(), store.RegressionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range regs {
		pages = append(pages, view.RegressionURL(r.ID), view.RegressionReportURL(r.ID))
	}
	for _, k := range []store.Kind{store.KindFull, store.KindDiff, store.KindLog} {
		rs, _, err := db.ListRestores(t.Context(), store.RestoreFilter{Kind: k, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			pages = append(pages, view.RestoreURL(r.ID))
		}
	}
	return slices.Compact(pages)
}
