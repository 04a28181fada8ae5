package web

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/human"
	"github.com/restorewatch/restorewatch/store/keep"
	"github.com/restorewatch/restorewatch/web/chart"
	"github.com/restorewatch/restorewatch/web/view"
)

// cohortRow is a cohort with its build's release name.
type cohortRow struct {
	analysis.Cohort
	release string
}

// cohortSet is the fleet's cohorts by instance build and by source build.
type cohortSet struct {
	instance, source []cohortRow
	measured         int
}

// cohorts computes the build cohorts, cached: it reads every measured
// restore once (a join with the series table), which takes seconds on a
// million restores, so it runs once per data version.
func (s *Server) cohorts(ctx context.Context) (cohortSet, error) {
	return cached(ctx, s, keep.NameCohorts, func(ctx context.Context) (cohortSet, error) {
		if body, ok := s.keptCurrent(ctx, keep.NameCohorts); ok {
			// Kept by the import or analyze that made this version.
			if set, err := decodeCohorts(s, body); err == nil {
				return set.(cohortSet), nil
			}
		}
		c, err := keep.CohortsOf(ctx, s.db)
		if err != nil {
			return cohortSet{}, err
		}
		return s.namedCohorts(c.Instance, c.Source, c.Measured), nil
	})
}

// namedCohorts is the cohort set with each build's release name.
func (s *Server) namedCohorts(byInst, bySrc []analysis.Cohort, measured int) cohortSet {
	named := func(cs []analysis.Cohort) []cohortRow {
		out := make([]cohortRow, len(cs))
		for i, c := range cs {
			out[i] = cohortRow{Cohort: c, release: s.cfg.Namer(c.Group)}
		}
		return out
	}
	return cohortSet{instance: named(byInst), source: named(bySrc), measured: measured}
}

func sortCohorts(cs []APICohort) {
	slices.SortStableFunc(cs, func(a, b APICohort) int { return strings.Compare(a.By, b.By) })
}

func (s *Server) handleBuilds(c echo.Context) error {
	ctx := c.Request().Context()
	set, err := s.cohorts(ctx)
	if err != nil {
		return err
	}
	insts, err := s.instances(ctx)
	if err != nil {
		return err
	}
	perBuild := map[string]int64{}
	for _, in := range insts {
		perBuild[in.Build]++
	}
	m := view.Builds{Empty: set.measured == 0, Measured: view.Plural(int64(set.measured), "restore", "restores") +
		" with a measured throughput and a series baseline."}
	m.Sections = []view.CohortSection{
		s.cohortSection("by-instance", "By instance build (the restoring server)",
			"The build of the instance that ran the restore, at the time of the restore.", set.instance, perBuild, "build"),
		s.cohortSection("by-source", "By source build (the server that took the backup)",
			"The build recorded in the backup set (software_major/minor/build_version).", set.source, nil, ""),
	}
	a, b, err := s.recentUpgrade(ctx, set.instance)
	if err != nil {
		return err
	}
	for _, r := range set.instance {
		m.Options = append(m.Options, view.Option{Value: r.Group, Label: r.Group + " " + r.release, Selected: r.Group == a})
		m.OptionsB = append(m.OptionsB, view.Option{Value: r.Group, Label: r.Group + " " + r.release, Selected: r.Group == b})
	}
	return s.render(c, http.StatusOK, view.BuildsPage(s.page(c, "Builds", "builds"), m))
}

// cohortSection shapes one grouping: the box plot (up to 24 largest
// cohorts, in build order) and the table of all.
func (s *Server) cohortSection(id, title, lede string, rows []cohortRow, perBuild map[string]int64, filterKey string) view.CohortSection {
	sec := view.CohortSection{ID: id, Title: title, Lede: lede}
	best := ""
	bestMed := 0.0
	for _, r := range rows {
		if r.N >= 10 && r.Median > bestMed {
			best, bestMed = r.Group, r.Median
		}
	}
	shown := slices.Clone(rows)
	if len(shown) > 24 {
		slices.SortStableFunc(shown, func(a, b cohortRow) int { return b.N - a.N })
		shown = shown[:24]
		keep := map[string]bool{}
		for _, r := range shown {
			keep[r.Group] = true
		}
		shown = slices.DeleteFunc(slices.Clone(rows), func(r cohortRow) bool { return !keep[r.Group] })
	}
	box := chart.BoxPlot{Frame: chart.Frame{Title: title + ": speed relative to each series' usual speed", ID: id + "-box", Width: wideW, Height: wideH},
		Refs: []chart.Reference{{Value: 1, Label: "usual speed"}}, YLabel: "× usual speed", LogY: true,
		YFormat: func(v float64) string { return view.Ratio(v) }}
	for _, r := range shown {
		b := chart.Box{Label: r.Group, Min: r.Min, Q1: r.Q1, Median: r.Median, Q3: r.Q3, Max: r.Max, N: r.N,
			CILow: r.CILow, CIHigh: r.CIHigh,
			Tooltip: fmt.Sprintf("%s %s\n%s restores\nmedian %s (95 %% %s)", r.Group, r.release, view.Int(int64(r.N)), view.Usual(r.Median), human.ChangeRange(r.CILow, r.CIHigh))}
		if filterKey != "" {
			b.Href = view.RestoresURL(filterKey, r.Group)
		}
		box.Boxes = append(box.Boxes, b)
	}
	sec.Chart = box
	for _, r := range rows {
		row := view.CohortRow{Build: r.Group, Release: r.release, N: view.Int(int64(r.N)), Median: view.Usual(r.Median),
			CI: human.ChangeRange(r.CILow, r.CIHigh), IQR: human.ChangeRange(r.Q1, r.Q3),
			Slow: r.Median <= analysis.SlowRatio, Instances: view.Unknown, Issues: s.buildIssues(r.Group)}
		if filterKey != "" {
			row.RestoresURL = view.RestoresURL(filterKey, r.Group)
			row.Instances = view.Int(perBuild[r.Group])
			if best != "" && best != r.Group {
				row.CompareURL = view.CompareURL("build:"+best, "build:"+r.Group)
			}
		}
		sec.Rows = append(sec.Rows, row)
	}
	return sec
}

// buildIssues lists the catalogued issues whose affected ranges hold the
// build, whatever the conditions (the table shows them), but never one the
// build already fixes.
func (s *Server) buildIssues(build string) []view.IssueRef {
	all := map[string]bool{}
	for _, ki := range s.issues {
		for _, c := range ki.Conditions {
			all[c] = true
		}
	}
	var out []view.IssueRef
	for _, ki := range analysis.MatchKnownIssues(s.issues, build, all) {
		if len(ki.Affected) == 0 || analysis.ContainsFix(ki, build) {
			continue
		}
		out = append(out, view.IssueRef{ID: ki.ID, Title: ki.Title, Conditions: "if " + lowerFirst(conditionWords(ki.Conditions))})
	}
	return out
}

// recentUpgrade is the pair of builds the compare form opens on: the most
// recent instance upgrade the analysis saw (a regression whose instance
// build changed: before, after), else the two builds with the most
// restores, never one build against itself.
func (s *Server) recentUpgrade(ctx context.Context, rows []cohortRow) (string, string, error) {
	has := map[string]bool{}
	for _, r := range rows {
		has[r.Group] = true
	}
	regs, err := s.regressions(ctx)
	if err != nil {
		return "", "", err
	}
	var at time.Time
	a, b := "", ""
	for _, r := range regs {
		for _, f := range r.ChangedFactors {
			if f.Factor == "instance_build" && f.Before != f.After && has[f.Before] && has[f.After] && r.ChangedAt.After(at) {
				at, a, b = r.ChangedAt, f.Before, f.After
			}
		}
	}
	if a != "" {
		return a, b, nil
	}
	top := slices.Clone(rows)
	slices.SortStableFunc(top, func(x, y cohortRow) int { return y.N - x.N })
	if len(top) < 2 {
		return "", "", nil
	}
	return top[1].Group, top[0].Group, nil
}
