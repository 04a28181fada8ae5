package web

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/human"
	"github.com/restorewatch/restorewatch/store/plan"
	"github.com/restorewatch/restorewatch/web/chart"
	"github.com/restorewatch/restorewatch/web/view"
)

// wideW and wideH size the full-width charts: wider than the chart
// package's default so that on a laptop a chart is not taller than the
// screen.
const (
	wideW = 1100
	wideH = 380
)

// chartLimit caps the restores drawn in one chart: the newest ones, so a
// series of years of log restores stays a readable (and fast) picture.
const chartLimit = 2000

// evidence assembles the case for one regression, for its page and its
// report alike.
func (s *Server) evidence(ctx context.Context, id int64) (view.Evidence, error) {
	// Never a version behind: a status just set shows on the page it
	// redirects to, even when the evidence took long to read.
	fresh := context.WithValue(ctx, freshKey{}, true)
	d, err := cached(fresh, s, "evidence\x00"+strconv.FormatInt(id, 10), func(ctx context.Context) (evidenceData, error) {
		return s.evidenceData(ctx, id)
	})
	if err != nil {
		return view.Evidence{}, err
	}
	ev := d.ev
	ev.Generated = view.Time(s.cfg.Now())
	if ev.Now, err = s.restoreNow(ctx, d.r); err != nil {
		return view.Evidence{}, err
	}
	return ev, nil
}

// evidenceData is a regression's evidence but for what the clock changes
// (when it was generated, what restoring takes today): read and its two
// charts drawn once per data version, not by every view (a regression's
// page and its printable report were the heaviest pages at 3 M restores).
// Its charts are prerendered: who changes their fields draws them again.
type evidenceData struct {
	ev view.Evidence
	r  *store.Regression
}

func (s *Server) evidenceData(ctx context.Context, id int64) (evidenceData, error) {
	r, err := s.db.GetRegression(ctx, id)
	if err != nil {
		return evidenceData{}, err
	}
	rs, err := s.db.ChartPoints(ctx, store.RestoreFilter{Instance: r.Instance, Database: r.Database, Kind: r.Kind, Limit: chartLimit})
	if err != nil {
		return evidenceData{}, err
	}
	sers, err := s.db.ListSeries(ctx, store.SeriesFilter{Instance: r.Instance, Database: r.Database})
	if err != nil {
		return evidenceData{}, err
	}
	var outliers []int64
	for _, se := range sers {
		if se.Kind == r.Kind {
			outliers = se.Outliers
		}
	}
	perYear := r.HoursLostPerYear()
	headline := fmt.Sprintf("%s (%s restores) on %s has restored %s than usual since %s",
		r.Database, r.Kind, r.Instance, human.Change(r.Ratio), view.Date(r.ChangedAt))
	if r.HoursLostPerRestore() > 0 {
		headline += fmt.Sprintf(", %s longer per restore", view.Hours(r.HoursLostPerRestore()))
	}
	ev := view.Evidence{
		ID: r.ID, Instance: r.Instance, InstanceURL: view.InstanceURL(r.Instance), Database: r.Database,
		DatabaseURL: view.DatabaseURL(r.Instance, r.Database), Kind: string(r.Kind),
		SeriesURL: view.DatabaseKindURL(r.Instance, r.Database, string(r.Kind)),
		ReportURL: view.RegressionReportURL(r.ID), PageURL: view.RegressionURL(r.ID),
		Direction: r.Direction, Status: r.Status, StatusNote: r.StatusNote, StatusAt: view.TimePtr(r.StatusAt),
		ChangedAt: view.Time(r.ChangedAt), Baseline: view.MiBps(r.BaselineMiBps), Current: view.MiBps(r.CurrentMiBps),
		BaselineN: view.Int(int64(r.BaselineN)), CurrentN: view.Int(int64(r.CurrentN)), Ratio: human.Change(r.Ratio),
		Interval: human.ChangeRange(r.RatioLow, r.RatioHigh), PValue: view.PValue(r.PValue), PText: view.PText(r.PValue),
		BaselineDur: view.Duration(r.BaselineDurationS), CurrentDur: view.Duration(r.CurrentDurationS),
		HoursPerRestore: view.Hours(r.HoursLostPerRestore()), RestoresPerYear: fmt.Sprintf("%.0f", r.RestoresPerYear),
		HoursPerYear: view.Hours(perYear), Note: r.Note, SizeNote: sizeNote(r),
		Version:  s.version(),
		Headline: headline + ".",
	}
	if r.ChangeRestoreID > 0 {
		ev.ChangeRestoreURL = view.RestoreURL(r.ChangeRestoreID)
	}
	ev.Throughput, ev.Duration, ev.ChartCounts = evidenceCharts(r, rs, outliers)
	ev.ChartNote = chartNote("Each point is one restore (a link to it)", ev.ChartCounts)
	for _, f := range r.ChangedFactors {
		ev.Factors = append(ev.Factors, view.FactorRow{Factor: factorLabel(f.Factor), Before: s.factorValue(f.Factor, f.Before),
			After: s.factorValue(f.Factor, f.After), Score: fmt.Sprintf("%.0f %%", f.Score*100)})
	}
	for _, id := range r.KnownIssues {
		ki := s.issue(id)
		row := s.issueRow(ki)
		row.Explains, row.Why = s.explainsHow(ki, r.ChangedFactors)
		ev.Issues = append(ev.Issues, row)
	}
	steps, err := analysis.RegressionNextSteps(ctx, s.db, r)
	if err != nil {
		return evidenceData{}, err
	}
	for _, st := range steps {
		ev.NextSteps = append(ev.NextSteps, view.NextStep{Name: st.Name, Missing: st.Missing, Why: st.Why, Where: st.Where,
			Kind: st.Kind, Command: st.Command})
	}
	if ev.Upgrade, err = s.upgradeCase(ctx, r, baselineStart(r, rs)); err != nil {
		return evidenceData{}, err
	}
	ev.Method = s.regressionMethod(r)
	ev.Throughput, ev.Duration = ev.Throughput.Prerendered(), ev.Duration.Prerendered()
	return evidenceData{ev: ev, r: r}, nil
}

// restoreNow says what restoring r's database takes today by its restore
// plan — the one estimator (plan.Rate) the plan page, the API, the CLI
// and the overview's RTO read — and whether that misses the RTO. A
// database whose chain cannot be planned has no such section.
func (s *Server) restoreNow(ctx context.Context, r *store.Regression) (view.RestoreNow, error) {
	req := plan.Request{Instance: r.Instance, Database: r.Database, DefaultRTO: s.cfg.DefaultRTO,
		Analysis: s.cfg.Analysis.Config, Calibrate: true, Now: s.cfg.Now()}
	var p plan.Plan
	var err error
	if s.oneShot {
		p, _, err = plan.Make(ctx, s.db, req)
	} else {
		p, _, err = s.makePlan(ctx, req)
	}
	var gap *plan.GapError
	switch {
	case errors.As(err, &gap), store.ErrorCode(err) == store.ENOTFOUND, store.ErrorCode(err) == store.EINVALID:
		return view.RestoreNow{}, nil
	case err != nil:
		return view.RestoreNow{}, err
	}
	i := slices.IndexFunc(p.Steps, func(st plan.Step) bool { return st.Kind == r.Kind })
	if i < 0 || p.Steps[i].Estimate.N == 0 {
		return view.RestoreNow{}, nil
	}
	e := p.Steps[i].Estimate
	now := view.RestoreNow{PlanURL: view.DatabaseURL(r.Instance, r.Database) + "/plan", Basis: e.Basis}
	now.Text = fmt.Sprintf("By its restore plan, a %s restore would take about %s now (%s – %s).",
		kindNoun(r.Kind), human.Duration(e.Seconds), human.Duration(e.LowS), human.Duration(e.HighS))
	if p.RTO > 0 && p.TotalS > 0 {
		now.Over = p.OverRTO
		now.RTO = fmt.Sprintf("The whole plan, to the latest backup, takes %s against an RTO of %s: within it.",
			human.Duration(p.TotalS), human.Duration(p.RTO.Seconds()))
		if p.OverRTO {
			now.RTO = fmt.Sprintf("The whole plan, to the latest backup, takes %s against an RTO of %s: it misses the RTO by %s.",
				human.Duration(p.TotalS), human.Duration(p.RTO.Seconds()), human.Duration(p.TotalS-p.RTO.Seconds()))
		}
	}
	return now, nil
}

// kindNoun names a restore kind in a sentence: "full", "differential", "log".
func kindNoun(k store.Kind) string {
	if k == store.KindDiff {
		return "differential"
	}
	return string(k)
}

// measuredSpan is the time span of the points with a value (zero: none).
func measuredSpan(pts []store.ChartPoint, v func(*store.ChartPoint) *float64) (from, to time.Time) {
	for i := range pts {
		if x := v(&pts[i]); x == nil || !(*x > 0) {
			continue
		}
		if from.IsZero() || pts[i].At.Before(from) {
			from = pts[i].At
		}
		if pts[i].At.After(to) {
			to = pts[i].At
		}
	}
	return from, to
}

// baselineStart is the first of the restores the regression's baseline
// counts: the BaselineN-th restore before the change (outliers aside,
// which the baseline leaves out too: close enough for a period's start);
// zero when the chart does not reach back that far.
func baselineStart(r *store.Regression, rs []store.ChartPoint) time.Time {
	var before []time.Time
	for _, p := range rs {
		if p.At.Before(r.ChangedAt) && p.MiBps != nil {
			before = append(before, p.At)
		}
	}
	slices.SortFunc(before, time.Time.Compare)
	if r.BaselineN <= 0 || len(before) < r.BaselineN {
		return time.Time{}
	}
	return before[len(before)-r.BaselineN]
}

// chartNote explains the evidence charts: what a point is, the band of a
// dense series, outliers, the lines, and what the charts count.
func chartNote(point, counts string) string {
	return point + "; a dense series is drawn as the band its middle 80 % fills, with its median, and the restores beyond the band as points. " +
		"Hollow points are outliers, left out of the medians. The solid line marks the change point; dashed lines are the medians. " + counts + "."
}

// sizeNote tells a DBA whether the duration grew because the database did.
func sizeNote(r *store.Regression) string {
	switch {
	case r.SizeGrowth <= 0 || r.DurationRatio <= 0:
		return "The backup sizes or durations on one side are unknown, so duration and size cannot be set against each other."
	case analysis.SizeExplains(r.SizeGrowth, r.DurationRatio):
		return fmt.Sprintf("A restore takes %s where it took %s, and the backup %s: the size explains the duration, and throughput is what changed only if the figure above says so.",
			view.Duration(r.CurrentDurationS), view.Duration(r.BaselineDurationS), growth(r.SizeGrowth))
	}
	return fmt.Sprintf("A restore takes %s where it took %s, while the backup %s: the database did not grow enough to explain it; the restores themselves got %s.",
		view.Duration(r.CurrentDurationS), view.Duration(r.BaselineDurationS), growth(r.SizeGrowth), map[bool]string{true: "slower", false: "faster"}[r.DurationRatio > r.SizeGrowth])
}

// growth words how a backup's median size changed: "grew 2 %", "shrank
// 10 %", "kept its size".
func growth(g float64) string {
	pct := math.Round((g - 1) * 100)
	switch {
	case pct > 0:
		return fmt.Sprintf("grew %.0f %%", pct)
	case pct < 0:
		return fmt.Sprintf("shrank %.0f %%", -pct)
	}
	return "kept its size"
}

// evidenceCharts draws the series' throughput (on a log scale when it spans
// a wide range: a drop to a third then looks as big at 50 MiB/s as at 900)
// and duration, before and after the change in two marker shapes, with the
// medians and the change point.
func evidenceCharts(r *store.Regression, rs []store.ChartPoint, outliers []int64) (tput, dur chart.TimeScatter, note string) {
	isOut := idSet(outliers)
	// rs is newest first: the restores since the change come first.
	split := len(rs)
	for i := range rs {
		if rs[i].At.Before(r.ChangedAt) {
			split = i
			break
		}
	}
	since, earlier := rs[:split], rs[split:]
	tp := func(p *store.ChartPoint) *float64 { return p.MiBps }
	dp := func(p *store.ChartPoint) *float64 { return p.DurationS }
	// The axis starts at the first measured restore, not at older restores
	// whose speed is unknown (months of empty axis before the data), and
	// the median before is drawn over the restores it counts only.
	from, to := measuredSpan(rs, tp)
	if f, t := measuredSpan(rs, dp); !f.IsZero() && (from.IsZero() || f.Before(from)) {
		from = f
		if t.After(to) {
			to = t
		}
	}
	if from.IsZero() {
		from, to = span(rs)
	}
	baseFrom := baselineStart(r, rs)
	before, bBand, nb := marks("before the change", 0, earlier, isOut, tp, from, to)
	after, aBand, na := marks("since the change", 1, since, isOut, tp, from, to)
	dBefore, dbBand, db := marks("before the change", 0, earlier, isOut, dp, from, to)
	dAfter, daBand, da := marks("since the change", 1, since, isOut, dp, from, to)
	note = chartCounts(len(rs), len(rs), nb+na, db+da)
	cp := []chart.ChangePoint{{T: r.ChangedAt, Label: "change " + view.Date(r.ChangedAt)}}
	tput = chart.TimeScatter{
		Frame:  chart.Frame{Title: "Logical throughput of each restore (MiB/s)", ID: "ev-tput", Width: wideW, Height: wideH},
		Series: []chart.Series{before, after}, Bands: bands(bBand, aBand), ChangePoints: cp, YLabel: "MiB/s",
		LogY: spansDecades(before, after) || bandSpansDecades(bBand, aBand), YFromZero: true, From: from, To: to,
		RefLines: []chart.RefLine{
			{Y: r.BaselineMiBps, From: baseFrom, To: r.ChangedAt, Label: "median before " + view.MiBps(r.BaselineMiBps)},
			{Y: r.CurrentMiBps, From: r.ChangedAt, Label: "median since " + view.MiBps(r.CurrentMiBps)},
		},
	}
	dur = chart.TimeScatter{
		Frame:  chart.Frame{Title: "Duration of each restore", ID: "ev-dur", Width: wideW, Height: wideH},
		Series: []chart.Series{dBefore, dAfter}, Bands: bands(dbBand, daBand), ChangePoints: cp, YLabel: "duration", YFromZero: true,
		YFormat: chart.FormatDuration, From: from, To: to,
	}
	if r.BaselineDurationS > 0 && r.CurrentDurationS > 0 {
		dur.RefLines = []chart.RefLine{
			{Y: r.BaselineDurationS, From: baseFrom, To: r.ChangedAt, Label: "median before " + view.Duration(r.BaselineDurationS)},
			{Y: r.CurrentDurationS, From: r.ChangedAt, Label: "median since " + view.Duration(r.CurrentDurationS)},
		}
	}
	return tput, dur, note
}

// spansDecades reports whether the values run over more than a factor of
// 4, where a log axis reads better; a narrower range is drawn linear from
// zero so that a stable series is not squeezed against one edge.
func spansDecades(series ...chart.Series) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, p := range s.Points {
			if p.V > 0 {
				lo, hi = math.Min(lo, p.V), math.Max(hi, p.V)
			}
		}
	}
	return hi/lo > 4
}

// regressionMethod explains how the figures were made (SPEC §5's "which
// timestamps, which size, which test").
func (s *Server) regressionMethod(r *store.Regression) []view.MethodItem {
	c := s.cfg.Analysis.Config
	return []view.MethodItem{
		{Term: "Unit", Text: fmt.Sprintf("The series of %s restores of %s on %s, in the order they finished.", r.Kind, r.Database, r.Instance)},
		{Term: "Timestamps", Text: "Duration: the engine's own seconds (message 3014), else the completion line minus restore_date where restore_date was measured to be the start, else an Agent job step's duration (an upper bound). Instants in UTC, by the instance's offset at the time."},
		{Term: "Size", Text: "Throughput: backupset.backup_size (a striped backup once) ÷ duration, in MiB/s; where msdb's row is gone, pages × 8 KiB (message 3014)."},
		{Term: "Baseline", Text: fmt.Sprintf("The median throughput of the %d restores before the change point; current is the median of the %d since. Brief outliers are shown but left out of both medians.", r.BaselineN, r.CurrentN)},
		{Term: "Change point", Text: "Located by penalised least squares on log throughput; the change is dated at the first slow restore."},
		{Term: "Test", Text: fmt.Sprintf("One-sided Mann–Whitney rank test of after against before, significant below %s: %s. The 95 %% interval of the ratio is a seeded percentile bootstrap (%s resamples) of the ratio of medians.",
			strconv.FormatFloat(c.Alpha, 'g', -1, 64), view.PText(r.PValue), view.Int(int64(c.Bootstrap)))},
		{Term: "Threshold", Text: "A series is flagged when " + s.thresholdText() + "."},
		{Term: "Hours lost", Text: fmt.Sprintf("Per restore: median duration since the change minus median before (%s − %s). Per year: that × %.0f restores a year, the series' rate over its history.",
			view.Duration(r.CurrentDurationS), view.Duration(r.BaselineDurationS), r.RestoresPerYear)},
	}
}

// thresholdText is the one description of what makes a regression, built
// from the analysis configuration this server was given (serve's, report's
// and demo's --ratio, --min-each and --alpha), so that the evidence page,
// the report and the list never state a threshold the analysis did not use.
func (s *Server) thresholdText() string {
	c := s.cfg.Analysis.Config
	sooner := "" // the confirmation at the second slow restore (issue 37), on unless --min-each asks for more
	if c.MinEach <= analysis.DefaultConfig().MinEach {
		sooner = fmt.Sprintf(" (or 2 in a row beyond all of the last %d)", analysis.UsualWindow)
	}
	text := fmt.Sprintf("its restores became at least %s (median throughput), with at least %s restores on each side%s and the rank test below %s",
		human.Change(c.Ratio), view.Int(int64(c.MinEach)), sooner, strconv.FormatFloat(c.Alpha, 'g', -1, 64))
	return text
}

func factorLabel(f string) string { return human.FactorLabel(f) }

// factorValue names builds in factor values and says "unknown" for blanks.
func (s *Server) factorValue(factor, v string) string {
	switch {
	case v == "":
		return "unknown"
	case factor == "instance_build" || factor == "source_build":
		if n := s.cfg.Namer(v); n != "" {
			return v + " (" + n + ")"
		}
	}
	return human.FactorValue(factor, v)
}
