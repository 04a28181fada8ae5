package web

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/human"
	"github.com/restorewatch/restorewatch/web/view"
)

// regressionTabs are the statuses the list is split by.
var regressionTabs = []struct{ status, label string }{
	{store.StatusOpen, "Open"}, {store.StatusAcknowledged, "Acknowledged"}, {store.StatusResolved, "Resolved"},
}

// regressions lists every regression (any status, slowdowns only), worst
// first, cached until the data change: the list page, the API and the
// metrics read it on every request.
func (s *Server) regressions(ctx context.Context) ([]store.Regression, error) {
	return cached(ctx, s, "regressions", func(ctx context.Context) ([]store.Regression, error) {
		return s.db.ListRegressions(ctx, store.RegressionFilter{})
	})
}

// activeRegressions are the open or acknowledged regressions of one
// instance (and database, when given), from the cached list. The instance
// name is the stored one (names compare without case in the warehouse).
func (s *Server) activeRegressions(ctx context.Context, instance, database string) ([]store.Regression, error) {
	all, err := s.regressions(ctx)
	if err != nil {
		return nil, err
	}
	var out []store.Regression
	for _, r := range withStatus(all, "active") {
		if r.Instance == instance && (database == "" || r.Database == database) {
			out = append(out, r)
		}
	}
	return out, nil
}

// totals are the warehouse's headline counts, cached likewise.
func (s *Server) totals(ctx context.Context) (store.Totals, error) {
	return cached(ctx, s, "totals", s.db.Totals)
}

// withStatus keeps the regressions of one status ("" all, "active" open
// or acknowledged), as store.RegressionFilter does.
func withStatus(regs []store.Regression, status string) []store.Regression {
	if status == "" {
		return regs
	}
	var out []store.Regression
	for _, r := range regs {
		if r.Status == status || (status == "active" && r.Status != store.StatusResolved) {
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) handleRegressions(c echo.Context) error {
	status := c.QueryParam("status")
	if status == "" {
		status = store.StatusOpen
	}
	ctx := c.Request().Context()
	all, err := s.regressions(ctx)
	if err != nil {
		return err
	}
	m := view.Regressions{Status: status}
	counts := map[string]int{}
	for _, r := range byHoursLost(all) {
		counts[r.Status]++
		if r.Status == status {
			m.Rows = append(m.Rows, s.regressionRow(r))
		}
	}
	m.Method = s.thresholdText()
	for _, t := range regressionTabs {
		m.Tabs = append(m.Tabs, view.Tab{Label: t.label + " (" + strconv.Itoa(counts[t.status]) + ")",
			Href: "/regressions?status=" + url.QueryEscape(t.status), Current: t.status == status})
	}
	if len(all) == 0 {
		tot, err := s.totals(ctx)
		if err != nil {
			return err
		}
		m.Empty = tot.Restores == 0
	}
	return s.render(c, http.StatusOK, view.RegressionsPage(s.page(c, "Regressions", "regressions"), m))
}

func (s *Server) handleRegression(c echo.Context) error {
	id, err := parseID(c, "id")
	if err != nil {
		return err
	}
	ev, err := s.evidence(c.Request().Context(), id)
	if err != nil {
		return err
	}
	form := view.StatusForm{Action: "/regressions/" + strconv.FormatInt(id, 10) + "/status", Current: ev.Status}
	return s.render(c, http.StatusOK, view.RegressionPage(s.page(c, ev.Database+" on "+ev.Instance, "regressions"), ev, form))
}

// handleRegressionStatus acknowledges, resolves or reopens a regression,
// then goes back to its page (POST-redirect-GET, so a reload does not post
// again).
func (s *Server) handleRegressionStatus(c echo.Context) error {
	id, err := parseID(c, "id")
	if err != nil {
		return err
	}
	note := strings.TrimSpace(c.FormValue("note"))
	if err := s.db.SetRegressionStatus(c.Request().Context(), id, c.FormValue("status"), note); err != nil {
		return err
	}
	if strings.Contains(c.Request().Header.Get("Accept"), "application/json") {
		return c.JSON(http.StatusOK, map[string]any{"id": id, "status": c.FormValue("status")})
	}
	return c.Redirect(http.StatusSeeOther, view.RegressionURL(id))
}

// byHoursLost orders regressions by the hours they cost a year, the most
// first (what a manager fixes first), then by how much slower they are.
func byHoursLost(regs []store.Regression) []store.Regression {
	out := slices.Clone(regs)
	slices.SortStableFunc(out, func(a, b store.Regression) int {
		ha, hb := a.HoursLostPerRestore()*a.RestoresPerYear, b.HoursLostPerRestore()*b.RestoresPerYear
		switch {
		case ha > hb:
			return -1
		case ha < hb:
			return 1
		}
		return cmp.Compare(a.Ratio, b.Ratio)
	})
	return out
}

// why says in words what explains a regression: a known issue that the
// change made apply, else the factor that best separates the restores
// before and after it, else that no recorded factor changed.
func (s *Server) why(r store.Regression) string {
	for _, id := range r.KnownIssues {
		ki := s.issue(id)
		if f := s.explains(ki, r.ChangedFactors); f != "" {
			return "Known issue " + ki.ID + ": " + ki.Title
		}
	}
	if len(r.ChangedFactors) > 0 {
		f := r.ChangedFactors[0]
		return human.FactorLabel(f.Factor) + ": " + s.factorValue(f.Factor, f.Before) + " → " + s.factorValue(f.Factor, f.After)
	}
	return "No recorded factor changed"
}

// regressionRow shapes a regression for a list.
func (s *Server) regressionRow(r store.Regression) view.RegressionRow {
	perYear := r.HoursLostPerRestore() * r.RestoresPerYear
	return view.RegressionRow{
		ID: r.ID, URL: view.RegressionURL(r.ID), ReportURL: view.RegressionReportURL(r.ID),
		Instance: r.Instance, InstanceURL: view.InstanceURL(r.Instance),
		Database: r.Database, DatabaseURL: view.DatabaseURL(r.Instance, r.Database), Kind: string(r.Kind),
		SeriesURL: view.DatabaseKindURL(r.Instance, r.Database, string(r.Kind)),
		ChangedAt: view.Date(r.ChangedAt), Ratio: view.Ratio(r.Ratio), Interval: view.Interval(r.RatioLow, r.RatioHigh),
		Baseline: view.MiBps(r.BaselineMiBps), Current: view.MiBps(r.CurrentMiBps),
		BaselineN: view.Int(int64(r.BaselineN)), CurrentN: view.Int(int64(r.CurrentN)), PValue: view.PValue(r.PValue),
		HoursPerRestore: view.Hours(r.HoursLostPerRestore()), HoursPerYear: view.Hours(perYear),
		KnownIssues: r.KnownIssues, Status: r.Status, Why: s.why(r),
	}
}
