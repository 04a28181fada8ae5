package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/export"
)

// handleAPIRegressions lists regressions; "status" filters (open,
// acknowledged, resolved, active).
func (s *Server) handleAPIRegressions(c echo.Context) error {
	all, err := s.regressions(c.Request().Context())
	if err != nil {
		return err
	}
	regs := withStatus(all, c.QueryParam("status"))
	out := make([]export.RegressionRow, len(regs))
	for i := range regs {
		out[i] = export.Regression(&regs[i])
	}
	return c.JSON(http.StatusOK, out)
}

// APIInstance is an instance as the API returns it.
type APIInstance struct {
	store.InstanceSummary
	Release string `json:"release"`
}

func (s *Server) handleAPIInstances(c echo.Context) error {
	is, err := s.instances(c.Request().Context())
	if err != nil {
		return err
	}
	out := make([]APIInstance, len(is))
	for i, in := range is {
		out[i] = APIInstance{InstanceSummary: in}
		if in.Build != "" {
			out[i].Release = s.cfg.Namer(in.Build)
		}
	}
	return c.JSON(http.StatusOK, out)
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
