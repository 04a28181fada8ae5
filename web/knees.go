package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/human"
	"github.com/restorewatch/restorewatch/web/view"
)

// knees returns every knee finding (analysis.Knees), read on each view like
// the collector's runs: the curves change without changing the data version.
func (s *Server) knees(ctx context.Context) ([]analysis.KneeFinding, error) {
	return analysis.Knees(ctx, s.db, s.issues)
}

// kneesOf keeps the findings of an instance (and of a database on it, when
// database is not "").
func kneesOf(ks []analysis.KneeFinding, instance, database string) []analysis.KneeFinding {
	var out []analysis.KneeFinding
	for _, k := range ks {
		if strings.EqualFold(k.Instance, store.InstanceName(instance)) && (database == "" || k.Database == store.DatabaseName(database)) {
			out = append(out, k)
		}
	}
	return out
}

// kneeRows shapes findings for a page.
func kneeRows(ks []analysis.KneeFinding) []view.KneeRow {
	rows := make([]view.KneeRow, len(ks))
	for i := range ks {
		rows[i] = kneeRow(&ks[i])
	}
	return rows
}

// kneeRow states one finding as every page shows it.
func kneeRow(k *analysis.KneeFinding) view.KneeRow {
	r := view.KneeRow{Instance: k.Instance, InstanceURL: view.InstanceURL(k.Instance), Database: k.Database,
		DatabaseURL: view.DatabaseURL(k.Instance, k.Database), Started: view.Time(k.Started), Running: k.Running,
		Percent: human.Percent(k.Percent), Size: view.Bytes(k.Bytes), Slowdown: human.Times(k.Slowdown)}
	r.URL = r.DatabaseURL + "#progress"
	if k.RestoreID > 0 {
		r.URL = view.RestoreURL(k.RestoreID)
	}
	r.Before, r.After = perMinute(k.BeforePctMin)+" %/min", perMinute(k.AfterPctMin)+" %/min"
	if k.Bytes > 0 {
		r.Before, r.After = view.MiBps(k.BeforeMiBs), view.MiBps(k.AfterMiBs)
	}
	r.Label = fmt.Sprintf("slowed after %s: %s → %s", r.Percent, r.Before, r.After)
	if k.Bytes == 0 {
		r.Label = fmt.Sprintf("slowed after %s: %s → %s %%/min", r.Percent, perMinute(k.BeforePctMin), perMinute(k.AfterPctMin))
	}
	for _, i := range k.Issues {
		r.Issues = append(r.Issues, view.KneeIssue{ID: i.ID, Title: i.Title, Why: i.Why, Fixed: i.Fixed})
	}
	for _, c := range k.Checks {
		r.Checks = append(r.Checks, view.KneeCheck{Name: c.Name, Why: c.Why, Command: c.Command, Fits: c.Fits})
	}
	return r
}

// kneeMarks maps the restores that have a knee to the label their rows
// carry.
func kneeMarks(ks []analysis.KneeFinding) map[int64]string {
	m := map[int64]string{}
	for _, k := range ks {
		if k.RestoreID > 0 {
			m[k.RestoreID] = "slowed after " + kneeRow(&k).Percent
		}
	}
	return m
}

// handleAPIKnees returns the knee findings as a JSON array, newest start
// first; "instance" and "database" narrow it to exact names, as the pages'
// links give them.
func (s *Server) handleAPIKnees(c echo.Context) error {
	ks, err := s.knees(c.Request().Context())
	if err != nil {
		return err
	}
	if in := c.QueryParam("instance"); in != "" {
		ks = kneesOf(ks, in, c.QueryParam("database"))
	} else if d := c.QueryParam("database"); d != "" {
		return store.Errorf(store.EINVALID, "database %q: give its instance too", d)
	}
	if ks == nil {
		ks = []analysis.KneeFinding{}
	}
	return c.JSON(http.StatusOK, ks)
}
