package web

import (
	"context"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/human"
	"github.com/restorewatch/restorewatch/web/chart"
	"github.com/restorewatch/restorewatch/web/view"
)

const (
	// liveWindow is how far back the live page shows restores.
	liveWindow = 24 * time.Hour
	// liveRefresh is how often the live page reloads itself.
	liveRefresh = 15 * time.Second
	// liveQuiet is how long a restore still running may go unsampled before
	// the page asks whether the collector is running (it samples every 10 s
	// by default while a restore runs).
	liveQuiet = 5 * time.Minute
)

// handleLive shows restores in flight and those finished in the last day,
// each with its progress curve, size and knee finding. It reloads itself
// through the Refresh header, so it needs no JavaScript.
func (s *Server) handleLive(c echo.Context) error {
	ctx := c.Request().Context()
	now := s.cfg.Now()
	curves, err := s.db.InflightCurves(ctx, now.Add(-liveWindow))
	if err != nil {
		return err
	}
	m, err := s.liveModel(ctx, curves, now)
	if err != nil {
		return err
	}
	if len(curves) == 0 {
		// Say whether a collector is running at all, so the empty state
		// asks for the right thing.
		runs, err := s.db.LatestRuns(ctx)
		if err != nil {
			return err
		}
		m.CollectorSeen = len(runs) > 0
		m.Empty = "No restore was seen in flight in the last " + m.Window + "."
		if !m.CollectorSeen {
			m.Empty = "No restore has been seen in flight: no collector has run."
		}
	}
	c.Response().Header().Set("Refresh", strconv.Itoa(int(liveRefresh/time.Second)))
	return s.render(c, http.StatusOK, view.LivePage(s.page(c, "Live restores", "live"), m))
}

// liveModel shapes the curves for the page: those still running first,
// longest running first, then the finished ones, latest first.
func (s *Server) liveModel(ctx context.Context, curves []store.InflightCurve, now time.Time) (view.Live, error) {
	m := view.Live{Window: "24 h", Refresh: view.Duration(liveRefresh.Seconds())}
	finished := slices.Clone(curves)
	finished = slices.DeleteFunc(finished, func(c store.InflightCurve) bool { return !c.Ended })
	slices.SortStableFunc(finished, func(a, b store.InflightCurve) int { return b.LastSeen.Compare(a.LastSeen) })
	cf := analysis.NewCurveFacts(s.db)
	add := func(c store.InflightCurve, id string) (view.LiveRestore, error) {
		f, err := cf.Of(ctx, c)
		if err != nil {
			return view.LiveRestore{}, err
		}
		return s.liveRestore(c, f, now, id), nil
	}
	for i, c := range curves {
		if !c.Ended {
			r, err := add(c, "live-run-"+strconv.Itoa(i))
			if err != nil {
				return m, err
			}
			m.Running = append(m.Running, r)
		}
	}
	for i, c := range finished {
		r, err := add(c, "live-done-"+strconv.Itoa(i))
		if err != nil {
			return m, err
		}
		m.Finished = append(m.Finished, r)
	}
	return m, nil
}

// liveRestore shapes one curve with the facts of its restore (its size, its
// knee as analysis.FindKnee states it).
func (s *Server) liveRestore(c store.InflightCurve, f analysis.KneeFacts, now time.Time, id string) view.LiveRestore {
	r := view.LiveRestore{Instance: c.Instance, InstanceURL: view.InstanceURL(c.Instance),
		Database: c.Database, DatabaseURL: view.DatabaseURL(c.Instance, c.Database),
		Command: c.Command, Started: liveStart(c), Finished: c.Ended,
		Percent: view.Unknown, Completion: view.Unknown, WaitType: "none",
		LastSample: view.Ago(now.Sub(c.LastSeen))}
	bytes, src := f.Size()
	r.Size = view.Bytes(bytes)
	if src != "" {
		r.Size += " (" + src + ")"
	}
	if f.Restore != nil {
		r.RestoreURL = view.RestoreURL(f.Restore.ID)
	}
	end := now
	if c.Ended {
		end = c.LastSeen
		r.Completion = view.Time(c.LastSeen)
	} else {
		r.Quiet = now.Sub(c.LastSeen) > liveQuiet
	}
	r.Elapsed = view.Duration(end.Sub(c.StartUTC).Seconds())
	if n := len(c.Points); n > 0 {
		last := c.Points[n-1]
		r.Percent = human.Progress(last.Percent)
		if last.WaitType != "" {
			r.WaitType = last.WaitType
		}
		if !c.Ended && last.EstRemainingMs > 0 {
			eta := c.LastSeen.Add(time.Duration(last.EstRemainingMs) * time.Millisecond)
			r.Completion = view.Time(eta)
			if left := eta.Sub(now); left > 0 {
				r.Completion += " (in " + view.Duration(left.Seconds()) + ")"
			}
		}
	}
	pts := make([]chart.XY, 0, len(c.Points))
	for _, p := range c.Points {
		pts = append(pts, chart.XY{X: p.At.Sub(c.Start).Seconds(), Y: p.Percent})
	}
	r.Curve = chart.Line{Frame: chart.Frame{ID: id, Title: "Progress of " + c.Database + " on " + c.Instance, Height: 240},
		Series: []chart.LineSeries{{Points: pts}}, XKind: chart.XDuration, XLabel: "elapsed", YLabel: "%", YMin: 0, YMax: 100}
	if k, ok := analysis.FindKnee(c, f, s.issues); ok {
		row := kneeRow(&k)
		r.Knee, r.KneeFinding = row.Label, &row
		r.Curve.Knee = &chart.Annotation{X: pts[k.Index].X, Y: pts[k.Index].Y, Label: row.Label}
	}
	return r
}

// perMinute formats a rate in percent per minute with the precision its
// size needs.
func perMinute(v float64) string {
	switch {
	case !(v > 0) || math.IsInf(v, 0):
		return "0"
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 0.095:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	// Two significant digits: the seed's slow phase is about 0.036 %/min.
	return strconv.FormatFloat(v, 'f', 1-int(math.Floor(math.Log10(v))), 64)
}

// liveStart is when a restore in flight started, in UTC to the minute like
// its estimated completion beside it; the instance's own clock reading
// follows for whoever reads its error log.
func liveStart(c store.InflightCurve) string {
	if c.StartUTC.IsZero() {
		return view.Local(&c.Start)
	}
	s := view.Time(c.StartUTC)
	if !c.Start.IsZero() {
		s += " (" + c.Start.Format("15:04") + " instance local)"
	}
	return s
}
