package web

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/export"
)

// handleAPIRegressions returns one page of the regressions as a JSON array
// of SPEC §6.1 objects, in the CLI's order (unresolved first, then the
// slowest relative to their baseline, then by id); "status" filters (open,
// acknowledged, resolved, active). "limit" sets the page size (100 by
// default, at most 1000, as /api/restores); when more follow, a Link header
// (rel="next") and X-Next-Cursor give the next page's URL and "cursor", the
// id of the page's last regression: the next page starts after that
// regression's place in the order, so regressions found meanwhile before it
// shift no page.
func (s *Server) handleAPIRegressions(c echo.Context) error {
	limit, after, err := apiPaging(c)
	if err != nil {
		return err
	}
	all, err := s.regressions(c.Request().Context())
	if err != nil {
		return err
	}
	regs := withStatus(all, c.QueryParam("status"))
	if after != 0 {
		i := slices.IndexFunc(all, func(r store.Regression) bool { return r.ID == after })
		if i < 0 {
			return store.Errorf(store.EINVALID, "cursor %d: no such regression; start again without a cursor", after)
		}
		regs = regs[sort.Search(len(regs), func(j int) bool { return listOrder(&all[i], &regs[j]) < 0 }):]
	}
	if len(regs) > limit {
		regs = regs[:limit]
		next := strconv.FormatInt(regs[len(regs)-1].ID, 10)
		v := url.Values{}
		for k, x := range c.QueryParams() {
			v[k] = x
		}
		v.Set("cursor", next)
		h := c.Response().Header()
		h.Set("Link", "</api/regressions?"+v.Encode()+`>; rel="next"`)
		h.Set("X-Next-Cursor", next)
	}
	out := make([]export.RegressionRow, len(regs))
	for i := range regs {
		out[i] = export.Regression(&regs[i])
		if out[i].NextSteps, err = analysis.RegressionNextSteps(c.Request().Context(), s.db, &regs[i]); err != nil {
			return err
		}
	}
	if after == 0 {
		extra, err := s.speedUpsAndWatches(c.Request().Context(), c.QueryParam("status"))
		if err != nil {
			return err
		}
		out = append(out, extra...)
	}
	return c.JSON(http.StatusOK, out)
}

// speedUpsAndWatches are what the first page of /api/regressions carries
// after the slowdowns (issue 37): the speed-ups of the status asked for,
// and, for "", open or active, the open watches (state "watch").
func (s *Server) speedUpsAndWatches(ctx context.Context, status string) ([]export.RegressionRow, error) {
	all, err := s.db.ListRegressions(ctx, store.RegressionFilter{Status: status, Direction: "any"})
	if err != nil {
		return nil, err
	}
	var out []export.RegressionRow
	for i := range all {
		if all[i].Direction == string(analysis.Improvement) {
			out = append(out, export.Regression(&all[i]))
		}
	}
	if status == "" || status == store.StatusOpen || status == "active" {
		ws, err := s.db.ListWatches(ctx, store.WatchFilter{State: store.WatchOpen})
		if err != nil {
			return nil, err
		}
		for i := range ws {
			out = append(out, export.Watch(&ws[i]))
		}
	}
	return out, nil
}

// listOrder compares two regressions in store.ListRegressions' order:
// unresolved first, then by ratio, then by id.
func listOrder(a, b *store.Regression) int {
	ra, rb := a.Status == store.StatusResolved, b.Status == store.StatusResolved
	if ra != rb {
		if rb {
			return -1
		}
		return 1
	}
	return cmp.Or(cmp.Compare(a.Ratio, b.Ratio), cmp.Compare(a.ID, b.ID))
}

// APIInstance is an instance as the API returns it.
type APIInstance struct {
	store.InstanceSummary
	Release string `json:"release"`
}

func (s *Server) handleAPIInstances(c echo.Context) error {
	ctx := c.Request().Context()
	if _, pretty := c.QueryParams()["pretty"]; pretty {
		out, err := s.apiInstances(ctx)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, out)
	}
	// Encoded once per data version: at 3,000 instances the list is
	// 770 KiB of JSON, and encoding it was most of each request's cost.
	body, err := cached(ctx, s, "api-instances", func(ctx context.Context) ([]byte, error) {
		out, err := s.apiInstances(ctx)
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		err = json.NewEncoder(&buf).Encode(out) // as c.JSON writes it
		return buf.Bytes(), err
	})
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, body)
}

// apiInstances is the instance list as /api/instances shows it.
func (s *Server) apiInstances(ctx context.Context) ([]APIInstance, error) {
	is, err := s.instances(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]APIInstance, len(is))
	for i, in := range is {
		out[i] = APIInstance{InstanceSummary: in}
		if in.Build != "" {
			out[i].Release = s.cfg.Namer(in.Build)
		}
	}
	return out, nil
}

// APICohort is one build cohort: restores' speed relative to their own
// series' baseline, grouped by instance build or by source build.
type APICohort struct {
	By      string  `json:"by"` // instance_build | source_build
	Build   string  `json:"build"`
	Release string  `json:"release"`
	N       int     `json:"n"`
	Median  float64 `json:"median"`
	Q1      float64 `json:"q1"`
	Q3      float64 `json:"q3"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	CILow   float64 `json:"ci_low"`
	CIHigh  float64 `json:"ci_high"`
}

func (s *Server) handleAPIBuilds(c echo.Context) error {
	co, err := s.cohorts(c.Request().Context())
	if err != nil {
		return err
	}
	out := []APICohort{}
	for by, list := range map[string][]cohortRow{"instance_build": co.instance, "source_build": co.source} {
		for _, x := range list {
			out = append(out, APICohort{By: by, Build: x.Group, Release: x.release, N: x.N, Median: export.Round(x.Median, 4),
				Q1: export.Round(x.Q1, 4), Q3: export.Round(x.Q3, 4), Min: export.Round(x.Min, 4), Max: export.Round(x.Max, 4),
				CILow: export.Round(x.CILow, 4), CIHigh: export.Round(x.CIHigh, 4)})
		}
	}
	sortCohorts(out)
	return c.JSON(http.StatusOK, out)
}
