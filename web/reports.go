package web

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web/chart"
	"github.com/restorewatch/restorewatch/web/view"
)

func (s *Server) handleRegressionReport(c echo.Context) error {
	id, err := parseID(c, "id")
	if err != nil {
		return err
	}
	ev, err := s.evidence(c.Request().Context(), id)
	if err != nil {
		return err
	}
	r := view.Report{Title: ev.Database + " on " + ev.Instance, CSSURL: s.reportURL}
	return s.render(c, http.StatusOK, view.RegressionReport(r, ev))
}

func (s *Server) handleBuildReport(c echo.Context) error {
	a, b := buildOperand(c.QueryParam("a")), buildOperand(c.QueryParam("b"))
	m, err := s.buildReportModel(c.Request().Context(), a, b)
	if err != nil {
		return err
	}
	r := view.Report{Title: "Build " + strings.TrimPrefix(b, "build:") + " against " + strings.TrimPrefix(a, "build:"), CSSURL: s.reportURL}
	return s.render(c, http.StatusOK, view.BuildReport(r, m))
}

// buildOperand accepts "13.0.4474.0" as well as "build:13.0.4474.0".
func buildOperand(v string) string {
	v = strings.TrimSpace(v)
	if v == "" || strings.HasPrefix(v, "build:") {
		return v
	}
	return "build:" + v
}

func (s *Server) buildReportModel(ctx context.Context, a, b string) (view.Compare, error) {
	if a == "" || b == "" {
		return view.Compare{}, store.Errorf(store.EINVALID, "a build report needs two builds: ?a=13.0.5026.0&b=13.0.4474.0")
	}
	m, err := s.compareModel(ctx, a, b)
	if err == nil && m.Problem != "" {
		err = store.Errorf(store.EINVALID, "%s", m.Problem)
	}
	return m, err
}

// RenderRegressionReport writes the self-contained evidence report of
// regression id to w (stylesheet inlined), naming builds with the
// embedded build list. The CLI's `report --regression ID` uses it.
func RenderRegressionReport(ctx context.Context, db Store, id int64, w io.Writer) error {
	s := New(Config{DB: db})
	s.oneShot = true
	return s.RenderRegressionReport(ctx, id, w)
}

// RenderBuildReport writes the self-contained comparison report of build
// b against build a ("13.0.4474.0" or "build:13.0.4474.0").
func RenderBuildReport(ctx context.Context, db Store, a, b string, w io.Writer) error {
	return New(Config{DB: db}).RenderBuildReport(ctx, a, b, w)
}

// RenderRegressionReport is RenderRegressionReport with this server's
// configuration (build names, catalogue, version).
func (s *Server) RenderRegressionReport(ctx context.Context, id int64, w io.Writer) error {
	ev, err := s.evidence(ctx, id)
	if err != nil {
		return err
	}
	standaloneEvidence(&ev)
	return view.RegressionReport(view.Report{Title: ev.Database + " on " + ev.Instance, InlineCSS: string(s.report)}, ev).Render(ctx, w)
}

// RenderBuildReport is RenderBuildReport with this server's configuration.
func (s *Server) RenderBuildReport(ctx context.Context, a, b string, w io.Writer) error {
	a, b = buildOperand(a), buildOperand(b)
	m, err := s.buildReportModel(ctx, a, b)
	if err != nil {
		return err
	}
	standaloneCompare(&m)
	title := "Build " + strings.TrimPrefix(b, "build:") + " against " + strings.TrimPrefix(a, "build:")
	return view.BuildReport(view.Report{Title: title, InlineCSS: string(s.report)}, m).Render(ctx, w)
}

// standaloneEvidence drops the links of a report saved as a file (the CLI's
// report command, its PDF): the chart points' /restores/ID lead nowhere
// outside the dashboard. Links to Microsoft's articles stay.
func standaloneEvidence(ev *view.Evidence) {
	ev.Now.PlanURL = ""
	ev.Throughput.Series = unlinkSeries(ev.Throughput.Series)
	ev.Duration.Series = unlinkSeries(ev.Duration.Series)
	// Drawn again from the unlinked points (a cached evidence's charts are
	// prerendered with their links).
	ev.Throughput, ev.Duration = ev.Throughput.Prerendered(), ev.Duration.Prerendered()
	ev.ChartNote = chartNote("Each point is one restore", ev.ChartCounts)
}

func unlinkSeries(ss []chart.Series) []chart.Series {
	out := slices.Clone(ss)
	for i := range out {
		pts := slices.Clone(out[i].Points)
		for j := range pts {
			pts[j].Href = ""
		}
		out[i].Points = pts
	}
	return out
}

// standaloneCompare drops a saved build report's links into the dashboard.
func standaloneCompare(m *view.Compare) {
	m.SideA.Href, m.SideB.Href = "", ""
	for _, c := range []*chart.BoxPlot{&m.RelChart, &m.RawChart} {
		c.Boxes = slices.Clone(c.Boxes)
		for i := range c.Boxes {
			c.Boxes[i].Href = ""
		}
	}
}
