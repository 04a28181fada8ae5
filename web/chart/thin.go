package chart

import (
	"math"
	"time"
)

// Thin picks the points of one series worth drawing in a plot columns
// pixels (or groups of pixels) wide: in each column of time it keeps the
// point with the lowest value and the one with the highest, and it keeps
// every point at reports as kept (outliers, say) wherever it falls. A chart
// of thousands of restores then draws a few hundred marks that cover the
// same pixels' envelope, and no extreme disappears. Points whose value is
// not finite are dropped. The kept points stay in their input order. at
// reports a point's time, value and whether it must be kept; ps is not
// modified.
func Thin[P any](ps []P, columns int, at func(*P) (t time.Time, v float64, keep bool)) []P {
	if columns < 1 || len(ps) <= 2*columns {
		out := make([]P, 0, len(ps))
		for i := range ps {
			if _, v, _ := at(&ps[i]); finite(v) {
				out = append(out, ps[i])
			}
		}
		return out
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range ps {
		t, v, _ := at(&ps[i])
		if finite(v) {
			x := unixSeconds(t)
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	type col struct{ min, max int }
	cols := make([]col, columns)
	for i := range cols {
		cols[i] = col{-1, -1}
	}
	keep := make([]bool, len(ps))
	vals := make([]float64, len(ps))
	span := hi - lo
	for i := range ps {
		t, v, k := at(&ps[i])
		if !finite(v) {
			continue
		}
		vals[i] = v
		keep[i] = k
		c := 0
		if span > 0 {
			c = min(int((unixSeconds(t)-lo)/span*float64(columns)), columns-1)
		}
		if cols[c].min < 0 || v < vals[cols[c].min] {
			cols[c].min = i
		}
		if cols[c].max < 0 || v > vals[cols[c].max] {
			cols[c].max = i
		}
	}
	for _, c := range cols {
		if c.min >= 0 {
			keep[c.min], keep[c.max] = true, true
		}
	}
	var out []P
	for i := range ps {
		if keep[i] {
			out = append(out, ps[i])
		}
	}
	return out
}
