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

// regressionPage is how many regressions the list shows at once: a fleet of
// ten thousand instances has thousands open, and one page of them all was
// half a megabyte.
const regressionPage = 100

// costList is the regressions in the list's order, the most hours lost a
// year first, with their instance and database names in lower case for the
// name filter.
type costList struct {
	regs                 []store.Regression
	instances, databases []string
}

// regressionsByCost is the costList, cached with the data so that a page
// view cuts a slice instead of sorting (and lowering) the fleet's
// regressions again.
func (s *Server) regressionsByCost(ctx context.Context) (costList, error) {
	return cached(ctx, s, "regressions-by-cost", func(ctx context.Context) (costList, error) {
		all, err := s.regressions(ctx)
		if err != nil {
			return costList{}, err
		}
		l := costList{regs: byHoursLost(all), instances: make([]string, len(all)), databases: make([]string, len(all))}
		for i, r := range l.regs {
			l.instances[i], l.databases[i] = strings.ToLower(r.Instance), strings.ToLower(r.Database)
		}
		return l, nil
	})
}

// regressionQuery is what the list is narrowed to: a status tab, a name
// (instance or database, contains, case aside) and a restore kind.
type regressionQuery struct {
	status, name, kind string
	page               int
}

func readRegressionQuery(c echo.Context) (regressionQuery, error) {
	q := regressionQuery{status: c.QueryParam("status"), name: strings.TrimSpace(c.QueryParam("q")), kind: c.QueryParam("kind")}
	if q.status == "" {
		q.status = store.StatusOpen
	}
	if q.kind != "" && !store.Kind(q.kind).Valid() {
		return q, store.Errorf(store.EINVALID, "unknown restore kind %q: use full, diff, log, file or page", q.kind)
	}
	q.page = pageParam(c)
	return q, nil
}

// maxPage bounds a list's page number, so that no page's offset overflows.
const maxPage = 1_000_000

// pageParam reads a list's "page": 1 when absent or not a number.
func pageParam(c echo.Context) int {
	page, _ := strconv.Atoi(c.QueryParam("page"))
	return min(max(page, 1), maxPage)
}

// matches says whether the list's regression i passes the name and kind
// (not the status); lower is the name filter in lower case.
func (q regressionQuery) matches(l *costList, i int, lower string) bool {
	if q.kind != "" && string(l.regs[i].Kind) != q.kind {
		return false
	}
	return lower == "" || strings.Contains(l.instances[i], lower) || strings.Contains(l.databases[i], lower)
}

// url is the list's address for this query with another status and page
// (page 1 is left out); every value is query-escaped.
func (q regressionQuery) url(status string, page int) string {
	v := url.Values{"status": {status}}
	if q.name != "" {
		v.Set("q", q.name)
	}
	if q.kind != "" {
		v.Set("kind", q.kind)
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	return "/regressions?" + v.Encode()
}

// handleRegressions shows one page of the regressions of a status, the
// costliest first.
func (s *Server) handleRegressions(c echo.Context) error {
	q, err := readRegressionQuery(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	list, err := s.regressionsByCost(ctx)
	if err != nil {
		return err
	}
	m := s.regressionsModel(&list, q)
	if len(list.regs) == 0 {
		tot, err := s.totals(ctx)
		if err != nil {
			return err
		}
		m.Empty = tot.Restores == 0
	}
	return s.render(c, http.StatusOK, view.RegressionsPage(s.page(c, "Regressions", "regressions"), m))
}

// regressionsModel shapes the page of q: its rows only, but the tab counts
// and the hours lost over every regression the filters match.
func (s *Server) regressionsModel(list *costList, q regressionQuery) view.Regressions {
	all, lower := list.regs, strings.ToLower(q.name)
	counts := map[string]int{}
	var match []int // indexes into all, in its order
	var hours float64
	for i := range all {
		r := &all[i]
		if !q.matches(list, i, lower) {
			continue
		}
		counts[r.Status]++
		if r.Status == q.status {
			match = append(match, i)
			hours += r.HoursLostPerYear()
		}
	}
	m := view.Regressions{Status: q.status, Query: q.name, Method: s.thresholdText(), Filtered: q.name != "" || q.kind != ""}
	from := min((q.page-1)*regressionPage, len(match))
	to := min(from+regressionPage, len(match))
	for _, i := range match[from:to] {
		m.Rows = append(m.Rows, s.regressionRow(all[i]))
	}
	m.Total = view.Plural(int64(len(match)), q.status+" regression", q.status+" regressions") + " · " + view.Hours(hours) + " lost a year in all"
	m.Paging = regressionPaging(q, from, to, len(match))
	m.Kinds = []view.Option{{Value: "", Label: "any", Selected: q.kind == ""}}
	for _, k := range kinds {
		m.Kinds = append(m.Kinds, view.Option{Value: k, Label: k, Selected: q.kind == k})
	}
	for _, t := range regressionTabs {
		m.Tabs = append(m.Tabs, view.Tab{Label: t.label + " (" + strconv.Itoa(counts[t.status]) + ")",
			Href: q.url(t.status, 1), Current: t.status == q.status})
	}
	return m
}

// regressionPaging is the list's pager: rows from to to of n, the links
// keeping the status and filters.
func regressionPaging(q regressionQuery, from, to, n int) view.Paging {
	var p view.Paging
	if to > from {
		p.Text = view.Int(int64(from+1)) + "–" + view.Int(int64(to)) + " of " + view.Int(int64(n))
	} else if n > 0 {
		p.Text = "No regressions on this page (" + view.Int(int64(n)) + " in all)"
	}
	if q.page > 1 {
		p.Prev = q.url(q.status, min(q.page-1, max((n+regressionPage-1)/regressionPage, 1)))
	}
	if to < n {
		p.Next = q.url(q.status, q.page+1)
	}
	return p
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
		ha, hb := a.HoursLostPerYear(), b.HoursLostPerYear()
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
	// Every factor that separates the restores as cleanly as the best one
	// (buffers: BUFFERCOUNT and MAXTRANSFERSIZE changed together).
	var parts []string
	for _, f := range r.ChangedFactors {
		if f.Score < r.ChangedFactors[0].Score-0.05 || len(parts) == 3 {
			break
		}
		parts = append(parts, human.FactorLabel(f.Factor)+": "+s.factorValue(f.Factor, f.Before)+" → "+s.factorValue(f.Factor, f.After))
	}
	if len(parts) > 0 {
		return strings.Join(parts, "; ")
	}
	return "No recorded factor changed"
}

// regressionRow shapes a regression for a list.
func (s *Server) regressionRow(r store.Regression) view.RegressionRow {
	perYear := r.HoursLostPerYear()
	return view.RegressionRow{
		ID: r.ID, URL: view.RegressionURL(r.ID), ReportURL: view.RegressionReportURL(r.ID),
		Instance: r.Instance, InstanceURL: view.InstanceURL(r.Instance),
		Database: r.Database, DatabaseURL: view.DatabaseURL(r.Instance, r.Database), Kind: string(r.Kind),
		SeriesURL: view.DatabaseKindURL(r.Instance, r.Database, string(r.Kind)),
		ChangedAt: view.Date(r.ChangedAt), Ratio: human.Change(r.Ratio), Interval: human.ChangeRange(r.RatioLow, r.RatioHigh),
		Baseline: view.MiBps(r.BaselineMiBps), Current: view.MiBps(r.CurrentMiBps),
		BaselineN: view.Int(int64(r.BaselineN)), CurrentN: view.Int(int64(r.CurrentN)), PValue: view.PValue(r.PValue),
		HoursPerRestore: view.Hours(r.HoursLostPerRestore()), HoursPerYear: view.Hours(perYear),
		KnownIssues: r.KnownIssues, Status: r.Status, Why: s.why(r),
	}
}
