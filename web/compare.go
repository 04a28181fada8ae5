package web

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/human"
	"github.com/restorewatch/restorewatch/web/chart"
	"github.com/restorewatch/restorewatch/web/view"
)

// sideLimit caps the restores read per side: the newest 20,000, which keeps
// the bootstrap interval affordable and a comparison of two busy builds
// under a second.
const sideLimit = 20000

// operand is one side of a comparison, parsed.
type operand struct {
	raw, label, what, href string
	filter                 store.RestoreFilter
}

// parseOperand reads "build:13.0.4474.0", "period:2025-01-01..2025-03-01"
// (end exclusive), "instance:NAME" or a bare instance name.
func (s *Server) parseOperand(raw string) (operand, error) {
	op := operand{raw: raw}
	switch {
	case strings.HasPrefix(raw, "build:"):
		b := strings.TrimSpace(strings.TrimPrefix(raw, "build:"))
		if b == "" {
			return op, store.Errorf(store.EINVALID, "build: needs a version, e.g. build:13.0.4474.0")
		}
		op.filter.Build, op.what = b, "build"
		op.label = strings.TrimSpace(b + " " + s.cfg.Namer(b))
		op.href = view.RestoresURL("build", b)
	case strings.HasPrefix(raw, "period:"):
		from, to, ok := strings.Cut(strings.TrimPrefix(raw, "period:"), "..")
		f, err1 := time.Parse(time.DateOnly, strings.TrimSpace(from))
		t, err2 := time.Parse(time.DateOnly, strings.TrimSpace(to))
		if !ok || err1 != nil || err2 != nil || !t.After(f) {
			return op, store.Errorf(store.EINVALID, "period %q: write period:YYYY-MM-DD..YYYY-MM-DD with the end after the start", raw)
		}
		op.filter.From, op.filter.To, op.what = f, t, "period"
		op.label = view.Date(f) + " to " + view.Date(t) + " (end exclusive)"
		op.href = view.RestoresURL("from", view.Date(f), "to", view.Date(t.AddDate(0, 0, -1)))
	default:
		name := strings.TrimPrefix(raw, "instance:")
		op.filter.Instance, op.what, op.label, op.href = name, "instance", name, view.InstanceURL(name)
	}
	op.filter.Limit = sideLimit
	return op, nil
}

// relativeSpeeds reads one side of a comparison: the newest sideLimit
// measured restores of a build or a period are found in the cached
// RestoreOrders (no index orders the fleet by build or time), then read by
// id; an instance's through restore_series.
func (s *Server) relativeSpeeds(ctx context.Context, f store.RestoreFilter) ([]store.RelativeSpeed, error) {
	served := f
	served.Sort = "at"
	if f.Limit <= 0 || !served.Fleetwide() {
		return s.db.RelativeSpeeds(ctx, f)
	}
	o, err := s.restoreOrders(ctx)
	if err != nil {
		return nil, err
	}
	ids := o.Measured(f)
	if len(ids) == 0 {
		return nil, nil
	}
	return s.db.RelativeSpeeds(ctx, store.RestoreFilter{IDs: ids, Limit: len(ids)})
}

// comparison is the computed comparison of two operands.
type comparison struct {
	a, b     operand
	ra, rb   []store.RelativeSpeed
	rel, raw analysis.Comparison
	// matched is the like-for-like view: it reads up to sideLimit whole
	// restores a side, too slow for every view of a large warehouse, so it
	// is computed with the rest, once per version.
	matched view.Matched
	// The box plots summarise up to sideLimit restores a side each: made
	// with the rest, not on every view (two thirds of a view's time at 3 M
	// restores).
	relBox, rawBox chart.BoxPlot
}

// speed is a restore's relative speed, or its logical MiB/s.
func speed(r store.RelativeSpeed, rel bool) float64 {
	if rel {
		return r.Rel
	}
	return r.MiBps
}

// compare loads both sides and compares them, cached per operand pair.
func (s *Server) compare(ctx context.Context, rawA, rawB string) (comparison, error) {
	a, err := s.parseOperand(rawA)
	if err != nil {
		return comparison{}, err
	}
	b, err := s.parseOperand(rawB)
	if err != nil {
		return comparison{}, err
	}
	return cached(ctx, s, "compare\x00"+rawA+"\x00"+rawB, func(ctx context.Context) (comparison, error) {
		cmp := comparison{a: a, b: b}
		var err error
		if cmp.ra, err = s.relativeSpeeds(ctx, a.filter); err != nil {
			return cmp, err
		}
		if cmp.rb, err = s.relativeSpeeds(ctx, b.filter); err != nil {
			return cmp, err
		}
		pick := func(rs []store.RelativeSpeed, rel bool) []float64 {
			out := make([]float64, 0, len(rs))
			for _, r := range rs {
				out = append(out, speed(r, rel))
			}
			return out
		}
		cmp.rel = analysis.Compare(pick(cmp.ra, true), pick(cmp.rb, true), 1)
		cmp.raw = analysis.Compare(pick(cmp.ra, false), pick(cmp.rb, false), 1)
		cmp.relBox = compareBoxes("Speed relative to usual", "× usual speed", "cmp-rel", cmp, true)
		cmp.rawBox = compareBoxes("Logical throughput", "MiB/s", "cmp-raw", cmp, false)
		if len(cmp.ra) > 0 && len(cmp.rb) > 0 {
			cmp.matched, err = s.matched(ctx, a.filter, b.filter)
		}
		return cmp, err
	})
}

func (s *Server) handleCompare(c echo.Context) error {
	m, err := s.compareModel(c.Request().Context(), c.QueryParam("a"), c.QueryParam("b"))
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, view.ComparePage(s.page(c, "Compare", "compare"), m))
}

// compareModel shapes a comparison for the page and the build report. An
// operand that does not parse is a problem shown on the form, not an error
// page: the user is mid-typing.
func (s *Server) compareModel(ctx context.Context, rawA, rawB string) (view.Compare, error) {
	m := view.Compare{A: rawA, B: rawB, Generated: view.Time(s.cfg.Now()), Version: s.version()}
	if err := s.compareExamples(ctx, &m); err != nil {
		return m, err
	}
	if rawA == "" || rawB == "" {
		return m, nil
	}
	cmp, err := s.compare(ctx, rawA, rawB)
	if store.ErrorCode(err) == store.EINVALID {
		m.Problem = store.ErrorMessage(err)
		return m, nil
	} else if err != nil {
		return m, err
	}
	for _, side := range []struct {
		tag string
		op  operand
		n   int
	}{{"A", cmp.a, cmp.rel.NA}, {"B", cmp.b, cmp.rel.NB}} {
		if side.n == 0 {
			m.Problem = fmt.Sprintf("%s (%s %s) has no restore with a measured throughput and a series baseline to compare.", side.tag, side.op.what, side.op.label)
			return m, nil
		}
	}
	m.Ready = true
	m.SideA, m.SideB = compareSide(cmp.a, cmp.ra, cmp.rel, cmp.raw, true), compareSide(cmp.b, cmp.rb, cmp.rel, cmp.raw, false)
	m.Measures = []view.CompareMeasure{
		measure("Speed against each series' usual speed", cmp.rel, view.Usual),
		measure("Logical throughput (MiB/s)", cmp.raw, view.MiBps),
	}
	m.Headline = fmt.Sprintf("Restores on %s ran %s than those on %s, relative to each database's usual speed (most likely %s; %s against %s restores).",
		cmp.b.label, human.Change(cmp.rel.Ratio), cmp.a.label, human.ChangeRange(cmp.rel.RatioLow, cmp.rel.RatioHigh),
		view.Int(int64(cmp.rel.NB)), view.Int(int64(cmp.rel.NA)))
	if human.Change(cmp.rel.Ratio) == "no faster or slower" {
		m.Headline = fmt.Sprintf("Restores on %s ran no faster or slower than those on %s overall, relative to each database's usual speed (%s against %s restores).",
			cmp.b.label, cmp.a.label, view.Int(int64(cmp.rel.NB)), view.Int(int64(cmp.rel.NA)))
	}
	if slower := slowerSeries(cmp.matched); slower > 0 {
		m.Headline += fmt.Sprintf(" Like with like, %s of the %s series on both sides ran materially slower: see below.",
			view.Int(int64(slower)), view.Int(int64(cmp.matched.Series)))
	}
	m.RelChart, m.RawChart = cmp.relBox, cmp.rawBox
	if cmp.a.what == "build" && cmp.b.what == "build" {
		m.ReportURL = "/reports/builds?" + strings.TrimPrefix(view.CompareURL(rawA, rawB), "/compare?")
	}
	m.HoursNote = hoursNote(cmp)
	for _, op := range []operand{cmp.a, cmp.b} {
		if op.what == "build" {
			if ks := s.buildIssues(op.filter.Build); len(ks) > 0 {
				m.Issues = append(m.Issues, view.BuildIssues{Build: op.label, Issues: ks})
			}
		}
	}
	m.Matched = cmp.matched
	m.Method = compareMethod(cmp)
	return m, nil
}

func measure(name string, c analysis.Comparison, f func(float64) string) view.CompareMeasure {
	return view.CompareMeasure{Measure: name, A: f(c.MedianA), B: f(c.MedianB), Ratio: human.Change(c.Ratio),
		Interval: human.ChangeRange(c.RatioLow, c.RatioHigh), PValue: view.PValue(c.PValue), Slower: c.Ratio <= analysis.SlowRatio && c.PValue < 0.05}
}

func compareSide(op operand, rs []store.RelativeSpeed, rel, raw analysis.Comparison, isA bool) view.CompareSide {
	side := view.CompareSide{Label: op.label, What: op.what, Href: op.href}
	n, mr, mx := rel.NB, raw.MedianB, rel.MedianB
	if isA {
		n, mr, mx = rel.NA, raw.MedianA, rel.MedianA
	}
	side.N, side.MedianRaw, side.MedianRel = view.Int(int64(n)), view.MiBps(mr), view.Usual(mx)
	if len(rs) > 0 {
		side.Span = view.Date(rs[len(rs)-1].At) + " to " + view.Date(rs[0].At)
		if len(rs) >= sideLimit {
			side.Span += " (newest " + view.Int(sideLimit) + ")"
		}
	}
	return side
}

// compareBoxes draws both sides' distributions on one axis.
func compareBoxes(title, unit, id string, cmp comparison, rel bool) chart.BoxPlot {
	bp := chart.BoxPlot{Frame: chart.Frame{Title: title, ID: id, Width: 560, Height: 340}, YLabel: unit, LogY: true}
	if rel {
		bp.Refs = []chart.Reference{{Value: 1, Label: "usual speed"}}
	}
	for _, side := range []struct {
		op operand
		rs []store.RelativeSpeed
	}{{cmp.a, cmp.ra}, {cmp.b, cmp.rb}} {
		var pts []analysis.CohortPoint
		for _, r := range side.rs {
			pts = append(pts, analysis.CohortPoint{Group: "x", Rel: speed(r, rel)})
		}
		if cs := analysis.Cohorts(pts); len(cs) == 1 {
			c := cs[0]
			bp.Boxes = append(bp.Boxes, chart.Box{Label: side.op.label, Min: c.Min, Q1: c.Q1, Median: c.Median, Q3: c.Q3,
				Max: c.Max, N: c.N, CILow: c.CILow, CIHigh: c.CIHigh, Href: side.op.href})
		} else {
			bp.Boxes = append(bp.Boxes, chart.Box{Label: side.op.label + " (no data)"})
		}
	}
	return bp
}

// hoursNote words the time side B loses against side A (analysis.LostTo).
func hoursNote(cmp comparison) string {
	t, ok := analysis.LostTo(cmp.rel, cmp.rb)
	if !ok {
		return ""
	}
	return fmt.Sprintf("At the speed of %s, the typical restore on %s would take %s less; over the %s restores of its latest year that is %s.",
		cmp.a.label, cmp.b.label, view.Hours(t.PerRestoreH), view.Int(int64(t.Restores)), view.Hours(t.TotalH))
}

func compareMethod(cmp comparison) []view.MethodItem {
	return []view.MethodItem{
		{Term: "Restores", Text: fmt.Sprintf("Every restore with a measured logical throughput on each side, the newest %s at most per side.", view.Int(sideLimit))},
		{Term: "Relative speed", Text: "Each restore's logical MiB/s divided by the baseline median of its own series (instance, database, kind), so large and small databases compare fairly."},
		{Term: "Timestamps and size", Text: "Durations from the engine's 3014 seconds where present, else the completion line minus the measured start; size is backup_size, a striped backup counted once."},
		{Term: "Test", Text: "Two-sided Mann–Whitney rank test; the 95 % interval of the ratio of medians is a seeded percentile bootstrap (1,000 resamples), or the log-scale combination of order-statistic intervals above 20,000 restores."},
	}
}

// compareExamples offers ready comparisons: the two largest builds and the
// last two quarters, so a first visit is one click from an answer.
func (s *Server) compareExamples(ctx context.Context, m *view.Compare) error {
	insts, err := s.instances(ctx)
	if err != nil {
		return err
	}
	builds := map[string]int{}
	for _, in := range insts {
		if in.Build != "" {
			builds[in.Build]++
		}
	}
	top := topKeys(builds)
	if len(top) >= 2 {
		m.Examples = append(m.Examples, view.Link{Text: "build " + top[0] + " vs " + top[1], Href: view.CompareURL("build:"+top[0], "build:"+top[1])})
	}
	if len(insts) >= 2 {
		m.Examples = append(m.Examples, view.Link{Text: insts[0].Name + " vs " + insts[1].Name, Href: view.CompareURL(insts[0].Name, insts[1].Name)})
	}
	o, err := s.restoreOrders(ctx)
	if err != nil {
		return err
	}
	if _, last := o.Span(); !last.IsZero() {
		end := last.Truncate(24*time.Hour).AddDate(0, 0, 1)
		mid, start := end.AddDate(0, -3, 0), end.AddDate(0, -6, 0)
		p := func(a, b time.Time) string { return "period:" + view.Date(a) + ".." + view.Date(b) }
		m.Examples = append(m.Examples, view.Link{Text: "the last 3 months vs the 3 before", Href: view.CompareURL(p(start, mid), p(mid, end))})
	}
	return err
}

// topKeys returns the keys of m, largest count first.
func topKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
	return keys
}

// slowerSeries counts the like-for-like series that ran materially slower
// on B, so that the headline never says "no slower" over a table that
// lists slowdowns.
func slowerSeries(m view.Matched) int {
	n := 0
	for _, r := range m.Rows {
		if r.Slower {
			n++
		}
	}
	return n
}
