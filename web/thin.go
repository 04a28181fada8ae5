package web

import (
	"math"
	"slices"
	"strings"
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

// denseMin is the number of measured restores from which a chart draws a
// series as a quantile band: beyond a few per pixel column the points
// merge into a smear, and keeping only each column's extremes (thinning)
// empties the middle, so a steady series of log restores looks bimodal.
const denseMin = 400

// bandBuckets is how many time buckets a band has across a chart, and
// bandMinN the restores a bucket needs for its quantiles to mean
// something; a sparser bucket's restores are drawn as points.
const (
	bandBuckets = 60
	bandMinN    = 8
)

// marks draws one measure of pts (newest first) as a chart series: every
// restore as a point (thinned) when there are few, or, for a dense series,
// a band of the 10th–90th percentile and the median per time bucket with
// the restores beyond the band and the outliers as points. from and to
// are the chart's time range, shared by every chart of the page. It
// returns the series, the band (nil if none) and the restores measured.
func marks(name string, series int, pts []store.ChartPoint, isOut map[int64]bool, measure func(*store.ChartPoint) *float64,
	from, to time.Time) (chart.Series, *chart.Band, int) {
	var idx []int
	for i := len(pts) - 1; i >= 0; i-- {
		if v := measure(&pts[i]); v != nil && !math.IsNaN(*v) {
			idx = append(idx, i)
		}
	}
	if len(idx) < denseMin || !to.After(from) {
		return chart.Series{Name: name, Points: thinPoints(pts, isOut, measure)}, nil, len(idx)
	}
	width := to.Sub(from) / bandBuckets
	buckets := make([][]int, bandBuckets)
	for _, i := range idx {
		k := min(max(int(pts[i].At.Sub(from)/width), 0), bandBuckets-1)
		buckets[k] = append(buckets[k], i)
	}
	band := &chart.Band{Series: series, Name: name + ": middle 80 % and median", Width: width}
	out := chart.Series{Name: name + ": beyond the band"}
	point := func(i int) {
		p := &pts[i]
		out.Points = append(out.Points, chart.Point{T: p.At, V: *measure(p), Href: view.RestoreURL(p.ID),
			Tooltip: pointTip(p, isOut[p.ID]), Outlier: isOut[p.ID]})
	}
	for k, b := range buckets {
		if len(b) < bandMinN {
			for _, i := range b {
				point(i)
			}
			continue
		}
		vs := make([]float64, len(b))
		for j, i := range b {
			vs[j] = *measure(&pts[i])
		}
		slices.Sort(vs)
		lo, mid, hi := quantile(vs, 0.1), quantile(vs, 0.5), quantile(vs, 0.9)
		band.Buckets = append(band.Buckets, chart.BandBucket{T: from.Add(width*time.Duration(k) + width/2), Low: lo, Mid: mid, High: hi, N: len(b)})
		for _, i := range b {
			if v := *measure(&pts[i]); v < lo || v > hi || isOut[pts[i].ID] {
				point(i)
			}
		}
	}
	slices.SortFunc(out.Points, func(a, b chart.Point) int { return a.T.Compare(b.T) })
	return out, band, len(idx)
}

// quantile is the q-quantile of sorted vs by linear interpolation.
func quantile(vs []float64, q float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(vs)-1)
	i := int(pos)
	if i >= len(vs)-1 {
		return vs[len(vs)-1]
	}
	return vs[i] + (vs[i+1]-vs[i])*(pos-float64(i))
}

// span is the time range of pts (any order): every chart of a page uses
// it, so their time axes line up.
func span(pts []store.ChartPoint) (time.Time, time.Time) {
	var lo, hi time.Time
	for i := range pts {
		if lo.IsZero() || pts[i].At.Before(lo) {
			lo = pts[i].At
		}
		if pts[i].At.After(hi) {
			hi = pts[i].At
		}
	}
	return lo, hi
}

// bands is the chart's band list of one optional band.
func bands(bs ...*chart.Band) []chart.Band {
	var out []chart.Band
	for _, b := range bs {
		if b != nil {
			out = append(out, *b)
		}
	}
	return out
}

// bandSpansDecades is spansDecades for a band's 10th and 90th percentiles.
func bandSpansDecades(bs ...*chart.Band) bool {
	var s chart.Series
	for _, b := range bs {
		if b == nil {
			continue
		}
		for _, k := range b.Buckets {
			s.Points = append(s.Points, chart.Point{V: k.Low}, chart.Point{V: k.High})
		}
	}
	return len(s.Points) > 0 && spansDecades(s)
}

// chartCounts says what the charts of a page hold, so that every count on
// it agrees: of the series' restores, how many are charted, and how many
// of those have no measured throughput or duration (not drawn, not
// dropped silently).
func chartCounts(charted, total, measured, timed int) string {
	out := view.Int(int64(charted)) + " restores charted"
	if total > charted {
		out = "the newest " + view.Int(int64(charted)) + " of " + view.Int(int64(total)) + " restores charted"
	}
	var missing []string
	if n := charted - measured; n > 0 {
		missing = append(missing, view.Int(int64(n))+" without a measured throughput")
	}
	if n := charted - timed; n > 0 {
		missing = append(missing, view.Int(int64(n))+" without a measured duration")
	}
	if len(missing) > 0 {
		out += " (" + strings.Join(missing, ", ") + ": not drawn)"
	}
	return out
}
