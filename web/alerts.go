package web

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web/view"
)

// alertsShown is how many alerts the page lists, newest first.
const alertsShown = 200

// handleAlerts lists alerts with each channel's delivery state (sent,
// retrying with the error, silenced and by whom, waiting for the digest)
// and the silences in force.
func (s *Server) handleAlerts(c echo.Context) error {
	ctx := c.Request().Context()
	f := store.AlertFilter{Kind: c.QueryParam("kind"), State: c.QueryParam("state"), Limit: alertsShown}
	if f.Kind != "" && !slices.Contains(store.AlertKinds, f.Kind) {
		return echo.NewHTTPError(http.StatusBadRequest, "Unknown kind: choose one of "+strings.Join(store.AlertKinds, ", ")+".")
	}
	as, err := s.db.Alerts(ctx, f)
	if err != nil {
		return err
	}
	sil, err := s.db.Silences(ctx, s.cfg.Now())
	if err != nil {
		return err
	}
	m := alertsModel(as, sil)
	m.Kind, m.State = f.Kind, f.State
	m.Empty = len(as) == 0 && f.Kind == "" && f.State == ""
	return s.render(c, http.StatusOK, view.AlertsPage(s.page(c, "Alerts", "alerts"), m))
}

// alertsModel shapes alerts and silences for the page.
func alertsModel(as []store.Alert, sil []store.AlertSilence) view.Alerts {
	m := view.Alerts{}
	for _, k := range store.AlertKinds {
		m.Kinds = append(m.Kinds, view.KindOption{Value: k, Label: store.AlertKindLabel(k)})
	}
	states := map[string]int{}
	for i := range as {
		a := &as[i]
		r := view.AlertRow{ID: a.ID, Key: a.Key, Created: view.Time(a.Created), Severity: a.Severity, Kind: store.AlertKindLabel(a.Kind),
			Title: a.Title, Summary: a.Summary, NextStep: a.NextStep, URL: a.Link, Since: view.Time(a.Since),
			AckAction: "/alerts/" + strconv.FormatInt(a.ID, 10) + "/ack"}
		if r.URL == "" || !strings.HasPrefix(r.URL, "/") || strings.HasPrefix(r.URL, "//") {
			r.URL = "/alerts#alert-" + strconv.FormatInt(a.ID, 10) // only the dashboard's own pages are linked
		}
		if a.AckedBy != "" {
			r.Acked = "acknowledged by " + a.AckedBy + ": " + a.AckNote
		}
		for _, d := range a.Deliveries {
			cell := view.DeliveryCell{Channel: d.Channel, State: d.State}
			switch {
			case d.State == store.DeliverySent && d.SentAt != nil:
				cell.Detail = view.Time(*d.SentAt)
			case d.State == store.DeliveryRetrying:
				cell.Detail = fmt.Sprintf("attempt %d failed: %s; next %s", d.Attempts, d.LastError, view.Time(d.NextAt))
			case d.State == store.DeliveryPending && d.Mode == store.ModeDigest:
				cell.Detail = "in the digest of " + view.Time(d.NextAt)
			case d.State == store.DeliverySilenced:
				cell.Detail = d.Note
			}
			states[d.State]++
			r.Deliveries = append(r.Deliveries, cell)
		}
		m.Rows = append(m.Rows, r)
	}
	m.Summary = fmt.Sprintf("%d alerts (newest %d shown)", len(as), alertsShown)
	var parts []string
	for _, st := range []string{store.DeliverySent, store.DeliveryPending, store.DeliveryRetrying, store.DeliverySilenced} {
		if n := states[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	if len(parts) > 0 {
		m.Summary += "; deliveries: " + strings.Join(parts, ", ")
	}
	for _, x := range sil {
		var what []string
		if x.Instance != "" {
			what = append(what, "instance "+x.Instance)
		}
		if x.Kind != "" {
			what = append(what, "kind "+x.Kind)
		}
		if x.Key != "" {
			what = append(what, "key "+x.Key)
		}
		m.Silences = append(m.Silences, view.SilenceRow{ID: x.ID, Matches: strings.Join(what, ", "), By: x.By, Why: x.Why,
			Until: view.Time(x.Until), EndAction: "/alerts/silences/" + strconv.FormatInt(x.ID, 10) + "/end"})
	}
	return m
}

// handleAlertAck acknowledges an alert (who, why), then goes back to the
// page.
func (s *Server) handleAlertAck(c echo.Context) error {
	id, err := parseID(c, "id")
	if err != nil {
		return err
	}
	if _, err := s.db.AckAlert(c.Request().Context(), strconv.FormatInt(id, 10), strings.TrimSpace(c.FormValue("by")),
		strings.TrimSpace(c.FormValue("why"))); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/alerts#alert-"+strconv.FormatInt(id, 10))
}

// handleSilence adds a silence (who, why, for how long).
func (s *Server) handleSilence(c echo.Context) error {
	d, err := parseFor(c.FormValue("for"))
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "For how long: write a duration such as 4h, 90m or 2d.")
	}
	kind := c.FormValue("kind")
	if kind != "" && !slices.Contains(store.AlertKinds, kind) {
		return echo.NewHTTPError(http.StatusBadRequest, "Unknown kind.")
	}
	if _, err := s.db.AddSilence(c.Request().Context(), store.AlertSilence{Instance: strings.TrimSpace(c.FormValue("instance")),
		Kind: kind, Key: strings.TrimSpace(c.FormValue("key")), By: strings.TrimSpace(c.FormValue("by")),
		Why: strings.TrimSpace(c.FormValue("why")), Until: s.cfg.Now().Add(d)}); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/alerts#silences")
}

// handleEndSilence ends a silence now.
func (s *Server) handleEndSilence(c echo.Context) error {
	id, err := parseID(c, "id")
	if err != nil {
		return err
	}
	if err := s.db.EndSilence(c.Request().Context(), id); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/alerts#silences")
}

// parseFor reads a silence's length: Go's durations, and days ("2d").
func parseFor(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if n, ok := strings.CutSuffix(v, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days <= 0 || days > 366 {
			return 0, fmt.Errorf("bad days")
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > 366*24*time.Hour {
		return 0, fmt.Errorf("bad duration")
	}
	return d, nil
}
