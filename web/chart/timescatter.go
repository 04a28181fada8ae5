package chart

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// Point is one observation of a TimeScatter series, e.g. one restore.
type Point struct {
	// T is when it happened (x axis).
	T time.Time
	// V is the value (y axis); NaN and ±Inf are skipped, as are values ≤ 0
	// on a log axis.
	V float64
	// Href optionally makes the point a link (relative or http(s) only).
	Href string
	// Tooltip replaces the default tooltip (series, time and value).
	Tooltip string
	// Outlier draws the point hollow and larger, class rw-outlier.
	Outlier bool
}

// Series is a named set of points drawn with one colour and marker shape.
type Series struct {
	// Name appears in the legend and in default tooltips.
	Name string
	// Points need not be sorted.
	Points []Point
}

// Marker is a vertical line at a moment, e.g. a build or configuration
// change, labelled above the plot.
type Marker struct {
	// T is when the change happened.
	T time.Time
	// Label is shown above the plot (truncated) and in the tooltip.
	Label string
}

// ChangePoint is a detected shift in the data, drawn as a solid accent line
// with a triangle so it is distinct from the dashed Markers.
type ChangePoint struct {
	// T is the first observation after the shift.
	T time.Time
	// Label describes it, e.g. "-35% throughput".
	Label string
}

// RefLine is a horizontal reference segment at value Y from From to To,
// e.g. the baseline median before and after a change point. A zero From or
// To extends the line to that edge of the plot.
type RefLine struct {
	// Y is the reference value; a log axis skips Y ≤ 0.
	Y float64
	// From and To bound the segment in time; zero means the plot edge.
	From, To time.Time
	// Label names the segment in the legend (beside a dashed swatch) and
	// its tooltip; it is not written on the plot, over the data.
	Label string
}

// TimeScatter plots values over time for several series, e.g. restore
// throughput per server, with build markers, change points, reference lines
// and highlighted outliers. Default size 800×360.
type TimeScatter struct {
	Frame
	// Series are drawn in order, each with its own colour and shape.
	Series []Series
	// Markers are dashed vertical lines, e.g. build changes.
	Markers []Marker
	// ChangePoints are solid accent lines, e.g. detected shifts.
	ChangePoints []ChangePoint
	// RefLines are horizontal segments, e.g. medians before/after a shift.
	RefLines []RefLine
	// YLabel is the unit or axis name, e.g. "MiB/s".
	YLabel string
	// LogY uses a log10 y axis, for values spanning orders of magnitude.
	LogY bool
	// YFromZero includes zero in a linear y axis so heights compare honestly.
	YFromZero bool
	// YFormat formats y tick labels and tooltip values (e.g. FormatDuration);
	// nil uses plain numbers.
	YFormat func(float64) string
	// Location is the time zone for tick labels and tooltips; nil means UTC,
	// so output does not depend on the server's zone.
	Location *time.Location
	// Bands draw dense series as their spread over time: per time bucket a
	// shaded band from Low to High (e.g. the 10th to 90th percentile) and a
	// line through Mid (the median). Thinning a dense series to each pixel
	// column's extremes would leave an empty band around the median and make
	// a steady series look bimodal; the points beyond the band are drawn as
	// Series points.
	Bands []Band
	// From and To fix the time axis (zero: the data's extent), so that the
	// charts of one page share one time range.
	From, To time.Time

	svg   []byte // set by Prerendered
	phone []byte // its phone drawing (Responsive), set by Prerendered
}

// Prerendered returns the chart with its SVG drawn once, written as it is
// by every Render: a chart kept in a cache and shown on many views (an
// instance page's 2,000 restores) is drawn once per data version, not per
// view. Its fields must not change afterwards.
func (c TimeScatter) Prerendered() TimeScatter {
	c.svg, c.phone = nil, nil
	p := c.phoneChart()
	c.svg = renderBytes(c.Frame, c.opts(), c.draw)
	c.phone = renderBytes(p.Frame, p.opts(), p.draw)
	return c
}

// Band is a dense series drawn as its quantiles per time bucket.
type Band struct {
	// Series picks the colour, as the index of a Series does.
	Series int
	// Name is the legend entry ("before the change: 10th–90th percentile
	// and median per day").
	Name string
	// Width is the buckets' span: buckets further apart than twice it are
	// not joined (no band across a gap in the data).
	Width time.Duration
	// Buckets, oldest first; a bucket with a non-finite value is skipped.
	Buckets []BandBucket
}

// BandBucket is one time bucket of a Band, centred at T.
type BandBucket struct {
	T              time.Time
	Low, Mid, High float64
	N              int
}

// Render writes the chart as SVG; it satisfies templ.Component.
func (c TimeScatter) Render(ctx context.Context, w io.Writer) error {
	if c.svg != nil {
		if ctx != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		_, err := w.Write(c.svg)
		return err
	}
	return render(ctx, w, c.Frame, c.opts(), c.draw)
}

// SVG returns the chart as an SVG string.
func (c TimeScatter) SVG() string {
	if c.svg != nil {
		return string(c.svg)
	}
	return string(renderBytes(c.Frame, c.opts(), c.draw))
}

func (c TimeScatter) opts() docOpts {
	return docOpts{kind: "rw-timescatter", defTitle: "Time scatter chart", defW: 800, defH: 360, width: "100%"}
}

// timeDomain pads [lo, hi] (Unix seconds) so points do not sit on the plot
// frame and a zero span (one point, or all at once) still has width.
func timeDomain(lo, hi float64) (float64, float64) {
	span := hi - lo
	if span <= 0 {
		return lo - 3600, hi + 3600
	}
	return lo - span*0.02, hi + span*0.02
}

func (c TimeScatter) draw(b *builder, W, H float64) (float64, string, bool) {
	loc := c.Location
	if loc == nil {
		loc = time.UTC
	}
	var vals []float64
	tlo, thi := math.Inf(1), math.Inf(-1)
	npts := 0
	for _, s := range c.Series {
		for _, p := range s.Points {
			if !usable(p.V, c.LogY) {
				continue
			}
			t := unixSeconds(p.T)
			tlo, thi = math.Min(tlo, t), math.Max(thi, t)
			vals = append(vals, p.V)
			npts++
		}
	}
	for _, bd := range c.Bands {
		for _, k := range bd.Buckets {
			if !usable(k.Low, c.LogY) || !usable(k.Mid, c.LogY) || !usable(k.High, c.LogY) {
				continue
			}
			t := unixSeconds(k.T)
			tlo, thi = math.Min(tlo, t), math.Max(thi, t)
			vals = append(vals, k.Low, k.High)
			npts++
		}
	}
	if npts == 0 {
		return 0, "", false
	}
	if !c.From.IsZero() && !c.To.IsZero() && c.To.After(c.From) {
		tlo, thi = math.Min(tlo, unixSeconds(c.From)), math.Max(thi, unixSeconds(c.To))
	}
	for _, r := range c.RefLines { // keep reference lines visible
		if usable(r.Y, c.LogY) {
			vals = append(vals, r.Y)
		}
	}
	var legend []legendEntry
	if len(c.Series) > 1 || (len(c.Series) == 1 && c.Series[0].Name != "") {
		for i, s := range c.Series {
			legend = append(legend, legendEntry{name: s.Name, series: i})
		}
	}
	for _, bd := range c.Bands {
		if bd.Name != "" {
			legend = append(legend, legendEntry{name: bd.Name, series: bd.Series, swatch: "band"})
		}
	}
	// Reference lines are named in the legend, never on the plot, where
	// a label would sit on the very points it summarises.
	for _, r := range c.RefLines {
		if r.Label != "" && usable(r.Y, c.LogY) {
			legend = append(legend, legendEntry{name: r.Label, swatch: "ref"})
		}
	}
	labelRows := 0
	if len(c.Markers)+len(c.ChangePoints) > 0 {
		labelRows = 2
	}
	a := area{l: 0, t: 10 + float64(labelRows)*lineH, r: W - 16}
	a.b = H - 28 - float64(legendRows(legend, W-80))*(lineH+4)
	if a.h() < 40 { // tiny canvas: keep a usable plot rather than a negative one
		a.b = a.t + 40
	}
	ax := makeValueAxis(vals, c.LogY, c.YFromZero, max(2, int(a.h()/40)), c.YFormat, a.b, a.t)
	a.l = math.Min(W*0.3, maxLabelWidth(ax.labels)+14)
	if c.YLabel != "" {
		a.l += 18
	}
	t0, t1 := timeDomain(tlo, thi)
	xs := newScale(t0, t1, a.l, a.r, false)
	drawYAxis(b, a, ax, c.YLabel)
	ticks, labels := timeAxis(a, xs, fromUnix(t0, loc), fromUnix(t1, loc), loc)
	drawXTicks(b, a, ticks, labels, "")
	yfmt := c.YFormat
	if yfmt == nil {
		yfmt = formatValue
	}
	c.drawBands(b, ax.sc, xs, yfmt)
	c.drawRefs(b, a, ax.sc, xs, t0, t1)
	c.drawMarkers(b, a, xs, t0, t1, loc)
	for i, s := range c.Series {
		b.open("g", "class", "rw-series "+seriesClass(i))
		for _, p := range s.Points {
			if !usable(p.V, c.LogY) {
				continue
			}
			tip := p.Tooltip
			if tip == "" {
				tip = fmt.Sprintf("%s\n%s\n%s", s.Name, p.T.In(loc).Format("2006-01-02 15:04:05 MST"),
					withUnit(yfmt(p.V), c.YLabel))
				if p.Outlier {
					tip += "\noutlier"
				}
			}
			r := 3.5
			if p.Outlier {
				r = 4.5
			}
			cls := "rw-point " + seriesClass(i)
			if p.Outlier {
				cls += " rw-outlier"
			}
			ok := b.linkOpen(p.Href)
			shape(b, i, xs.at(unixSeconds(p.T)), ax.sc.at(p.V), r, cls, p.Outlier, tip)
			b.linkClose(ok)
		}
		b.close("g")
	}
	drawLegend(b, legend, a.l, H-8-float64(legendRows(legend, W-80)-1)*(lineH+4), W-80)
	desc := fmt.Sprintf("Scatter of %d values and bands in %d series from %s to %s, ranging %s to %s",
		npts, len(c.Series), fromUnix(tlo, loc).Format("2006-01-02 15:04"), fromUnix(thi, loc).Format("2006-01-02 15:04"),
		withUnit(yfmt(minOf(vals[:npts])), c.YLabel), withUnit(yfmt(maxOf(vals[:npts])), c.YLabel))
	if n := len(c.Markers); n > 0 {
		desc += fmt.Sprintf("; %d markers", n)
	}
	if n := len(c.ChangePoints); n > 0 {
		desc += fmt.Sprintf("; %d change points", n)
	}
	return H, desc + ".", true
}

// fromUnix converts float Unix seconds back to a time in loc.
func fromUnix(s float64, loc *time.Location) time.Time {
	sec := math.Floor(s)
	return time.Unix(int64(sec), int64((s-sec)*1e9)).In(loc)
}

func minOf(v []float64) float64 {
	m := math.Inf(1)
	for _, x := range v {
		m = math.Min(m, x)
	}
	return m
}

func maxOf(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

// drawRefs draws the horizontal reference segments, clipped to the plot's
// time range; their labels are in the legend and each segment's tooltip.
func (c TimeScatter) drawRefs(b *builder, a area, ys, xs scale, t0, t1 float64) {
	for _, r := range c.RefLines {
		if !usable(r.Y, c.LogY) {
			continue
		}
		from, to := t0, t1
		if !r.From.IsZero() {
			from = math.Max(from, unixSeconds(r.From))
		}
		if !r.To.IsZero() {
			to = math.Min(to, unixSeconds(r.To))
		}
		if from >= to {
			continue
		}
		x1, x2, y := xs.at(from), xs.at(to), ys.at(r.Y)
		b.open("g")
		b.title(r.Label)
		b.leaf("line", "class", "rw-ref", "x1", num(x1), "x2", num(x2), "y1", num(y), "y2", num(y),
			"stroke", "currentColor", "stroke-dasharray", "6 3")
		b.close("g")
	}
}

// vline is a marker or change point to draw, with its label placement.
type vline struct {
	t, x, lx, lw float64
	label, full  string // shown (truncated) and tooltip text
	cp           bool
	row          int // label row, 0 upper, 1 lower, -1 no room
}

// drawMarkers draws markers and then change points (on top). Labels go in
// two rows above the plot, each placed in the lower row if it does not
// overlap a label already there, else the upper row, else left out rather
// than overprinted (the line keeps its tooltip). Change points are placed
// first because they are the finding the chart exists to show.
func (c TimeScatter) drawMarkers(b *builder, a area, xs scale, t0, t1 float64, loc *time.Location) {
	var vs []vline
	add := func(t time.Time, label string, cp bool) {
		v := vline{t: unixSeconds(t), label: truncate(label, 24), full: label, cp: cp, row: -1}
		if v.t < t0 || v.t > t1 {
			return // outside the data's time range: would only squash it
		}
		v.x = xs.at(v.t)
		v.lw = textWidth(v.label) * 11 / fontSize
		v.lx = math.Max(0, math.Min(v.x+3, a.r+14-v.lw))
		vs = append(vs, v)
	}
	for _, m := range c.Markers {
		add(m.T, m.Label, false)
	}
	for _, p := range c.ChangePoints {
		add(p.T, p.Label, true)
	}
	var rows [2][][2]float64
	place := func(v *vline) {
		if v.label == "" {
			return
		}
		for row := 1; row >= 0; row-- {
			free := true
			for _, iv := range rows[row] {
				if v.lx < iv[1] && iv[0] < v.lx+v.lw+4 {
					free = false
					break
				}
			}
			if free {
				rows[row] = append(rows[row], [2]float64{v.lx, v.lx + v.lw + 4})
				v.row = row
				return
			}
		}
	}
	for _, cp := range []bool{true, false} {
		for i := range vs {
			if vs[i].cp == cp {
				place(&vs[i])
			}
		}
	}
	for _, cp := range []bool{false, true} {
		for _, v := range vs {
			if v.cp == cp {
				drawVLine(b, a, v, loc)
			}
		}
	}
}

// drawVLine draws one marker (dashed) or change point (solid, with a
// triangle at the top) with its tooltip and label.
func drawVLine(b *builder, a area, v vline, loc *time.Location) {
	tip := v.full + "\n" + fromUnix(v.t, loc).Format("2006-01-02 15:04:05 MST")
	cls := "rw-marker"
	if v.cp {
		cls, tip = "rw-changepoint", "Change point: "+tip
	}
	b.open("g", "class", cls+"-group")
	b.title(tip)
	kv := []string{"class", cls, "x1", num(v.x), "x2", num(v.x), "y1", num(a.t), "y2", num(a.b), "stroke", "currentColor"}
	if v.cp {
		kv = append(kv, "stroke-width", "2")
	} else {
		kv = append(kv, "stroke-dasharray", "4 3", "stroke-opacity", "0.6")
	}
	b.leaf("line", kv...)
	if v.cp {
		b.leaf("path", "class", "rw-changepoint-glyph", "d", polygon(v.x, a.t+4, 5, 3, 90, 0), "fill", "currentColor")
	}
	if v.row >= 0 {
		b.elem("text", v.label, "class", cls+"-label", "x", num(v.lx), "y", num(a.t-6-float64(1-v.row)*lineH),
			"font-size", "11", "fill", "currentColor")
	}
	b.close("g")
}

// drawBands draws each band as a shaded polygon from Low to High and a
// line through Mid, one piece per run of buckets without a gap.
func (c TimeScatter) drawBands(b *builder, ys, xs scale, yfmt func(float64) string) {
	for _, bd := range c.Bands {
		var runs [][]BandBucket
		var last time.Time
		for _, k := range bd.Buckets {
			if !usable(k.Low, c.LogY) || !usable(k.Mid, c.LogY) || !usable(k.High, c.LogY) {
				continue
			}
			if len(runs) == 0 || (bd.Width > 0 && k.T.Sub(last) > 2*bd.Width) {
				runs = append(runs, nil)
			}
			runs[len(runs)-1] = append(runs[len(runs)-1], k)
			last = k.T
		}
		b.open("g", "class", "rw-band "+seriesClass(bd.Series))
		col := seriesColor(bd.Series)
		for _, run := range runs {
			var area, mid strings.Builder
			for i, k := range run {
				fmt.Fprintf(&area, "%s,%s ", num(xs.at(unixSeconds(k.T))), num(ys.at(k.High)))
				if i > 0 {
					mid.WriteByte(' ')
				}
				fmt.Fprintf(&mid, "%s,%s", num(xs.at(unixSeconds(k.T))), num(ys.at(k.Mid)))
			}
			for i := len(run) - 1; i >= 0; i-- {
				fmt.Fprintf(&area, "%s,%s ", num(xs.at(unixSeconds(run[i].T))), num(ys.at(run[i].Low)))
			}
			if len(run) == 1 { // one bucket: a short bar, visible
				x := xs.at(unixSeconds(run[0].T))
				b.leaf("line", "class", "rw-band-range", "x1", num(x), "x2", num(x), "y1", num(ys.at(run[0].Low)),
					"y2", num(ys.at(run[0].High)), "stroke", col, "stroke-width", "6", "stroke-opacity", "0.3")
			} else {
				b.leaf("polygon", "class", "rw-band-range", "points", strings.TrimSpace(area.String()), "fill", col, "fill-opacity", "0.22")
			}
			b.open("polyline", "class", "rw-band-mid", "points", mid.String(), "fill", "none", "stroke", col, "stroke-width", "2")
			k := run[len(run)/2]
			b.title(fmt.Sprintf("%s\nmedian %s, middle 80 %% %s – %s (%d restores around %s)", bd.Name, yfmt(k.Mid), yfmt(k.Low), yfmt(k.High), k.N, k.T.UTC().Format("2006-01-02")))
			b.close("polyline")
		}
		b.close("g")
	}
}
