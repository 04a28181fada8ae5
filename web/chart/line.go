package chart

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// XKind says how a Line chart interprets and labels X values.
type XKind int

const (
	// XLinear is a plain number axis.
	XLinear XKind = iota
	// XTime treats X as Unix seconds (see UnixSeconds) and labels the axis
	// with calendar ticks, like TimeScatter.
	XTime
	// XDuration treats X as elapsed seconds and labels ticks with
	// FormatDuration at whole-minute/hour steps, e.g. a restore's progress.
	XDuration
)

// XY is one point of a Line series. A NaN or infinite Y breaks the line,
// so gaps in sampling are visible instead of being bridged.
type XY struct {
	// X is a number, Unix seconds or elapsed seconds, per Line.XKind.
	X float64
	// Y is the value.
	Y float64
}

// LineSeries is a named polyline.
type LineSeries struct {
	// Name appears in the legend and as the line's tooltip.
	Name string
	// Points are joined in the given order (sort them by X).
	Points []XY
}

// Annotation marks one point of a Line chart, e.g. the knee where a
// restore's progress slows down.
type Annotation struct {
	// X and Y locate the point in data units.
	X, Y float64
	// Label is written beside the circle and in its tooltip.
	Label string
}

// Line draws one or more curves, e.g. restore progress (percent) against
// elapsed time, with an optional annotated knee point. Default size 800×300.
type Line struct {
	Frame
	// Series are drawn in order, each with its own colour.
	Series []LineSeries
	// XKind selects a numeric, calendar-time or elapsed-time x axis.
	XKind XKind
	// XLabel and YLabel name the axes or units, e.g. "elapsed", "%".
	XLabel, YLabel string
	// YMin and YMax fix the y range when YMax > YMin (e.g. 0 and 100 for
	// percent); values outside are clamped to the plot edge.
	YMin, YMax float64
	// YFormat formats y tick labels and tooltip values; nil: plain numbers.
	YFormat func(float64) string
	// Knee, when set, is circled and labelled.
	Knee *Annotation
	// Location is the zone for XTime labels; nil means UTC.
	Location *time.Location
}

// UnixSeconds converts t to the float Unix seconds Line uses for XTime.
func UnixSeconds(t time.Time) float64 { return unixSeconds(t) }

// Render writes the chart as SVG; it satisfies templ.Component.
func (c Line) Render(ctx context.Context, w io.Writer) error {
	return render(ctx, w, c.Frame, c.opts(), c.draw)
}

// SVG returns the chart as an SVG string.
func (c Line) SVG() string { return string(renderBytes(c.Frame, c.opts(), c.draw)) }

func (c Line) opts() docOpts {
	return docOpts{kind: "rw-line-chart", defTitle: "Line chart", defW: 800, defH: 300, width: "100%"}
}

// xLabel formats an X value for tooltips according to the axis kind.
func (c Line) xLabel(x float64, loc *time.Location) string {
	switch c.XKind {
	case XTime:
		return fromUnix(x, loc).Format("2006-01-02 15:04:05 MST")
	case XDuration:
		return FormatDuration(x)
	}
	return formatValue(x)
}

func (c Line) draw(b *builder, W, H float64) (float64, string, bool) {
	loc := c.Location
	if loc == nil {
		loc = time.UTC
	}
	fixed := finite(c.YMin) && finite(c.YMax) && c.YMax > c.YMin
	var ys []float64
	xlo, xhi := math.Inf(1), math.Inf(-1)
	npts := 0
	for _, s := range c.Series {
		for _, p := range s.Points {
			if !finite(p.X) || !finite(p.Y) {
				continue
			}
			xlo, xhi = math.Min(xlo, p.X), math.Max(xhi, p.X)
			ys = append(ys, p.Y)
			npts++
		}
	}
	if npts == 0 {
		return 0, "", false
	}
	if fixed {
		ys = []float64{c.YMin, c.YMax}
	}
	var legend []legendEntry
	if len(c.Series) > 1 || c.Series[0].Name != "" {
		for i, s := range c.Series {
			legend = append(legend, legendEntry{name: s.Name, series: i, swatch: "line"})
		}
	}
	rows := legendRows(legend, W-80)
	a := area{t: 12, r: W - 16, b: H - 28 - float64(rows)*(lineH+4)}
	if c.XLabel != "" {
		a.b -= 16
	}
	if a.h() < 40 {
		a.b = a.t + 40
	}
	ax := makeValueAxis(ys, false, false, max(2, int(a.h()/40)), c.YFormat, a.b, a.t)
	if fixed { // exact bounds, not widened to nice ticks
		ax.sc = newScale(c.YMin, c.YMax, a.b, a.t, false)
		kept := ax.labels[:0:0]
		var kt []float64
		for i, t := range ax.ticks {
			if t >= c.YMin && t <= c.YMax {
				kt, kept = append(kt, t), append(kept, ax.labels[i])
			}
		}
		ax.ticks, ax.labels = kt, kept
	}
	a.l = math.Min(W*0.3, maxLabelWidth(ax.labels)+14)
	if c.YLabel != "" {
		a.l += 18
	}
	drawYAxis(b, a, ax, c.YLabel)
	var xs scale
	if c.XKind == XTime {
		t0, t1 := timeDomain(xlo, xhi)
		xs = newScale(t0, t1, a.l, a.r, false)
		ticks, labels := timeAxis(a, xs, fromUnix(t0, loc), fromUnix(t1, loc), loc)
		drawXTicks(b, a, ticks, labels, c.XLabel)
	} else {
		xa, _ := numberAxisX(a, xlo, xhi, c.XKind == XDuration)
		xs = xa.sc
		var pos []float64
		for _, t := range xa.ticks {
			pos = append(pos, xs.at(t))
		}
		drawXTicks(b, a, pos, xa.labels, c.XLabel)
	}
	clampY := func(y float64) float64 { return math.Max(a.t, math.Min(a.b, ax.sc.at(y))) }
	for i, s := range c.Series {
		var d strings.Builder
		pen := false
		for _, p := range s.Points {
			if !finite(p.X) || !finite(p.Y) {
				pen = false // gap: start a new subpath at the next good point
				continue
			}
			if pen {
				d.WriteByte('L')
			} else {
				d.WriteByte('M')
			}
			pen = true
			d.WriteString(num(xs.at(p.X)) + " " + num(clampY(p.Y)))
		}
		b.open("path", "class", "rw-line "+seriesClass(i), "d", d.String(), "fill", "none",
			"stroke", seriesColor(i), "stroke-width", "2", "stroke-linejoin", "round")
		b.title(s.Name)
		b.close("path")
	}
	yfmt := c.YFormat
	if yfmt == nil {
		yfmt = formatValue
	}
	if k := c.Knee; k != nil && finite(k.X) && finite(k.Y) {
		x, y := xs.at(k.X), clampY(k.Y)
		tip := fmt.Sprintf("%s\n%s, %s", k.Label, c.xLabel(k.X, loc), withUnit(yfmt(k.Y), c.YLabel))
		b.open("g", "class", "rw-knee-group")
		b.title(tip)
		b.leaf("circle", "class", "rw-knee", "cx", num(x), "cy", num(y), "r", "7", "fill", "none",
			"stroke", "currentColor", "stroke-width", "2")
		if k.Label != "" {
			// Label toward the emptier side so it does not sit on the curve.
			anchor, lx := "start", x+10
			if x > (a.l+a.r)/2 {
				anchor, lx = "end", x-10
			}
			ly := y - 10
			if ly < a.t+12 {
				ly = y + 20
			}
			b.elem("text", truncate(k.Label, 40), "class", "rw-knee-label", "x", num(lx), "y", num(ly),
				"text-anchor", anchor, "fill", "currentColor")
		}
		b.close("g")
	}
	drawLegend(b, legend, a.l, H-8-float64(rows-1)*(lineH+4), W-80)
	desc := fmt.Sprintf("Line chart of %d series, %d points, x from %s to %s", len(c.Series), npts,
		c.xLabel(xlo, loc), c.xLabel(xhi, loc))
	if k := c.Knee; k != nil && k.Label != "" && finite(k.X) && finite(k.Y) {
		desc += "; marked: " + c.Knee.Label + " at " + c.xLabel(c.Knee.X, loc)
	}
	return H, desc + ".", true
}
