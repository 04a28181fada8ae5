// Package walk proves that every surface of restorewatch states the same
// figures (issue 38): it reads the API's JSON as the one truth, renders
// what a person reads — the overview, a regression's evidence page and
// report (HTML, and its PDF as text), the database and plan pages, the
// CLI's text and JSON — and compares each entity's figures there with the
// truth: a regression's change in words, its interval, since when, the
// speeds before and now, the hours lost a year; what a restore takes now
// and against which RTO; a watch's last restore; a knee's point. A figure
// is compared as each surface rounds it (the product's one rounding per
// quantity, store/human), so a disagreement is a real one, never display
// rounding.
//
// The walker reads what a person reads: the visible text of a page
// (scripts, styles and charts' SVG left out), not data attributes, so a
// page that prints a figure from another source fails it.
package walk

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store/human"
)

// Source reads the surfaces: a GET on the dashboard (path and query, the
// body returned), and optionally the CLI (its standard output for args,
// the warehouse chosen by the caller) and a regression's report printed to
// PDF and read back as text.
type Source struct {
	Get     func(ctx context.Context, path string) (string, error)
	CLI     func(ctx context.Context, args ...string) (string, error)
	PDFText func(ctx context.Context, regression int64) (string, error)
}

// Disagreement is one figure a surface states otherwise than the truth.
type Disagreement struct {
	Entity   string // "regression 1", "RTO of DW_Sales on DWH-SQL02"
	Quantity string // "change", "since", "before", "now", "hours a year", …
	Surface  string // "/", "/regressions/1", "report 1 (PDF)", "rw regressions"
	Want     string
	Got      string
}

func (d Disagreement) String() string {
	return fmt.Sprintf("%s, %s on %s: want %q, got %q", d.Entity, d.Quantity, d.Surface, d.Want, d.Got)
}

// Result is what a walk compared and found.
type Result struct {
	Entities      int
	Watches       int
	Checks        int
	Surfaces      map[string]int // surface kind → pages read
	Disagreements []Disagreement
}

// walker carries one walk's reads and findings.
type walker struct {
	src   Source
	res   *Result
	pages map[string]string // visible text by path
	raw   map[string]string // HTML by path
}

// Walk reads every surface src offers and compares it with the API.
func Walk(ctx context.Context, src Source) (*Result, error) {
	w := &walker{src: src, res: &Result{Surfaces: map[string]int{}}, pages: map[string]string{}, raw: map[string]string{}}
	var regs []apiRegression
	if err := w.json(ctx, "/api/regressions", &regs); err != nil {
		return nil, err
	}
	overview, err := w.text(ctx, "/", "page")
	if err != nil {
		return nil, err
	}
	var cliRegs string
	var cliJSON []apiRegression
	if src.CLI != nil {
		if cliRegs, err = w.cli(ctx, "regressions"); err != nil {
			return nil, err
		}
		out, err := w.cli(ctx, "regressions", "--format", "json")
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(out), &cliJSON); err != nil {
			return nil, fmt.Errorf("walk: rw regressions --format json: %w", err)
		}
	}
	for i := range regs {
		r := &regs[i]
		switch {
		case r.State == "watch":
			if err := w.watch(ctx, r, overview, cliRegs); err != nil {
				return nil, err
			}
			continue
		case r.Status != "open" || r.Direction != "regression":
			continue
		}
		if err := w.regression(ctx, r, overview, cliRegs, cliJSON); err != nil {
			return nil, err
		}
	}
	if err := w.alerts(ctx, regs); err != nil {
		return nil, err
	}
	// The fleet's comparisons: /builds and the first comparison of two
	// builds it links, read for their words (bare ratios, dates, keys).
	if _, err := w.text(ctx, "/builds", "page"); err != nil {
		return nil, err
	}
	if m := compareLinkRe.FindStringSubmatch(w.raw["/builds"]); m != nil {
		if _, err := w.text(ctx, html.UnescapeString(m[1]), "page"); err != nil {
			return nil, err
		}
	}
	if err := w.rtos(ctx, overview); err != nil {
		return nil, err
	}
	if err := w.knees(ctx); err != nil {
		return nil, err
	}
	for path, text := range w.pages {
		w.dateStyle(path, text)
		w.machineKeys(path, text)
		w.bareRatios(path, text)
	}
	return w.res, nil
}

// apiRegression is what the walk reads of /api/regressions.
type apiRegression struct {
	ID         int64     `json:"id"`
	Instance   string    `json:"instance"`
	Database   string    `json:"database"`
	Kind       string    `json:"kind"`
	Direction  string    `json:"direction"`
	State      string    `json:"state"`
	Status     string    `json:"status"`
	ChangedAt  time.Time `json:"changed_at"`
	OpenedAt   time.Time `json:"opened_at"`
	Baseline   float64   `json:"baseline_mibps"`
	Current    float64   `json:"current_mibps"`
	BaselineN  int64     `json:"baseline_n"`
	CurrentN   int64     `json:"current_n"`
	Ratio      float64   `json:"ratio"`
	RatioLow   float64   `json:"ratio_low"`
	RatioHigh  float64   `json:"ratio_high"`
	DurRatio   float64   `json:"duration_ratio"`
	HoursYear  float64   `json:"hours_lost_per_year"`
	KnownIssue []string  `json:"known_issues"`
}

// apiPlan is what the walk reads of /api/plan.
type apiPlan struct {
	Steps []struct {
		Kind     string `json:"kind"`
		Estimate struct {
			Seconds float64 `json:"seconds"`
			Low     float64 `json:"low_s"`
			High    float64 `json:"high_s"`
			N       int     `json:"n"`
		} `json:"estimate"`
	} `json:"steps"`
	Total    float64 `json:"total_s"`
	RTO      int64   `json:"rto_ns"`
	Over     bool    `json:"over_rto"`
	InFlight *struct {
		Percent  float64 `json:"percent"`
		Expected float64 `json:"expected_s"`
	} `json:"in_flight"`
}

// regression compares one open regression's figures on every surface.
func (w *walker) regression(ctx context.Context, r *apiRegression, overview, cliRegs string, cliJSON []apiRegression) error {
	w.res.Entities++
	ent := fmt.Sprintf("regression %d", r.ID)
	want := figures{
		"change":       human.Change(r.Ratio),
		"since":        human.Date(r.ChangedAt),
		"before":       human.MiBps(r.Baseline),
		"now":          human.MiBps(r.Current),
		"hours a year": human.Hours(r.HoursYear),
	}
	if !(r.HoursYear > 0) {
		delete(want, "hours a year")
	}
	if rg := human.ChangeRange(r.RatioLow, r.RatioHigh); rg != "unknown" {
		want["interval"] = rg
	}
	if r.BaselineN > 0 && r.CurrentN > 0 {
		want["restores before"] = human.Count(r.BaselineN) + " restores"
		want["restores since"] = human.Count(r.CurrentN) + " restores"
	}
	evidence := []string{"change", "since", "before", "now", "hours a year", "interval", "restores before", "restores since"}
	// The overview: the regression's row.
	row := region(w.raw["/"], fmt.Sprintf("/regressions/%d\"", r.ID), "<tr", "</tr>")
	w.compare(ent, "/", visible(row), want, "change", "since", "before", "now", "hours a year")

	// The list of regressions: its row.
	if _, err := w.text(ctx, "/regressions", "page"); err != nil {
		return err
	}
	row = region(w.raw["/regressions"], fmt.Sprintf("/regressions/%d\"", r.ID), "<tr", "</tr>")
	w.compare(ent, "/regressions", visible(row), want, "change", "since", "before", "now", "hours a year")
	w.ratios(ent, "/regressions", visible(row), r)

	// The evidence page and the report, HTML and printed.
	plan, err := w.plan(ctx, r.Instance, r.Database)
	if err != nil {
		return err
	}
	for _, path := range []string{fmt.Sprintf("/regressions/%d", r.ID), fmt.Sprintf("/reports/regressions/%d", r.ID)} {
		page, err := w.text(ctx, path, "page")
		if err != nil {
			return err
		}
		w.compare(ent, path, page, want, evidence...)
		w.ratios(ent, path, page, r)
	}
	report := w.pages[fmt.Sprintf("/reports/regressions/%d", r.ID)]
	// The upgrade case: the report's is the evidence page's, word for word.
	upgrade := visible(between(w.raw[fmt.Sprintf("/regressions/%d", r.ID)], `id="upgrade"`, "<h2"))
	if got := visible(between(w.raw[fmt.Sprintf("/reports/regressions/%d", r.ID)], `id="upgrade"`, "<h2")); upgrade != "" || got != "" {
		w.res.Checks++
		if got != upgrade {
			w.disagree(ent, "upgrade case (AS-IS/TO-BE)", fmt.Sprintf("/reports/regressions/%d", r.ID), firstDiff(upgrade, got), firstDiff(got, upgrade))
		}
	}
	if plan != nil {
		w.restoreNow(ent, fmt.Sprintf("/reports/regressions/%d", r.ID), report, plan)
	}
	if w.src.PDFText != nil {
		pdf, err := w.src.PDFText(ctx, r.ID)
		if err != nil {
			return err
		}
		w.res.Surfaces["report PDF"]++
		surface := fmt.Sprintf("report %d (PDF)", r.ID)
		pdf = strings.Join(strings.Fields(pdf), " ")
		w.compare(ent, surface, pdf, want, evidence...)
		w.ratios(ent, surface, pdf, r)
		if plan != nil {
			w.restoreNow(ent, surface, pdf, plan)
		}
		// Every figure of the upgrade case is printed.
		for _, f := range strings.Fields(upgrade) {
			if strings.ContainsAny(f, "0123456789") {
				w.res.Checks++
				if !strings.Contains(pdf, strings.Trim(f, ".,;:()")) {
					w.disagree(ent, "upgrade case (AS-IS/TO-BE)", surface, f, "missing")
				}
			}
		}
	}
	// The instance page: the regression's row among its databases'.
	instPath := "/instances/" + url.PathEscape(r.Instance)
	if _, err := w.text(ctx, instPath, "page"); err != nil {
		return err
	}
	row = region(w.raw[instPath], fmt.Sprintf("/regressions/%d\"", r.ID), "<tr", "</tr>")
	w.res.Checks++
	if row == "" {
		w.disagree(ent, "listed", instPath, "its row", "none")
	} else {
		w.compare(ent, instPath, visible(row), want, "change", "since", "before", "now", "hours a year")
		w.ratios(ent, instPath, visible(row), r)
	}

	// The database page names the regression in the analysis' words.
	dbPath := databasePath(r.Instance, r.Database)
	page, err := w.text(ctx, dbPath, "page")
	if err != nil {
		return err
	}
	// (only what it says of this regression: its knees are theirs)
	w.compare(ent, dbPath, page, want, "change", "since")

	// The plan page: the regression's sentence and what the restore takes.
	planPath := dbPath + "/plan"
	page, err = w.text(ctx, planPath, "page")
	if err != nil {
		return err
	}
	w.compare(ent, planPath, page, want, "change", "since")
	w.ratios(ent, planPath, page, r)
	if plan != nil {
		w.restoreNow(ent, planPath, page, plan)
		if err := w.inflight(ctx, ent, plan, planPath); err != nil {
			return err
		}
	}

	if w.src.CLI == nil {
		return nil
	}
	line := lineWith(cliRegs, fmt.Sprintf("%d ", r.ID))
	w.compare(ent, "rw regressions", line, want, "change", "since", "before", "now", "hours a year")
	w.ratios(ent, "rw regressions", line, r)
	var found bool
	for _, c := range cliJSON {
		if c.ID == r.ID && c.State != "watch" {
			found = true
			w.number(ent, "ratio", "rw regressions --format json", r.Ratio, c.Ratio, 1e-4)
			w.number(ent, "baseline MiB/s", "rw regressions --format json", r.Baseline, c.Baseline, 1e-3)
			w.number(ent, "current MiB/s", "rw regressions --format json", r.Current, c.Current, 1e-3)
			w.number(ent, "hours a year", "rw regressions --format json", r.HoursYear, c.HoursYear, 0.05)
		}
	}
	if !found {
		w.disagree(ent, "listed", "rw regressions --format json", "listed", "missing")
	}
	out, err := w.cli(ctx, "plan", "--instance", r.Instance, "--database", r.Database)
	if err != nil {
		return err
	}
	w.compare(ent, "rw plan", oneLine(out), want, "change", "since")
	w.ratios(ent, "rw plan", oneLine(out), r)
	if plan != nil {
		w.restoreNow(ent, "rw plan", oneLine(out), plan)
	}
	return nil
}

// restoreNow checks that a surface states what the plan's full step takes
// now and the whole plan against its RTO, as the plan API estimates them.
func (w *walker) restoreNow(ent, surface, text string, p *apiPlan) {
	if len(p.Steps) == 0 || p.Steps[0].Estimate.N == 0 {
		return
	}
	want := figures{"full restore now": human.Duration(p.Steps[0].Estimate.Seconds)}
	keys := []string{"full restore now"}
	if p.Total > 0 {
		want["whole plan"] = human.Duration(p.Total)
		keys = append(keys, "whole plan")
	}
	if p.RTO > 0 {
		want["RTO"] = human.Duration(float64(p.RTO) / 1e9)
		keys = append(keys, "RTO")
	}
	w.compare(ent, surface, text, want, keys...)
}

// watch compares a watch's line on the overview and in the CLI.
func (w *walker) watch(ctx context.Context, r *apiRegression, overview, cliRegs string) error {
	w.res.Entities++
	w.res.Watches++
	ent := fmt.Sprintf("watch of %s on %s", r.Database, r.Instance)
	d := r.DurRatio
	if !(d > 0) && r.Ratio > 0 {
		d = 1 / r.Ratio
	}
	want := figures{"change": human.Change(1 / d), "opened": human.Stamp(r.OpenedAt)}
	if r.OpenedAt.IsZero() {
		want["opened"] = human.Date(r.ChangedAt)
	}
	if line := watchLine(overview, r.Database, r.Instance); line == "" {
		w.disagree(ent, "listed", "/", "a watch line", "none")
	} else {
		w.compare(ent, "/", line, want, "change", "opened")
	}
	if w.src.CLI != nil {
		w.compare(ent, "rw regressions", watchLine(cliRegs, r.Database, r.Instance), want, "change", "opened")
	}
	return nil
}

// rtos compares every database the overview lists over its RTO with its
// plan: the projected whole plan and the target, on the overview, the
// plan page and the CLI's plan.
func (w *walker) rtos(ctx context.Context, overview string) error {
	raw := w.raw["/"]
	sec := region(raw, `id="rto"`, "<section", "</section>")
	if sec == "" {
		return nil
	}
	for _, row := range regexp.MustCompile(`(?s)<tr[ >].*?</tr>`).FindAllString(sec, -1) {
		m := planLinkRe.FindStringSubmatch(row)
		if m == nil {
			continue
		}
		path := html.UnescapeString(m[1]) + "/plan"
		inst, db, ok := parseDatabasePath(m[1])
		if !ok {
			continue
		}
		w.res.Entities++
		ent := fmt.Sprintf("RTO of %s on %s", db, inst)
		p, err := w.plan(ctx, inst, db)
		if err != nil {
			return err
		}
		if p == nil || p.RTO == 0 {
			w.disagree(ent, "RTO", "/api/plan", "a target", "none")
			continue
		}
		if !p.Over {
			w.disagree(ent, "over the RTO", "/api/plan", "over", "within")
		}
		want := figures{"whole plan": human.Duration(p.Total), "RTO": human.Duration(float64(p.RTO) / 1e9)}
		w.compare(ent, "/", visible(row), want, "whole plan", "RTO")
		page, err := w.text(ctx, path, "page")
		if err != nil {
			return err
		}
		w.compare(ent, path, page, want, "whole plan", "RTO")
		if err := w.inflight(ctx, ent, p, path); err != nil {
			return err
		}
		if w.src.CLI != nil {
			out, err := w.cli(ctx, "plan", "--instance", inst, "--database", db)
			if err != nil {
				return err
			}
			w.compare(ent, "rw plan", oneLine(out), want, "whole plan", "RTO")
			if p.InFlight != nil {
				w.compare(ent, "rw plan", oneLine(out), figures{"in flight": human.Progress(p.InFlight.Percent)}, "in flight")
			}
		}
	}
	return nil
}

// alerts compares the alert of each open regression (its row on /alerts,
// the text its channels receive) with the regression.
func (w *walker) alerts(ctx context.Context, regs []apiRegression) error {
	if _, err := w.text(ctx, "/alerts", "page"); err != nil {
		return err
	}
	for i := range regs {
		r := &regs[i]
		if r.Status != "open" || r.Direction != "regression" || r.State == "watch" {
			continue
		}
		ent := fmt.Sprintf("regression %d", r.ID)
		row := region(w.raw["/alerts"], fmt.Sprintf("/regressions/%d\"", r.ID), "<tr", "</tr>")
		w.res.Checks++
		if row == "" {
			w.disagree(ent, "alerted", "/alerts", "an alert", "none")
			continue
		}
		want := figures{"change": human.Change(r.Ratio), "since": human.Date(r.ChangedAt), "before": human.MiBps(r.Baseline),
			"now": human.MiBps(r.Current), "restores before": human.Count(r.BaselineN) + " restores before"}
		if rg := human.ChangeRange(r.RatioLow, r.RatioHigh); rg != "unknown" {
			want["interval"] = rg
		}
		if r.HoursYear > 0 {
			want["hours a year"] = human.Hours(r.HoursYear)
		}
		text := visible(row)
		w.compare(ent, "/alerts", text, want, "change", "since", "before", "now", "interval", "hours a year", "restores before")
		w.ratios(ent, "/alerts", text, r)
	}
	return nil
}

// bareRatios flags a ratio without its words on any page ("0.98×"
// where people read "1.02× slower" or "as usual").
func (w *walker) bareRatios(surface, text string) {
	w.res.Checks++
	for _, m := range bare(text) {
		w.disagree("words", "ratio in words", surface, "a change in words", m)
	}
}

// bare is the ratios of text stated without their words: "0.29×", not
// the "1.04×" of "1.01–1.04× slower".
func bare(text string) []string {
	var out []string
	for _, ix := range bareRatioRe.FindAllStringIndex(text, -1) {
		rest := text[ix[1]:]
		if strings.HasPrefix(rest, " slower") || strings.HasPrefix(rest, " faster") {
			continue
		}
		out = append(out, strings.TrimSpace(strings.TrimLeft(text[ix[0]:ix[1]], "–-")))
	}
	return out
}

// machineKeys flags a factor's key where people read words: "unc_share"
// is "network share (UNC)" on every surface (JSON keeps the keys).
func (w *walker) machineKeys(surface, text string) {
	for _, k := range []string{"unc_share", "virtual_device", "source_build", "instance_build", "device_kind", "io_alignment", "buffer_count", "max_transfer"} {
		w.res.Checks++
		if strings.Contains(text, k) {
			w.disagree("words", "machine key", surface, "words", k)
		}
	}
}

// inflight checks that a restore of the plan's database in flight is as
// far along on /live as the plan (page and CLI) says it is.
func (w *walker) inflight(ctx context.Context, ent string, p *apiPlan, planPath string) error {
	if p.InFlight == nil {
		return nil
	}
	want := figures{"in flight": human.Progress(p.InFlight.Percent), "in flight, in all": human.Duration(p.InFlight.Expected)}
	live, err := w.text(ctx, "/live", "page")
	if err != nil {
		return err
	}
	w.compare(ent, "/live", live, want, "in flight")
	w.compare(ent, planPath, w.pages[planPath], want, "in flight", "in flight, in all")
	return nil
}

// between is h from the element holding mark up to the next end (or the
// end of h).
func between(h, mark, end string) string {
	i := strings.Index(h, mark)
	if i < 0 {
		return ""
	}
	if j := strings.Index(h[i:], ">"); j >= 0 {
		i += j + 1 // after the marked tag
	}
	if j := strings.Index(h[i:], end); j >= 0 {
		return h[i : i+j]
	}
	return h[i:]
}

// firstDiff is a's words from the first that b does not have in order.
func firstDiff(a, b string) string {
	aw, bw := strings.Fields(a), strings.Fields(b)
	for i, x := range aw {
		if i >= len(bw) || bw[i] != x {
			return strings.Join(aw[i:min(len(aw), i+8)], " ")
		}
	}
	return ""
}

// knees compares each knee the API lists with its restore's page.
func (w *walker) knees(ctx context.Context) error {
	var ks []struct {
		RestoreID int64   `json:"restore_id"`
		Instance  string  `json:"instance"`
		Database  string  `json:"database"`
		Running   bool    `json:"running"`
		Percent   float64 `json:"percent"`
		Slowdown  float64 `json:"slowdown"`
	}
	if err := w.json(ctx, "/api/knees", &ks); err != nil {
		return err
	}
	for i, k := range ks {
		if i == 40 {
			break
		}
		if k.RestoreID == 0 {
			if !k.Running {
				continue
			}
			// Running: /live and the overview's row (to its database's
			// progress) state it.
			w.res.Entities++
			ent := fmt.Sprintf("knee of the restore of %s on %s in flight", k.Database, k.Instance)
			want := figures{"knee": "after " + human.Percent(k.Percent), "slowdown": human.Times(k.Slowdown) + " slower",
				"overview knee": human.Percent(k.Percent)}
			live, err := w.text(ctx, "/live", "page")
			if err != nil {
				return err
			}
			w.compare(ent, "/live", live, want, "knee", "slowdown")
			if row := region(w.raw["/"], databasePath(k.Instance, k.Database)+"#progress\"", "<tr", "</tr>"); row != "" {
				w.compare(ent, "/", visible(row), want, "overview knee", "slowdown")
			}
			continue
		}
		w.res.Entities++
		ent := fmt.Sprintf("knee of restore %d", k.RestoreID)
		path := fmt.Sprintf("/restores/%d", k.RestoreID)
		page, err := w.text(ctx, path, "page")
		if err != nil {
			return err
		}
		want := figures{"knee": "after " + human.Percent(k.Percent), "slowdown": human.Times(k.Slowdown) + " slower",
			"overview knee": human.Percent(k.Percent)}
		w.compare(ent, path, page, want, "knee", "slowdown")
		if row := region(w.raw["/"], fmt.Sprintf("/restores/%d\"", k.RestoreID), "<tr", "</tr>"); row != "" {
			w.compare(ent, "/", visible(row), want, "overview knee", "slowdown")
		}
	}
	return nil
}

// figures are the expected texts of an entity's quantities.
type figures map[string]string

// compare checks that text states each named quantity as want has it.
func (w *walker) compare(ent, surface, text string, want figures, keys ...string) {
	for _, k := range keys {
		v, ok := want[k]
		if !ok {
			continue
		}
		w.res.Checks++
		if !strings.Contains(text, v) {
			w.disagree(ent, k, surface, v, near(text, k))
		}
	}
}

// ratios checks that every speed ratio a surface states of the entity is
// its change (either way round: "3.4× slower" is "3.4× faster" back) or
// a bound of its interval, in words — never a bare "0.29×".
func (w *walker) ratios(ent, surface, text string, r *apiRegression) {
	allowed := map[string]bool{human.Change(r.Ratio): true}
	for _, v := range []float64{r.Ratio, r.RatioLow, r.RatioHigh} {
		if v > 0 {
			allowed[human.Change(v)] = true
			allowed[human.Change(1/v)] = true
			allowed[strings.TrimSuffix(strings.TrimSuffix(human.Change(v), " slower"), " faster")] = true
		}
	}
	if rg := human.ChangeRange(r.RatioLow, r.RatioHigh); rg != "unknown" {
		allowed[rg] = true
	}
	for _, m := range bare(text) {
		w.res.Checks++
		w.disagree(ent, "change (in words)", surface, human.Change(r.Ratio), m)
	}
	for _, ix := range wordsRe.FindAllStringIndex(text, -1) {
		m := text[ix[0]:ix[1]]
		if strings.HasSuffix(text[:ix[0]], "at least ") {
			continue // the threshold the method states, not this change
		}
		w.res.Checks++
		if !allowed[m] && !allowed[strings.Fields(m)[0]] {
			w.disagree(ent, "change", surface, human.Change(r.Ratio), m)
		}
	}
}

// number compares two figures of JSON within tol.
func (w *walker) number(ent, q, surface string, want, got, tol float64) {
	w.res.Checks++
	if math.Abs(want-got) > tol*math.Max(1, math.Abs(want)) {
		w.disagree(ent, q, surface, fmt.Sprint(want), fmt.Sprint(got))
	}
}

func (w *walker) disagree(ent, q, surface, want, got string) {
	w.res.Disagreements = append(w.res.Disagreements, Disagreement{Entity: ent, Quantity: q, Surface: surface, Want: want, Got: got})
}

// dateStyle flags a page that writes a day as "16 Oct 2026": the product
// writes every date one way (store/human.Date).
func (w *walker) dateStyle(surface, text string) {
	w.res.Checks++
	if m := otherDateRe.FindString(text); m != "" {
		w.disagree("dates", "style", surface, "2026-10-16", m)
	}
}

var (
	wordsRe     = regexp.MustCompile(`\d+(?:\.\d)?× (?:slower|faster)`)
	bareRatioRe = regexp.MustCompile(`(?:^|[^\d.])\d+\.\d\d×`)
	// compareLinkRe is a link to the comparison of two builds.
	compareLinkRe = regexp.MustCompile(`href="(/compare\?a=build[^"]+)"`)
	otherDateRe   = regexp.MustCompile(`\b\d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{4}\b`)
	planLinkRe    = regexp.MustCompile(`href="(/instances/[^"]+/databases/[^"/?#]+)(?:/plan)?"`)
	tagRe         = regexp.MustCompile(`(?s)<[^>]*>`)
	hiddenRe      = regexp.MustCompile(`(?is)<(script|style|svg|template)\b.*?</(script|style|svg|template)>`)
	blockRe       = regexp.MustCompile(`(?i)<br\s*/?>|</(p|div|tr|li|h[1-6]|dd|dt|th|td|section|table|caption|figcaption|pre)>`)
)

// visible is the text a person reads of an HTML fragment, one line per
// block, spaces collapsed.
func visible(h string) string {
	h = hiddenRe.ReplaceAllString(h, "")
	h = blockRe.ReplaceAllString(h, "\n")
	h = html.UnescapeString(tagRe.ReplaceAllString(h, " "))
	var out []string
	for l := range strings.SplitSeq(h, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			out = append(out, strings.Join(f, " "))
		}
	}
	return strings.Join(out, "\n")
}

// region is the smallest open…close element of h around the first mark.
func region(h, mark, open, close string) string {
	i := strings.Index(h, mark)
	if i < 0 {
		return ""
	}
	s := strings.LastIndex(h[:i], open)
	e := strings.Index(h[i:], close)
	if s < 0 || e < 0 {
		return ""
	}
	return h[s : i+e+len(close)]
}

// lineWith is the first line of text that starts with prefix (spaces
// before it ignored), or "".
func lineWith(text, prefix string) string {
	for l := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), prefix) {
			return l
		}
	}
	return ""
}

// watchLine is the line of text naming database on instance as watched.
func watchLine(text, database, instance string) string {
	for l := range strings.SplitSeq(text, "\n") {
		if strings.Contains(l, database) && strings.Contains(l, instance) && strings.Contains(l, "than usual") {
			return l
		}
	}
	return ""
}

// oneLine joins a terminal's wrapped lines into one text.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// near is what a surface says where a quantity was looked for: a short
// excerpt for the report of a disagreement.
func near(text, _ string) string {
	if len(text) > 160 {
		return text[:160] + "…"
	}
	return text
}

func databasePath(instance, database string) string {
	return "/instances/" + url.PathEscape(instance) + "/databases/" + url.PathEscape(database)
}

func parseDatabasePath(p string) (instance, database string, ok bool) {
	rest, ok := strings.CutPrefix(p, "/instances/")
	if !ok {
		return "", "", false
	}
	i, d, ok := strings.Cut(rest, "/databases/")
	if !ok {
		return "", "", false
	}
	inst, err1 := url.PathUnescape(html.UnescapeString(i))
	db, err2 := url.PathUnescape(html.UnescapeString(d))
	return inst, db, err1 == nil && err2 == nil
}

// text reads a page once and returns its visible text.
func (w *walker) text(ctx context.Context, path, kind string) (string, error) {
	if t, ok := w.pages[path]; ok {
		return t, nil
	}
	body, err := w.src.Get(ctx, path)
	if err != nil {
		return "", fmt.Errorf("walk: GET %s: %w", path, err)
	}
	w.raw[path] = body
	w.res.Surfaces[kind]++
	t := visible(body)
	w.pages[path] = t
	return t, nil
}

func (w *walker) json(ctx context.Context, path string, v any) error {
	body, err := w.src.Get(ctx, path)
	if err != nil {
		return fmt.Errorf("walk: GET %s: %w", path, err)
	}
	w.res.Surfaces["api"]++
	if err := json.Unmarshal([]byte(body), v); err != nil {
		return fmt.Errorf("walk: %s: %w", path, err)
	}
	return nil
}

func (w *walker) plan(ctx context.Context, instance, database string) (*apiPlan, error) {
	var p apiPlan
	q := url.Values{"instance": {instance}, "database": {database}}
	if err := w.json(ctx, "/api/plan?"+q.Encode(), &p); err != nil {
		return nil, nil // a database without a plan has no restore-now figures
	}
	return &p, nil
}

func (w *walker) cli(ctx context.Context, args ...string) (string, error) {
	out, err := w.src.CLI(ctx, args...)
	if err != nil {
		return "", fmt.Errorf("walk: rw %s: %w", strings.Join(args, " "), err)
	}
	w.res.Surfaces["cli"]++
	return out, nil
}

// Sorted returns the disagreements in a stable order.
func (r *Result) Sorted() []Disagreement {
	d := slices.Clone(r.Disagreements)
	slices.SortFunc(d, func(a, b Disagreement) int { return strings.Compare(a.String(), b.String()) })
	return d
}
