package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/export"
	"github.com/restorewatch/restorewatch/web/view"
)

// pageSize is the restores list's page; countCap bounds the count query so
// a filter matching a million restores still answers at once ("10,000+").
const (
	pageSize = 100
	countCap = 10000
)

// sorts are the orders of the restores list.
var sorts = []struct {
	value, label, column string
	asc                  bool
}{
	{"newest", "Newest first", "at", false}, {"oldest", "Oldest first", "at", true},
	{"longest", "Longest first", "duration", false}, {"shortest", "Shortest first", "duration", true},
	{"slowest", "Slowest first (MiB/s)", "throughput", true}, {"fastest", "Fastest first (MiB/s)", "throughput", false},
}

// sortAliases are the column names a user may guess for an order.
var sortAliases = map[string]string{"duration": "longest", "throughput": "slowest", "time": "newest", "at": "newest"}

var kinds = []string{"full", "diff", "log", "file", "page"}

// restoreFilter reads the filters shared by the list, the CSV export and the
// API. Dates are UTC days; "to" is inclusive, so it ends a day later.
func restoreFilter(c echo.Context) (store.RestoreFilter, view.RestoreFilter, error) {
	q := c.QueryParams()
	form := view.RestoreFilter{Instance: q.Get("instance"), Database: q.Get("database"), Kind: q.Get("kind"),
		From: q.Get("from"), To: q.Get("to"), Build: strings.TrimSpace(q.Get("build")), Source: q.Get("source"), Sort: q.Get("sort")}
	f := store.RestoreFilter{Instance: form.Instance, Database: form.Database, Kind: store.Kind(form.Kind),
		Build: form.Build, Source: form.Source}
	if form.Kind != "" && !f.Kind.Valid() {
		return f, form, store.Errorf(store.EINVALID, "unknown restore kind %q: use full, diff, log, file or page", form.Kind)
	}
	var err error
	if f.From, err = parseDay(form.From, "from"); err != nil {
		return f, form, err
	}
	if f.To, err = parseDay(form.To, "to"); err != nil {
		return f, form, err
	}
	if !f.To.IsZero() && len(form.To) == len(time.DateOnly) {
		f.To = f.To.AddDate(0, 0, 1)
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		return f, form, store.Errorf(store.EINVALID, "from %s is after to %s: swap them", form.From, form.To)
	}
	if form.Sort == "" {
		form.Sort = "newest"
	}
	if alias, ok := sortAliases[form.Sort]; ok {
		form.Sort = alias
	}
	for _, s := range sorts {
		if s.value == form.Sort {
			f.Sort, f.Asc = s.column, s.asc
		}
	}
	if f.Sort == "" {
		names := make([]string, len(sorts))
		for i, s := range sorts {
			names[i] = s.value
		}
		return f, form, store.Errorf(store.EINVALID, "unknown order %q: use sort=%s (or duration for longest, throughput for slowest, time for newest)",
			form.Sort, strings.Join(names, ", "))
	}
	return f, form, nil
}

// parseDay reads a from or to as every flag and query takes an instant
// (store.ParseTime).
func parseDay(s, name string) (time.Time, error) { return store.ParseTime(name, s) }

func (s *Server) handleRestores(c echo.Context) error {
	f, form, err := restoreFilter(c)
	if err != nil {
		return err
	}
	miss, err := s.resolveNames(c.Request().Context(), &f)
	if err != nil {
		return err
	}
	page, _ := strconv.Atoi(c.QueryParam("page"))
	page = max(page, 1)
	f.Limit, f.Offset = pageSize, (page-1)*pageSize
	rs, total, exact, err := s.pageRestores(c.Request().Context(), f)
	if err != nil {
		return err
	}
	m := s.restoresModel(c, f, form, rs, total, exact)
	m.Paging = paging(c, page, len(rs), total, exact)
	m.NoMatch = miss
	if err := s.restoresKnees(c.Request().Context(), f, rs, &m); err != nil {
		return err
	}
	return s.render(c, http.StatusOK, view.RestoresPage(s.page(c, "Restores", "restores"), m))
}

// restoresKnees lists the knees of the filter's instance and database (all
// when it names neither) and marks the rows of the page that have one.
func (s *Server) restoresKnees(ctx context.Context, f store.RestoreFilter, rs []store.Restore, m *view.Restores) error {
	ks, err := s.knees(ctx)
	if err != nil {
		return err
	}
	switch {
	case f.Instance != "":
		ks = kneesOf(ks, f.Instance, f.Database)
	case f.Database != "":
		ks = slices.DeleteFunc(ks, func(k analysis.KneeFinding) bool { return k.Database != store.DatabaseName(f.Database) })
	}
	m.Knees = kneeRows(ks)
	marks := kneeMarks(ks)
	for i := range m.Rows {
		m.Rows[i].Knee = marks[rs[i].ID]
	}
	return nil
}

// pageRestores reads one page of the list through the one restore query:
// every page not narrowed to an instance comes from the cached
// RestoreOrders (no index orders the whole fleet by time, a measure, kind,
// build, database or source server), an instance's through restore_series.
// Until the orders are at hand (a start loads them), the unfiltered list's
// first pages come from the heads kept with them (orderHeads).
func (s *Server) pageRestores(ctx context.Context, f store.RestoreFilter) ([]store.Restore, int, bool, error) {
	orders := func(ctx context.Context) (store.OrderedPages, error) { return s.restoreOrders(ctx) }
	q := store.RestoreQuery{Filter: f, CountCap: countCap, Orders: orders}
	if s.Orders() == nil {
		q.Heads = s.orderHeads
	}
	p, err := s.db.Restores(ctx, q)
	return p.Restores, p.Total, p.Exact, err
}

// restoresModel shapes one page of the list with its form and links.
func (s *Server) restoresModel(c echo.Context, f store.RestoreFilter, form view.RestoreFilter, rs []store.Restore, total int, exact bool) view.Restores {
	q := filterQuery(c, "page", "sort")
	m := view.Restores{Filter: form, Total: countText(total, exact), CSV: "/restores.csv?" + q, JSON: "/api/restores?" + q,
		Empty: total == 0 && form == (view.RestoreFilter{Sort: "newest"})}
	for _, r := range rs {
		m.Rows = append(m.Rows, s.restoreRow(&r, false))
	}
	if f.Sort != "at" {
		m.Note = "Restores whose " + f.Sort + " is unknown are left out of this order."
	}
	m.Kinds = []view.Option{{Value: "", Label: "any", Selected: form.Kind == ""}}
	for _, k := range kinds {
		m.Kinds = append(m.Kinds, view.Option{Value: k, Label: k, Selected: form.Kind == k})
	}
	for _, so := range sorts {
		m.Sorts = append(m.Sorts, view.Option{Value: so.value, Label: so.label, Selected: form.Sort == so.value})
	}
	return m
}

func countText(total int, exact bool) string {
	if !exact {
		return view.Int(int64(total)) + "+ restores"
	}
	return view.Plural(int64(total), "restore", "restores")
}

// filterQuery is the request's query without the named keys.
func filterQuery(c echo.Context, drop ...string) string {
	q := url.Values{}
	for k, v := range c.QueryParams() {
		q[k] = v
	}
	for _, k := range drop {
		q.Del(k)
	}
	for k, v := range q {
		if len(v) == 0 || v[0] == "" {
			q.Del(k)
		}
	}
	return q.Encode()
}

// paging builds the pager: pages of pageSize, links keep the filters.
func paging(c echo.Context, page, n, total int, exact bool) view.Paging {
	link := func(p int) string {
		q := filterQuery(c, "page")
		if q != "" {
			q += "&"
		}
		return "/restores?" + q + "page=" + strconv.Itoa(p)
	}
	from := (page-1)*pageSize + 1
	var p view.Paging
	if n == 0 {
		p.Text = "No restores on this page"
	} else {
		p.Text = fmt.Sprintf("%s–%s of %s", view.Int(int64(from)), view.Int(int64(from+n-1)), countText(total, exact))
	}
	if page > 1 {
		p.Prev = link(page - 1)
	}
	if n == pageSize && (!exact || from+n-1 < total) {
		p.Next = link(page + 1)
	}
	return p
}

// restoreRow shapes a restore for a table.
func (s *Server) restoreRow(r *store.Restore, outlier bool) view.RestoreRow {
	row := view.RestoreRow{URL: view.RestoreURL(r.ID), At: view.Time(r.At), Instance: r.Instance,
		InstanceURL: view.InstanceURL(r.Instance), Database: r.Database, DatabaseURL: view.DatabaseURL(r.Instance, r.Database),
		Kind: string(r.Kind), Duration: view.DurationPtr(r.DurationS), DurationSource: "duration source: " + r.DurationSource,
		Size: view.BytesPtr(r.BackupBytes), Throughput: view.MiBpsPtr(r.LogicalMiBps), Read: view.MiBpsPtr(r.ReadMiBps),
		Build: r.InstanceBuild, Source: r.SourceServer, Outlier: outlier}
	if r.InstanceBuild != "" {
		row.BuildName = s.cfg.Namer(r.InstanceBuild)
	}
	if row.Source == "" {
		row.Source = view.Unknown
	}
	return row
}

// handleRestoresCSV streams the filtered restores as CSV, every value from a
// server neutralised against spreadsheet formulas by export.CSVWriter.
func (s *Server) handleRestoresCSV(c echo.Context) error {
	f, _, err := restoreFilter(c)
	if err != nil {
		return err
	}
	if _, err := s.resolveNames(c.Request().Context(), &f); err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="restores.csv"`)
	c.Response().WriteHeader(http.StatusOK)
	w, err := export.NewCSVWriter(c.Response())
	if err != nil {
		return err
	}
	_, err = s.db.Restores(c.Request().Context(), store.RestoreQuery{Filter: f, Series: true, Each: func(r *store.Restore) error {
		return w.Write(export.Row(r, s.cfg.Namer))
	}})
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// API page sizes of /api/restores: a page is cheap whatever the warehouse
// holds, and a client walks the rest with the cursor of the Link header.
const (
	apiPageSize = 100
	apiMaxPage  = 1000
)

// handleAPIRestores returns one page of the filtered restores as a JSON
// array of SPEC §6.1 objects, in series order (instance, database, kind,
// time). "limit" sets the page size (100 by default, at most 1000); when
// more restores follow, a Link header (rel="next") and X-Next-Cursor give
// the next page's URL and "cursor".
func (s *Server) handleAPIRestores(c echo.Context) error {
	f, _, err := restoreFilter(c)
	if err != nil {
		return err
	}
	if _, err := s.resolveNames(c.Request().Context(), &f); err != nil {
		return err
	}
	limit, after, err := apiPaging(c)
	if err != nil {
		return err
	}
	f.Limit = limit + 1 // one more tells whether a next page exists
	p, err := s.db.Restores(c.Request().Context(), store.RestoreQuery{Filter: f, Series: true, After: after})
	if err != nil {
		return err
	}
	rs := p.Restores
	if len(rs) > limit {
		rs = rs[:limit]
		next := strconv.FormatInt(rs[len(rs)-1].ID, 10)
		q := c.QueryParams()
		v := url.Values{}
		for k, x := range q {
			v[k] = x
		}
		v.Set("cursor", next)
		h := c.Response().Header()
		h.Set("Link", "</api/restores?"+v.Encode()+`>; rel="next"`)
		h.Set("X-Next-Cursor", next)
	}
	out := make([]export.RestoreRow, len(rs))
	for i := range rs {
		out[i] = export.Row(&rs[i], s.cfg.Namer)
	}
	ks, err := s.knees(c.Request().Context())
	if err != nil {
		return err
	}
	export.AttachKnees(out, ks)
	return c.JSON(http.StatusOK, out)
}

// apiPaging reads "limit" and "cursor".
func apiPaging(c echo.Context) (limit int, after int64, err error) {
	limit = apiPageSize
	if v := c.QueryParam("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > apiMaxPage {
			return 0, 0, store.Errorf(store.EINVALID, "limit %q: use a whole number from 1 to %d", v, apiMaxPage)
		}
	}
	if v := c.QueryParam("cursor"); v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 1 {
			return 0, 0, store.Errorf(store.EINVALID, "cursor %q: use the value of a previous response's X-Next-Cursor header", v)
		}
	}
	return limit, after, nil
}

// ordersKey is the cache's key of the fleet's orders.
const ordersKey = "restore-orders"

// restoreOrders returns the fleet's orders, cached until the data change
// (see cache for when a previous copy is served meanwhile) and then updated
// from the previous ones with what changed, not rebuilt (a rebuild reads
// every restore; BENCHMARKS.md has its cost); the first ones come from what
// the previous run kept (updateOrders).
func (s *Server) restoreOrders(ctx context.Context) (store.FleetOrders, error) {
	return cachedUpdated(ctx, s, ordersKey, s.updateOrders)
}
