package chart

import (
	"math"
	"reflect"
	"strings"
	"time"
)

// area is the plot rectangle in viewBox units: left, top, right, bottom.
type area struct{ l, t, r, b float64 }

func (a area) w() float64 { return a.r - a.l }
func (a area) h() float64 { return a.b - a.t }

// scale maps a data domain onto a range of viewBox coordinates, linearly or
// through log10 (d0 and d1 are then stored as log10 values).
type scale struct {
	d0, d1, r0, r1 float64
	log            bool
}

func newScale(d0, d1, r0, r1 float64, log bool) scale {
	if log {
		d0, d1 = math.Log10(d0), math.Log10(d1)
	}
	return scale{d0, d1, r0, r1, log}
}

// at maps v; it returns NaN for values a log scale cannot show.
func (s scale) at(v float64) float64 {
	if s.log {
		if v <= 0 {
			return math.NaN()
		}
		v = math.Log10(v)
	}
	if s.d1 == s.d0 {
		return (s.r0 + s.r1) / 2 // zero-span domain: centre everything
	}
	return s.r0 + (v-s.d0)/(s.d1-s.d0)*(s.r1-s.r0)
}

// usable reports whether v can be placed on an axis of this kind.
func usable(v float64, log bool) bool { return finite(v) && (!log || v > 0) }

// valueAxis is a computed numeric axis: ticks, their labels and the scale.
type valueAxis struct {
	ticks  []float64
	labels []string
	sc     scale
}

// makeValueAxis builds an axis over vals (already filtered with usable) onto
// the range r0→r1. The domain is the tick extent, so ticks sit on the ends.
// fromZero forces 0 into a linear domain, for quantities where the distance
// from zero matters (bar lengths). format overrides tick labels.
func makeValueAxis(vals []float64, log, fromZero bool, n int, format func(float64) string, r0, r1 float64) valueAxis {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if !finite(lo) { // callers check for data; this keeps odd cases safe
		lo, hi = 0, 1
	}
	var ticks []float64
	if log {
		ticks = LogTicks(lo, hi)
	}
	if ticks == nil {
		log = false
		if fromZero {
			lo, hi = math.Min(lo, 0), math.Max(hi, 0)
		}
		if isDurationFormat(format) {
			ticks = durationTicks(lo, hi, n)
		} else {
			ticks = NiceTicks(lo, hi, n)
		}
	}
	if ticks == nil { // range beyond nice ticking: label the data extent
		ticks = []float64{lo, hi}
	}
	ax := valueAxis{ticks: ticks, sc: newScale(ticks[0], ticks[len(ticks)-1], r0, r1, log)}
	step := 0.0
	if len(ticks) > 1 {
		step = ticks[1] - ticks[0]
	}
	for _, t := range ticks {
		switch {
		case format != nil:
			ax.labels = append(ax.labels, format(t))
		case log:
			ax.labels = append(ax.labels, formatLogTick(t))
		default:
			ax.labels = append(ax.labels, formatTick(t, step))
		}
	}
	return ax
}

// isDurationFormat reports whether an axis is labelled with FormatDuration:
// such an axis is ticked on the steps time is counted in, not 1-2-5.
func isDurationFormat(f func(float64) string) bool {
	return f != nil && reflect.ValueOf(f).Pointer() == reflect.ValueOf(FormatDuration).Pointer()
}

// maxLabelWidth is the widest estimated label of an axis.
func maxLabelWidth(labels []string) float64 {
	w := 0.0
	for _, l := range labels {
		w = math.Max(w, textWidth(l))
	}
	return w
}

// drawYAxis draws horizontal grid lines, the axis line, tick labels and the
// rotated unit label left of the plot.
func drawYAxis(b *builder, a area, ax valueAxis, unit string) {
	b.open("g", "class", "rw-grid", "stroke", "currentColor", "stroke-opacity", "0.15")
	for _, t := range ax.ticks {
		y := num(ax.sc.at(t))
		b.leaf("line", "x1", num(a.l), "x2", num(a.r), "y1", y, "y2", y)
	}
	b.close("g")
	b.open("g", "class", "rw-axis", "stroke", "currentColor", "stroke-opacity", "0.6")
	b.leaf("line", "x1", num(a.l), "x2", num(a.l), "y1", num(a.t), "y2", num(a.b))
	b.close("g")
	b.open("g", "class", "rw-axis", "fill", "currentColor", "text-anchor", "end", "font-size", "11")
	for i, t := range ax.ticks {
		b.elem("text", ax.labels[i], "x", num(a.l-6), "y", num(ax.sc.at(t)+4))
	}
	b.close("g")
	if unit != "" {
		x, y := num(14), num((a.t+a.b)/2)
		b.elem("text", truncate(unit, int(a.h()/charWidth)), "class", "rw-axis-label", "x", x, "y", y,
			"transform", "rotate(-90 "+x+" "+y+")", "text-anchor", "middle", "fill", "currentColor")
	}
}

// drawXTicks draws vertical grid lines and labels under the plot for ticks
// given as viewBox x positions.
func drawXTicks(b *builder, a area, xs []float64, labels []string, unit string) {
	b.open("g", "class", "rw-grid", "stroke", "currentColor", "stroke-opacity", "0.15")
	for _, x := range xs {
		b.leaf("line", "x1", num(x), "x2", num(x), "y1", num(a.t), "y2", num(a.b))
	}
	b.close("g")
	b.open("g", "class", "rw-axis", "stroke", "currentColor", "stroke-opacity", "0.6")
	b.leaf("line", "x1", num(a.l), "x2", num(a.r), "y1", num(a.b), "y2", num(a.b))
	b.close("g")
	b.open("g", "class", "rw-axis", "fill", "currentColor", "text-anchor", "middle", "font-size", "11")
	for i, x := range xs {
		// Keep edge labels inside the viewBox (16 units of right margin),
		// since an SVG used as an image clips what overflows.
		hw := textWidth(labels[i]) * 11 / fontSize / 2
		x = math.Max(hw, math.Min(x, a.r+14-hw))
		b.elem("text", labels[i], "x", num(x), "y", num(a.b+16))
	}
	b.close("g")
	if unit != "" {
		b.elem("text", truncate(unit, int(a.w()/charWidth)), "class", "rw-axis-label",
			"x", num((a.l+a.r)/2), "y", num(a.b+32), "text-anchor", "middle", "fill", "currentColor")
	}
}

// timeAxis computes time ticks for [from, to] in loc that fit the plot
// width without overlapping labels, returning x positions and labels.
func timeAxis(a area, sc scale, from, to time.Time, loc *time.Location) ([]float64, []string) {
	for n := int(a.w() / 80); ; n-- {
		n = max(n, 2)
		ticks, layout := TimeTicks(from.In(loc), to.In(loc), n)
		var xs []float64
		var labels []string
		wmax := 0.0
		for _, t := range ticks {
			xs = append(xs, sc.at(unixSeconds(t)))
			l := t.Format(layout)
			labels = append(labels, l)
			wmax = math.Max(wmax, textWidth(l))
		}
		if n == 2 || float64(len(ticks))*(wmax+10) <= a.w() {
			return xs, labels
		}
	}
}

// numberAxisX computes numeric or duration ticks for an x axis.
func numberAxisX(a area, lo, hi float64, duration bool) (valueAxis, bool) {
	for n := int(a.w() / 70); ; n-- {
		n = max(n, 2)
		var ax valueAxis
		if duration {
			ticks := durationTicks(lo, hi, n)
			if ticks == nil {
				ticks = []float64{lo, hi}
			}
			ax = valueAxis{ticks: ticks, sc: newScale(ticks[0], ticks[len(ticks)-1], a.l, a.r, false)}
			for _, t := range ticks {
				ax.labels = append(ax.labels, FormatDuration(math.Abs(t)))
			}
		} else {
			ax = makeValueAxis([]float64{lo, hi}, false, false, n, nil, a.l, a.r)
		}
		if n == 2 || float64(len(ax.ticks))*(maxLabelWidth(ax.labels)+10) <= a.w() {
			return ax, true
		}
	}
}

// legendEntry is one legend item: a series name and its index for colour
// and marker shape.
type legendEntry struct {
	name   string
	series int
	swatch string // "line", "bar" or "ref" (a dashed reference line) instead of the series' marker
}

const legendMaxChars = 40

func legendItemWidth(e legendEntry) float64 {
	return 30 + textWidth(truncate(e.name, legendMaxChars))
}

// legendRows returns how many rows the legend needs at the given width.
func legendRows(es []legendEntry, width float64) int {
	if len(es) == 0 {
		return 0
	}
	rows, x := 1, 0.0
	for _, e := range es {
		w := legendItemWidth(e)
		if x > 0 && x+w > width {
			rows, x = rows+1, 0
		}
		x += w
	}
	return rows
}

// drawLegend lays the entries out left to right from (x0, y0), wrapping
// within width. Names are truncated; the full name is the item's tooltip.
// Swatches have class rw-swatch (not rw-point/rw-bar) so they are not
// mistaken for data by CSS hover rules or by tests counting points.
func drawLegend(b *builder, es []legendEntry, x0, y0, width float64) {
	b.open("g", "class", "rw-legend")
	x, y := 0.0, y0
	for _, e := range es {
		w := legendItemWidth(e)
		if x > 0 && x+w > width {
			x, y = 0, y+lineH+4
		}
		b.open("g")
		b.title(e.name)
		switch e.swatch {
		case "bar":
			b.leaf("rect", "class", "rw-swatch "+seriesClass(e.series), "x", num(x0+x), "y", num(y-9),
				"width", "12", "height", "10", "fill", seriesColor(e.series))
		case "band":
			b.leaf("rect", "class", "rw-swatch rw-band-swatch "+seriesClass(e.series), "x", num(x0+x), "y", num(y-9),
				"width", "14", "height", "10", "fill", seriesColor(e.series), "fill-opacity", "0.3")
			b.leaf("line", "class", "rw-swatch rw-band-swatch", "x1", num(x0+x), "x2", num(x0+x+14),
				"y1", num(y-4), "y2", num(y-4), "stroke", seriesColor(e.series), "stroke-width", "2")
		case "ref":
			b.leaf("line", "class", "rw-swatch rw-ref-swatch", "x1", num(x0+x), "x2", num(x0+x+14),
				"y1", num(y-4), "y2", num(y-4), "stroke", "currentColor", "stroke-dasharray", "4 2")
		case "line":
			b.leaf("line", "class", "rw-swatch "+seriesClass(e.series), "x1", num(x0+x), "x2", num(x0+x+14),
				"y1", num(y-4), "y2", num(y-4), "stroke", seriesColor(e.series), "stroke-width", "2")
		default:
			shape(b, e.series, x0+x+6, y-4, 4, "rw-swatch "+seriesClass(e.series), false, "")
		}
		b.elem("text", truncate(e.name, legendMaxChars), "x", num(x0+x+18), "y", num(y), "fill", "currentColor")
		b.close("g")
		x += w
	}
	b.close("g")
}

// shape draws the marker of series i at (cx, cy) with radius r: circle,
// square, triangle, diamond, inverted triangle, pentagon, hexagon, star.
// Distinct shapes keep series apart in grey-scale print and for colour-blind
// readers. hollow draws only the outline (outliers). tip becomes the
// native tooltip inside the element.
func shape(b *builder, i int, cx, cy, r float64, class string, hollow bool, tip string) {
	fill := seriesColor(i)
	if hollow {
		fill = "none"
	}
	kv := []string{"class", class, "fill", fill, "stroke", seriesColor(i)}
	if hollow {
		kv = append(kv, "stroke-width", "2")
	}
	tag := "path"
	switch k := ((i % seriesCount) + seriesCount) % seriesCount; k {
	case 0:
		tag = "circle"
		kv = append(kv, "cx", num(cx), "cy", num(cy), "r", num(r))
	case 1:
		kv = append(kv, "d", polygon(cx, cy, r*1.25, 4, 45, 0))
	case 2:
		kv = append(kv, "d", polygon(cx, cy, r*1.35, 3, -90, 0))
	case 3:
		kv = append(kv, "d", polygon(cx, cy, r*1.35, 4, -90, 0))
	case 4:
		kv = append(kv, "d", polygon(cx, cy, r*1.35, 3, 90, 0))
	case 5:
		kv = append(kv, "d", polygon(cx, cy, r*1.2, 5, -90, 0))
	case 6:
		kv = append(kv, "d", polygon(cx, cy, r*1.2, 6, 0, 0))
	default:
		kv = append(kv, "d", polygon(cx, cy, r*1.5, 5, -90, 0.45))
	}
	b.open(tag, kv...)
	b.title(tip)
	b.close(tag)
}

// polygon returns path data for a regular k-gon of radius r rotated by deg
// degrees; with inner > 0 it is a star whose inner radius is inner×r.
func polygon(cx, cy, r float64, k int, deg, inner float64) string {
	var sb strings.Builder
	pts := k
	if inner > 0 {
		pts = 2 * k
	}
	for j := 0; j < pts; j++ {
		rr := r
		if inner > 0 && j%2 == 1 {
			rr = r * inner
		}
		a := (deg + 360*float64(j)/float64(pts)) * math.Pi / 180
		if j == 0 {
			sb.WriteByte('M')
		} else {
			sb.WriteByte('L')
		}
		sb.WriteString(num(cx + rr*math.Cos(a)))
		sb.WriteByte(' ')
		sb.WriteString(num(cy + rr*math.Sin(a)))
	}
	sb.WriteByte('Z')
	return sb.String()
}
