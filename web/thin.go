package web

import (
	"math"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web/chart"
	"github.com/restorewatch/restorewatch/web/view"
)

// thinColumns is how many columns of time a full-width chart keeps the
// lowest and highest point of: one per 5 units of its width, about the
// size of a mark, so thinning hides nothing a reader could tell apart and
// a chart of 2,000 restores draws at most a few hundred.
const thinColumns = wideW / 5

// idSet makes a set of restore ids.
func idSet(ids []int64) map[int64]bool {
	m := make(map[int64]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// thinIndex returns, oldest first, the indices of the points (newest first,
// as store.ChartPoints returns them) a chart draws of the value val(i)
// (NaN: none): the extremes of each column and every outlier.
func thinIndex(pts []store.ChartPoint, val func(i int) float64, isOut map[int64]bool) []int {
	idx := make([]int, 0, len(pts))
	for i := len(pts) - 1; i >= 0; i-- {
		if !math.IsNaN(val(i)) {
			idx = append(idx, i)
		}
	}
	return chart.Thin(idx, thinColumns, func(i *int) (t time.Time, v float64, keep bool) {
		return pts[*i].At, val(*i), isOut[pts[*i].ID]
	})
}

// thinPoints makes the chart points of one measure of pts (throughput or
// duration), thinned, each a link to its restore with a tooltip naming it.
func thinPoints(pts []store.ChartPoint, isOut map[int64]bool, measure func(*store.ChartPoint) *float64) []chart.Point {
	val := func(i int) float64 {
		if v := measure(&pts[i]); v != nil {
			return *v
		}
		return math.NaN()
	}
	idx := thinIndex(pts, val, isOut)
	out := make([]chart.Point, 0, len(idx))
	for _, i := range idx {
		p := &pts[i]
		out = append(out, chart.Point{T: p.At, V: val(i), Href: view.RestoreURL(p.ID), Tooltip: pointTip(p, isOut[p.ID]),
			Outlier: isOut[p.ID]})
	}
	return out
}

// pointTip names a charted restore: database, kind, time and measures.
func pointTip(p *store.ChartPoint, outlier bool) string {
	tip := p.Database + " · " + string(p.Kind) + "\n" + view.Time(p.At) + "\n" + view.MiBpsPtr(p.MiBps) + " · " + view.DurationPtr(p.DurationS)
	if outlier {
		tip += "\noutlier: left out of the medians"
	}
	return tip
}
