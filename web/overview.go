package web

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/human"
	"github.com/restorewatch/restorewatch/store/keep"
	"github.com/restorewatch/restorewatch/store/plan"
	"github.com/restorewatch/restorewatch/web/chart"
	"github.com/restorewatch/restorewatch/web/view"
)

// overviewKnees is how many knees, the newest, the overview lists.
const overviewKnees = 5

func (s *Server) handleOverview(c echo.Context) error {
	ctx := c.Request().Context()
	m, err := cached(ctx, s, "overview", s.overview)
	if err != nil {
		return err
	}
	// Collector runs change without changing the data version; read them
	// on every view (one row per instance).
	if m.Collector, err = s.collectorStatus(ctx); err != nil {
		return err
	}
	// Knees come from the collector's curves too.
	ks, err := s.knees(ctx)
	if err != nil {
		return err
	}
	if len(ks) > overviewKnees {
		m.MoreKnees = len(ks) - overviewKnees
		ks = ks[:overviewKnees]
	}
	m.Knees = kneeRows(ks)
	return s.render(c, http.StatusOK, view.OverviewPage(s.page(c, "Overview", "overview"), m))
}

// overview builds the overview from the small tables, two index ranges
// and the throughput trend. It is cached whole until the data changes: the
// trend and the RTO projections read tens of thousands of index entries,
// too many for every page view of a large warehouse.
func (s *Server) overview(ctx context.Context) (view.Overview, error) {
	var m view.Overview
	tot, err := s.db.Totals(ctx)
	if err != nil {
		return m, err
	}
	f, err := s.figures(ctx)
	if err != nil {
		return m, err
	}
	if f.Empty {
		m.Empty = true
		return m, nil
	}
	// "This period" ends at the newest restore, so a warehouse of old
	// imported logs still has a meaningful period.
	end, cur, prev := f.End, f.Restores, f.RestoresPrev
	m.Period = "The 30 days to " + view.Date(end)
	m.Restores, m.RestoresPrev = view.Int(cur), change(cur, prev)
	m.Instances, m.TotalRestore = view.Int(tot.Instances), view.Int(tot.Restores)
	m.Imported = view.Time(tot.LastImport)
	s.overviewTrend(f.Weeks, &m)
	if err := s.overviewRegressions(ctx, &m); err != nil {
		return m, err
	}
	if err := s.overviewRTO(ctx, &m); err != nil {
		return m, err
	}
	exp, err := s.db.ListExposures(ctx)
	if err != nil {
		return m, err
	}
	m.Exposures = s.exposureRows(exp, 5)
	return m, nil
}

// change says how a count moved against the previous period.
func change(cur, prev int64) string {
	if prev == 0 {
		return "none in the 30 days before"
	}
	pct := (float64(cur) - float64(prev)) / float64(prev) * 100
	return view.Change(pct) + " vs the 30 days before (" + view.Int(prev) + ")"
}

// overviewTrend draws the weekly median throughput of full restores.
func (s *Server) overviewTrend(weeks []float64, m *view.Overview) {
	m.TrendLatest, m.TrendNote = view.Unknown, "no full restore with a measured throughput in the last 26 weeks"
	for i := len(weeks) - 1; i >= 0; i-- {
		if !math.IsNaN(weeks[i]) {
			m.TrendLatest = view.MiBps(weeks[i])
			m.TrendNote = "weekly median of full restores, last 26 weeks"
			m.HasTrend = true
			break
		}
	}
	m.Trend = chart.Sparkline{Frame: chart.Frame{Title: "Weekly median full-restore throughput", ID: "trend"},
		Values: weeks, MarkLast: true, Format: chart.FormatMiBps}
}

// figures are the overview's figures drawn from the fleet's orders: those
// kept at the current data version (by the import or analyze that made
// it), else computed from the orders here. Kept ones are not used when
// this server's clock is before their period's end (a clock behind the
// importer's: the period would end in this server's future).
func (s *Server) figures(ctx context.Context) (keep.Figures, error) {
	if body, ok := s.keptCurrent(ctx, keep.NameFigures); ok {
		var f keep.Figures
		if err := keep.Decode(body, &f); err == nil && f.Settled() && (f.Empty || !s.cfg.Now().Before(f.End)) {
			return f, nil
		}
	}
	o, err := s.restoreOrders(ctx)
	if err != nil {
		return keep.Figures{}, err
	}
	return keep.FiguresOf(o, s.cfg.Now()), nil
}

func (s *Server) overviewRegressions(ctx context.Context, m *view.Overview) error {
	regs, err := s.db.ListRegressions(ctx, store.RegressionFilter{Status: store.StatusOpen})
	if err != nil {
		return err
	}
	var hours float64
	for _, r := range regs {
		hours += r.HoursLostPerRestore() * r.RestoresPerYear
	}
	m.OpenCount, m.HoursPerYear = view.Int(int64(len(regs))), view.Hours(hours)
	m.MoreRegression = len(regs) > 10
	regs = byHoursLost(regs)
	for _, r := range regs[:min(len(regs), 10)] {
		m.Regressions = append(m.Regressions, s.regressionRow(r))
	}
	ws, err := s.db.ListWatches(ctx, store.WatchFilter{State: store.WatchOpen})
	if err != nil {
		return err
	}
	for i := range ws[:min(len(ws), 20)] {
		m.Watches = append(m.Watches, view.Link{Text: human.WatchLine(&ws[i]), Href: view.DatabaseURL(ws[i].Instance, ws[i].Database)})
	}
	m.MoreWatches = max(0, len(ws)-20)
	return nil
}

// overviewRTO lists the databases over their RTO target, furthest first.
func (s *Server) overviewRTO(ctx context.Context, m *view.Overview) error {
	cs, err := s.rtoCandidates(ctx)
	if err != nil {
		return err
	}
	rto, err := plan.ProjectRTO(ctx, s.planRates(), cs, s.cfg.DefaultRTO, s.cfg.Analysis.Config)
	if err != nil {
		return err
	}
	risks, checked, unknown := rto.AtRisk, rto.Checked, rto.Unknown
	m.RTOChecked, m.RTOAtRisk, m.RTOUnknown = view.Int(int64(checked)), view.Int(int64(len(risks))), view.Int(int64(len(unknown)))
	for _, c := range unknown {
		m.Unmeasured = append(m.Unmeasured, view.Link{Text: c.Database + " on " + c.Instance, Href: view.DatabaseURL(c.Instance, c.Database)})
	}
	m.MoreAtRisk = len(risks) > 10
	for _, r := range risks[:min(len(risks), 10)] {
		row := view.RTORow{
			Instance: r.Instance, InstanceURL: view.InstanceURL(r.Instance),
			Database: r.Database, DatabaseURL: view.DatabaseURL(r.Instance, r.Database),
			Size: view.Bytes(r.FullBytes + r.DiffBytes + r.LogBytes), Throughput: view.MiBps(r.MiBps),
			Expected: view.Duration(r.Expected.Seconds()), Target: view.Duration(r.Target.Seconds()),
			Over: human.Times(r.Over()) + " target",
		}
		switch {
		case r.Broken:
			row.Throughput, row.Expected, row.Over = "restore plan", "log chain broken", "the latest backup cannot be reached"
		case r.FromPlan:
			row.Throughput = "restore plan"
			row.Over += " (full, differential and logs)"
		}
		if r.FullBytes+r.DiffBytes+r.LogBytes == 0 {
			row.Size = "see its plan" // known only by its backup history or log restores
		}
		m.AtRisk = append(m.AtRisk, row)
	}
	return nil
}

// rtoCandidates are the RTO projections' candidates: those kept at the
// current data version (by the import or analyze that made it), else read
// here (every log restore since each database's newest full).
func (s *Server) rtoCandidates(ctx context.Context) ([]store.RTOCandidate, error) {
	if body, ok := s.keptCurrent(ctx, keep.NameRTO); ok {
		var k keep.RTO
		if err := keep.Decode(body, &k); err == nil {
			return k.Candidates, nil
		}
	}
	return s.db.RTOCandidates(ctx)
}

// rtoTarget is an instance's RTO target (plan.RTOTarget).
func (s *Server) rtoTarget(tags map[string]string) time.Duration {
	return plan.RTOTarget(tags, s.cfg.DefaultRTO)
}

// exposureRows groups exposures by issue and build, naming up to three
// instances each.
func (s *Server) exposureRows(exp []store.Exposure, limit int) []view.ExposureRow {
	var rows []view.ExposureRow
	idx := map[string]int{}
	counts := map[string]int64{}
	for _, e := range exp {
		key := e.IssueID + "\x00" + e.Build
		i, ok := idx[key]
		if !ok {
			ki := s.issue(e.IssueID)
			i = len(rows)
			idx[key] = i
			rows = append(rows, view.ExposureRow{IssueID: e.IssueID, Title: ki.Title, Build: e.Build,
				BuildName: s.cfg.Namer(e.Build), FixBuilds: s.fixBuilds(ki)})
		}
		counts[key]++
		if len(rows[i].Names) < 3 {
			rows[i].Names = append(rows[i].Names, view.Link{Text: e.Instance, Href: view.InstanceURL(e.Instance)})
		}
	}
	for k, i := range idx {
		rows[i].Instances = view.Int(counts[k])
	}
	slices.SortStableFunc(rows, func(a, b view.ExposureRow) int {
		return int(counts[b.IssueID+"\x00"+b.Build] - counts[a.IssueID+"\x00"+a.Build])
	})
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
	}
	return rows
}

// collectorStatus reports on live collection from each instance's latest
// collector run.
func (s *Server) collectorStatus(ctx context.Context) (view.CollectorStatus, error) {
	ok, err := s.db.HasTable(ctx, "collector_run")
	if err != nil || !ok {
		return view.CollectorStatus{Text: "No collector configured: data comes from imported files."}, err
	}
	runs, err := s.latestRuns(ctx)
	if err != nil {
		return view.CollectorStatus{}, err
	}
	if len(runs) == 0 {
		return view.CollectorStatus{Text: "No collector configured: data comes from imported files. Run restorewatch collect --config FILE to read instances live."}, nil
	}
	var last time.Time
	var failed, running int64
	for _, r := range runs {
		switch r.Status {
		case store.RunFailed, store.RunTimeout:
			failed++
		case store.RunRunning:
			running++
		}
		if r.Finished != nil && r.Finished.After(last) {
			last = *r.Finished
		}
	}
	text := fmt.Sprintf("%s collected live; the latest run finished %s.", view.Plural(int64(len(runs)), "instance", "instances"), view.Time(last))
	if failed > 0 {
		text += fmt.Sprintf(" %s failed or timed out in its latest run.", view.Plural(failed, "instance", "instances"))
	}
	if running > 0 {
		text += fmt.Sprintf(" %s running now.", view.Plural(running, "run is", "runs are"))
	}
	return view.CollectorStatus{Configured: true, Failed: failed > 0, Text: text}, nil
}

// latestRuns is the collector's latest run of every instance for the
// overview's status line. Runs do not move the data version, so the cache
// does not hold them; on a large fleet the read was half of an overview
// view (BENCHMARKS.md, the overview's row), so a read that took runsSlow
// or more is reused for runsFor. A quick one (a small fleet) is always
// fresh.
func (s *Server) latestRuns(ctx context.Context) ([]store.CollectorRun, error) {
	c := &s.runs
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs != nil && time.Since(c.at) < runsFor {
		return c.runs, nil
	}
	start := time.Now()
	runs, err := s.db.LatestRuns(ctx)
	c.runs = nil
	if err == nil && time.Since(start) >= runsSlow {
		c.runs, c.at = runs, start
	}
	return runs, err
}

// runsCache holds a slow read of the latest runs; readers share the slice
// and never change it.
type runsCache struct {
	mu   sync.Mutex
	at   time.Time
	runs []store.CollectorRun
}

const (
	runsSlow = 5 * time.Millisecond
	runsFor  = 5 * time.Second
)
