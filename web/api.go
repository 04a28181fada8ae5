package web

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/restorewatch/restorewatch/store"
)

// errStop ends a stream early without it being an error.
var errStop = errors.New("stop")

// streamJSON writes a JSON array element by element, so an export of a
// million restores never sits in memory. Once the first byte is out the
// status cannot change: an error then is logged and the array left
// unterminated, which a client's parser reports.
func streamJSON(c echo.Context, each func(emit func(any) error) error) error {
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSONCharsetUTF8)
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write([]byte("[")); err != nil {
		return err
	}
	n := 0
	err := each(func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if n > 0 {
			b = append([]byte(",\n"), b...)
		}
		n++
		_, err = w.Write(b)
		return err
	})
	if err != nil && !errors.Is(err, errStop) {
		return err
	}
	_, err = w.Write([]byte("]\n"))
	return err
}

// APIRegression is the SPEC §6.1 JSON shape of a regression, the same as
// `restorewatch regressions --format json` prints.
type APIRegression struct {
	ID                  int64       `json:"id"`
	Instance            string      `json:"instance"`
	Database            string      `json:"database"`
	Kind                string      `json:"kind"`
	ChangedAt           string      `json:"changed_at"`
	BaselineMiBps       float64     `json:"baseline_mibps"`
	CurrentMiBps        float64     `json:"current_mibps"`
	Ratio               float64     `json:"ratio"`
	RatioLow            float64     `json:"ratio_low"`
	RatioHigh           float64     `json:"ratio_high"`
	BaselineN           int         `json:"baseline_n"`
	CurrentN            int         `json:"current_n"`
	PValue              float64     `json:"p_value"`
	ChangedFactors      []APIFactor `json:"changed_factors"`
	KnownIssues         []string    `json:"known_issues"`
	HoursLostPerRestore float64     `json:"hours_lost_per_restore"`
	HoursLostPerYear    float64     `json:"hours_lost_per_year"`
	Status              string      `json:"status"`
	Note                string      `json:"note"`
}

// APIFactor is one changed factor.
type APIFactor struct {
	Factor string  `json:"factor"`
	Before string  `json:"before"`
	After  string  `json:"after"`
	Score  float64 `json:"score"`
}

func apiRegression(r *store.Regression) APIRegression {
	out := APIRegression{ID: r.ID, Instance: r.Instance, Database: r.Database, Kind: string(r.Kind),
		ChangedAt: r.ChangedAt.UTC().Format(time.RFC3339), BaselineMiBps: round(r.BaselineMiBps, 3),
		CurrentMiBps: round(r.CurrentMiBps, 3), Ratio: round(r.Ratio, 4), RatioLow: round(r.RatioLow, 4),
		RatioHigh: round(r.RatioHigh, 4), BaselineN: r.BaselineN, CurrentN: r.CurrentN, PValue: r.PValue,
		ChangedFactors: []APIFactor{}, KnownIssues: r.KnownIssues, Status: r.Status, Note: r.Note,
		HoursLostPerRestore: round(r.HoursLostPerRestore(), 2), HoursLostPerYear: round(r.HoursLostPerRestore()*r.RestoresPerYear, 1)}
	for _, f := range r.ChangedFactors {
		out.ChangedFactors = append(out.ChangedFactors, APIFactor{Factor: f.Factor, Before: f.Before, After: f.After, Score: round(f.Score, 3)})
	}
	if out.KnownIssues == nil {
		out.KnownIssues = []string{}
	}
	return out
}

func round(v float64, digits int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// handleAPIRegressions lists regressions; "status" filters (open,
// acknowledged, resolved, active).
func (s *Server) handleAPIRegressions(c echo.Context) error {
	all, err := s.regressions(c.Request().Context())
	if err != nil {
		return err
	}
	regs := withStatus(all, c.QueryParam("status"))
	out := make([]APIRegression, len(regs))
	for i := range regs {
		out[i] = apiRegression(&regs[i])
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
			out = append(out, APICohort{By: by, Build: x.Group, Release: x.release, N: x.N, Median: round(x.Median, 4),
				Q1: round(x.Q1, 4), Q3: round(x.Q3, 4), Min: round(x.Min, 4), Max: round(x.Max, 4),
				CILow: round(x.CILow, 4), CIHigh: round(x.CIHigh, 4)})
		}
	}
	sortCohorts(out)
	return c.JSON(http.StatusOK, out)
}
