package web

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/web/chart"
	"github.com/restorewatch/restorewatch/web/view"
)

func (s *Server) handleDatabase(c echo.Context) error {
	inst, err := nameParam(c, "name")
	if err != nil {
		return err
	}
	dbName, err := nameParam(c, "db")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	series, err := s.db.ListSeries(ctx, store.SeriesFilter{Instance: inst, Database: dbName})
	if err != nil {
		return err
	}
	progress, knees, marks, err := s.databaseProgress(ctx, inst, dbName)
	if err != nil {
		return err
	}
	if len(series) == 0 {
		if len(progress) == 0 {
			return store.Errorf(store.ENOTFOUND, "no restores of database %q on instance %q have been analysed", dbName, inst)
		}
		// Known only from a restore in flight: its curves are all there is.
		m := view.Database{Instance: progress[0].Instance, InstanceURL: progress[0].InstanceURL, Database: progress[0].Database,
			InFlightOnly: true, Progress: progress, Knees: knees}
		return s.render(c, http.StatusOK, view.DatabasePage(s.page(c, dbName+" on "+inst, "instances"), m))
	}
	se := pickSeries(series, c.QueryParam("kind"))
	// Never a version behind (one database's page is cheap to read again
	// at each change), as before it was kept.
	d, err := cached(context.WithValue(ctx, freshKey{}, true), s, "database\x00"+inst+"\x00"+dbName+"\x00"+string(se.Kind), func(ctx context.Context) (databaseData, error) {
		return s.databaseData(ctx, inst, dbName, se.Kind)
	})
	if err != nil {
		return err
	}
	m := d.m
	m.Progress, m.Knees = progress, knees
	m.Rows = slices.Clone(m.Rows) // the cached rows are shared: marks go on a copy
	for i := range m.Rows {
		m.Rows[i].Knee = marks[d.ids[i]]
	}
	return s.render(c, http.StatusOK, view.DatabasePage(s.page(c, dbName+" on "+inst, "instances"), m))
}

// databaseData is what a database page shows but for its progress curves
// and knees (read on every view, as the instance page's): its charts drawn
// once (a database's newest chartLimit restores, three charts, each for a
// screen and a phone), its newest restores and the ids of those, cached
// until the data change.
type databaseData struct {
	m   view.Database
	ids []int64 // m.Rows' restores
}

func (s *Server) databaseData(ctx context.Context, inst, dbName string, kind store.Kind) (databaseData, error) {
	// Read again at the version the result is kept under.
	series, err := s.db.ListSeries(ctx, store.SeriesFilter{Instance: inst, Database: dbName})
	if err != nil {
		return databaseData{}, err
	}
	if len(series) == 0 {
		return databaseData{}, store.Errorf(store.ENOTFOUND, "no restores of database %q on instance %q have been analysed", dbName, inst)
	}
	se := pickSeries(series, string(kind))
	f := store.RestoreFilter{Instance: inst, Database: dbName, Kind: se.Kind, Limit: chartLimit}
	pts, err := s.db.ChartPoints(ctx, f)
	if err != nil {
		return databaseData{}, err
	}
	f.Limit = restoreRows
	page, err := s.db.Restores(ctx, store.RestoreQuery{Filter: f, CountCap: 1})
	if err != nil {
		return databaseData{}, err
	}
	rs := page.Restores
	regs, err := s.activeRegressions(ctx, series[0].Instance, dbName)
	if err != nil {
		return databaseData{}, err
	}
	m := s.databaseModel(series, se, pts, rs, regs)
	m.Throughput, m.Duration, m.Size = m.Throughput.Prerendered(), m.Duration.Prerendered(), m.Size.Prerendered()
	ids := make([]int64, len(rs))
	for i := range rs {
		ids[i] = rs[i].ID
	}
	return databaseData{m: m, ids: ids}, nil
}

// progressCurves is how many of a database's progress curves its page
// draws, newest first.
const progressCurves = 5

// databaseProgress returns the newest progress curves the collector kept of
// a database's restores, shaped as /live shows them, its knee findings and
// the marks of the restores that have one.
func (s *Server) databaseProgress(ctx context.Context, instance, database string) ([]view.LiveRestore, []view.KneeRow, map[int64]string, error) {
	all, err := s.db.InflightCurves(ctx, time.Time{})
	if err != nil {
		return nil, nil, nil, err
	}
	var curves []store.InflightCurve
	for _, c := range all {
		if strings.EqualFold(c.Instance, store.InstanceName(instance)) && c.Database == store.DatabaseName(database) {
			curves = append(curves, c)
		}
	}
	slices.SortStableFunc(curves, func(a, b store.InflightCurve) int { return b.StartUTC.Compare(a.StartUTC) })
	cf := analysis.NewCurveFacts(s.db)
	var out []view.LiveRestore
	var knees []view.KneeRow
	marks := map[int64]string{}
	now := s.cfg.Now()
	for i, c := range curves {
		f, err := cf.Of(ctx, c)
		if err != nil {
			return nil, nil, nil, err
		}
		r := s.liveRestore(c, f, now, "db-progress-"+strconv.Itoa(i))
		if k := r.KneeFinding; k != nil {
			knees = append(knees, *k)
			if f.Restore != nil {
				marks[f.Restore.ID] = "slowed after " + k.Percent
			}
		}
		if i < progressCurves {
			out = append(out, r)
		}
	}
	return out, knees, marks, nil
}

// restoreRows is how many of the newest restores the database page lists.
const restoreRows = 25

// bufferStretches words the runs of identical buffer settings
// (analysis.BufferRuns) of the restores rs, newest first.
func bufferStretches(rs []store.ChartPoint) []view.BufferRow {
	runs := analysis.BufferRuns(rs)
	rows := make([]view.BufferRow, 0, len(runs))
	for _, st := range runs {
		rows = append(rows, view.BufferRow{From: view.Time(st.First.At), To: view.Time(st.Last.At),
			FirstURL: view.RestoreURL(st.First.ID), LastURL: view.RestoreURL(st.Last.ID), N: view.Int(int64(st.N)),
			BufferCount: view.IntPtr(st.First.BufferCount), MaxTransfer: kib(st.First.MaxTransferKiB),
			Alignment: bytesAlign(st.First.IOAlignment), Throughput: view.MiBps(st.MiBps)})
	}
	return rows
}

// pickSeries chooses the kind asked for, else full restores, else the
// series with the most restores.
func pickSeries(series []store.Series, kind string) store.Series {
	for _, want := range []string{kind, "full"} {
		for _, se := range series {
			if string(se.Kind) == want {
				return se
			}
		}
	}
	return slices.MaxFunc(series, func(a, b store.Series) int { return a.N - b.N })
}

// databaseModel shapes a database page: three charts of the chosen
// series (its newest chartLimit restores, thinned to the charts' width),
// its buffer settings and its newest restores (rs, in full).
func (s *Server) databaseModel(series []store.Series, se store.Series, pts []store.ChartPoint, rs []store.Restore, regs []store.Regression) view.Database {
	m := view.Database{Instance: se.Instance, InstanceURL: view.InstanceURL(se.Instance), Database: se.Database,
		Kind: string(se.Kind), Series: s.seriesRow(se, regs),
		AllURL: view.RestoresURL("instance", se.Instance, "database", se.Database, "kind", string(se.Kind))}
	m.RegressionURL = m.Series.RegressionURL
	for _, x := range series {
		m.Kinds = append(m.Kinds, view.Tab{Label: fmt.Sprintf("%s (%s)", x.Kind, view.Int(int64(x.N))),
			Href: view.DatabaseKindURL(x.Instance, x.Database, string(x.Kind)), Current: x.Kind == se.Kind})
	}
	isOut, isChange := idSet(se.Outliers), idSet(se.ChangePoints)
	var cps []chart.ChangePoint
	for i := len(pts) - 1; i >= 0; i-- {
		if isChange[pts[i].ID] {
			cps = append(cps, chart.ChangePoint{T: pts[i].At, Label: "change " + view.Date(pts[i].At)})
		}
	}
	from, to := span(pts)
	tput, tband, nT := marks("logical MiB/s", 0, pts, isOut, func(p *store.ChartPoint) *float64 { return p.MiBps }, from, to)
	dur, dband, nD := marks("duration", 0, pts, isOut, func(p *store.ChartPoint) *float64 { return p.DurationS }, from, to)
	m.Shown = chartCounts(len(pts), se.N, nT, nD)
	size := chart.Series{Name: "backup size (GiB)"}
	gib := make([]float64, len(pts))
	for i, p := range pts {
		gib[i] = math.NaN()
		if p.BackupBytes != nil {
			gib[i] = float64(*p.BackupBytes) / (1 << 30)
		}
	}
	for _, i := range thinIndex(pts, func(i int) float64 { return gib[i] }, nil) {
		p := &pts[i]
		size.Points = append(size.Points, chart.Point{T: p.At, V: gib[i], Href: view.RestoreURL(p.ID),
			Tooltip: view.Time(p.At) + "\n" + view.BytesPtr(p.BackupBytes)})
	}
	m.Buffers = bufferStretches(pts)
	var refs []chart.RefLine
	if se.BaselineMiBps != nil {
		refs = append(refs, chart.RefLine{Y: *se.BaselineMiBps, Label: "baseline " + view.MiBpsPtr(se.BaselineMiBps)})
		if len(cps) > 0 {
			refs[0].To = cps[len(cps)-1].T
		}
	}
	if se.CurrentMiBps != nil && len(cps) > 0 {
		refs = append(refs, chart.RefLine{Y: *se.CurrentMiBps, From: cps[len(cps)-1].T, Label: "recent " + view.MiBpsPtr(se.CurrentMiBps)})
	}
	m.Throughput = chart.TimeScatter{Frame: chart.Frame{Title: "Throughput over time (logical MiB/s)", ID: "db-tput", Width: wideW, Height: wideH},
		Series: []chart.Series{tput}, Bands: bands(tband), ChangePoints: cps, RefLines: refs, YLabel: "MiB/s",
		LogY: spansDecades(tput) || bandSpansDecades(tband), YFromZero: true, From: from, To: to}
	m.Duration = chart.TimeScatter{Frame: chart.Frame{Title: "Duration over time", ID: "db-dur", Width: wideW, Height: wideH},
		Series: []chart.Series{dur}, Bands: bands(dband), ChangePoints: cps, YLabel: "duration", YFormat: chart.FormatDuration, YFromZero: true,
		From: from, To: to}
	m.Size = chart.TimeScatter{Frame: chart.Frame{Title: "Backup size over time (GiB)", ID: "db-size", Width: wideW, Height: 260},
		Series: []chart.Series{size}, YLabel: "GiB", YFromZero: true, From: from, To: to}
	m.RowsShown = view.Plural(int64(len(rs)), "restore", "restores")
	for i := range rs {
		m.Rows = append(m.Rows, s.restoreRow(&rs[i], isOut[rs[i].ID]))
	}
	return m
}
