package chart

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/restorewatch/restorewatch/store/human"
)

// Box is the five-number summary of one category, e.g. the speed ratios of
// the restores on one build.
type Box struct {
	// Label names the category; long labels are wrapped or rotated and the
	// full text is kept in a tooltip.
	Label string
	// Min, Q1, Median, Q3 and Max are the whiskers, box and median. They are
	// drawn sorted, so slightly inconsistent input still renders; a NaN or
	// infinite value (or ≤ 0 on a log axis) leaves the category empty.
	Min, Q1, Median, Q3, Max float64
	// N is the number of observations, printed under the label.
	N int
	// CILow and CIHigh, when both finite and CIHigh > CILow, draw the
	// confidence interval of the median as a dark band inside the box.
	CILow, CIHigh float64
	// Href optionally makes the box a link (relative or http(s) only).
	Href string
	// Tooltip replaces the default tooltip (n, median, CI, quartiles, range).
	Tooltip string
}

// Reference is a labelled horizontal line across a chart, e.g. 1.0 for
// "usual speed" on a ratio axis.
type Reference struct {
	// Value is where the line is drawn; a log axis skips Value ≤ 0.
	Value float64
	// Label is written above the line's right end.
	Label string
}

// BoxPlot compares distributions across categories (e.g. builds) on a
// linear or log axis. Default size 800×360.
type BoxPlot struct {
	Frame
	// Boxes are drawn left to right in the given order.
	Boxes []Box
	// Refs are horizontal reference lines across the plot.
	Refs []Reference
	// YLabel is the unit or axis name, e.g. "× usual speed".
	YLabel string
	// LogY uses a log10 axis, which keeps ratios symmetric (0.5× and 2× are
	// equally far from 1×).
	LogY bool
	// YFormat formats tick labels and tooltip values; nil: plain numbers.
	YFormat func(float64) string
}

// Render writes the chart as SVG; it satisfies templ.Component.
func (c BoxPlot) Render(ctx context.Context, w io.Writer) error {
	return render(ctx, w, c.Frame, c.opts(), c.draw)
}

// SVG returns the chart as an SVG string.
func (c BoxPlot) SVG() string { return string(renderBytes(c.Frame, c.opts(), c.draw)) }

func (c BoxPlot) opts() docOpts {
	return docOpts{kind: "rw-boxplot", defTitle: "Box plot", defW: 800, defH: 360, width: "100%"}
}

// values returns the box's five numbers sorted, or nil if unusable.
func (bx Box) values(log bool) []float64 {
	v := []float64{bx.Min, bx.Q1, bx.Median, bx.Q3, bx.Max}
	for _, x := range v {
		if !usable(x, log) {
			return nil
		}
	}
	sort.Float64s(v)
	return v
}

func (bx Box) hasCI(log bool) bool {
	return usable(bx.CILow, log) && usable(bx.CIHigh, log) && bx.CIHigh > bx.CILow
}

// wrapLabel splits s into at most maxLines lines of at most width runes,
// breaking at spaces where possible and hard-breaking long words; the last
// line ends in an ellipsis if text was cut.
func wrapLabel(s string, width, maxLines int) []string {
	var lines []string
	cur := []rune{}
	flush := func() { lines = append(lines, string(cur)); cur = cur[:0:0] }
	for _, w := range strings.Fields(s) {
		rw := []rune(w)
		if len(cur) > 0 && len(cur)+1+len(rw) <= width {
			cur = append(append(cur, ' '), rw...)
			continue
		}
		if len(cur) > 0 {
			flush()
		}
		for len(rw) > width {
			cur = rw[:width]
			flush()
			rw = rw[width:]
		}
		cur = append(cur, rw...)
	}
	if len(cur) > 0 {
		flush()
	}
	if len(lines) > maxLines {
		lines = lines[:maxLines]
		last := []rune(lines[maxLines-1])
		if len(last) > width-1 {
			last = last[:width-1]
		}
		lines[maxLines-1] = string(last) + "…"
	}
	return lines
}

func (c BoxPlot) draw(b *builder, W, H float64) (float64, string, bool) {
	var vals []float64
	valid := 0
	for _, bx := range c.Boxes {
		if v := bx.values(c.LogY); v != nil {
			vals = append(vals, v...)
			valid++
			if bx.hasCI(c.LogY) {
				vals = append(vals, bx.CILow, bx.CIHigh)
			}
		}
	}
	if valid == 0 {
		return 0, "", false
	}
	for _, r := range c.Refs {
		if usable(r.Value, c.LogY) {
			vals = append(vals, r.Value)
		}
	}
	n := float64(len(c.Boxes))
	slot := (W - 80) / n
	// Wrap labels when a slot fits 8+ characters, else rotate them: rotated
	// text is harder to read, so it is only the fallback for many boxes.
	maxChars := int((slot - 6) / charWidth)
	rotate := maxChars < 8
	wrapped := make([][]string, len(c.Boxes))
	labelH := 0.0
	for i, bx := range c.Boxes {
		if rotate {
			wrapped[i] = []string{truncate(bx.Label, 28)}
			labelH = math.Max(labelH, textWidth(wrapped[i][0])*0.71+24)
		} else {
			wrapped[i] = wrapLabel(bx.Label, maxChars, 3)
			labelH = math.Max(labelH, float64(len(wrapped[i])+1)*lineH+10)
		}
	}
	a := area{t: 12, r: W - 16, b: H - math.Min(labelH, H*0.4)}
	if a.h() < 40 {
		a.b = a.t + 40
	}
	ax := makeValueAxis(vals, c.LogY, false, max(2, int(a.h()/40)), c.YFormat, a.b, a.t)
	a.l = math.Min(W*0.3, maxLabelWidth(ax.labels)+14)
	if c.YLabel != "" {
		a.l += 18
	}
	if rotate && len(wrapped) > 0 { // the first rotated label reaches left of its box
		a.l = math.Max(a.l, math.Min(W*0.3, textWidth(wrapped[0][0])*11/fontSize*0.71-slot/2+4))
	}
	slot = a.w() / n
	drawYAxis(b, a, ax, c.YLabel)
	b.leaf("line", "class", "rw-axis", "x1", num(a.l), "x2", num(a.r), "y1", num(a.b), "y2", num(a.b),
		"stroke", "currentColor", "stroke-opacity", "0.6")
	c.drawRefs(b, a, ax.sc, false)
	yfmt := c.YFormat
	if yfmt == nil {
		yfmt = formatValue
	}
	bw := math.Min(slot*0.6, 60)
	var summary []string
	for i, bx := range c.Boxes {
		cx := a.l + slot*(float64(i)+0.5)
		c.drawLabel(b, bx, wrapped[i], cx, a.b, rotate)
		v := bx.values(c.LogY)
		if v == nil {
			b.elem("text", "no data", "class", "rw-muted", "x", num(cx), "y", num(a.b-8),
				"text-anchor", "middle", "font-size", "11", "fill", "currentColor")
			continue
		}
		if len(summary) < 20 {
			summary = append(summary, fmt.Sprintf("%s median %s", bx.Label, yfmt(v[2])))
		}
		tip := bx.Tooltip
		if tip == "" {
			tip = fmt.Sprintf("%s\nn = %s\nmedian %s", bx.Label, human.Count(int64(bx.N)), withUnit(yfmt(v[2]), c.YLabel))
			if bx.hasCI(c.LogY) {
				tip += fmt.Sprintf(" (CI %s – %s)", yfmt(bx.CILow), yfmt(bx.CIHigh))
			}
			tip += fmt.Sprintf("\nquartiles %s – %s\nrange %s – %s", yfmt(v[1]), yfmt(v[3]), yfmt(v[0]), yfmt(v[4]))
		}
		y := func(x float64) string { return num(ax.sc.at(x)) }
		ok := b.linkOpen(bx.Href)
		b.open("g", "class", "rw-box-group")
		b.title(tip)
		b.open("g", "class", "rw-whisker", "stroke", "currentColor")
		b.leaf("line", "x1", num(cx), "x2", num(cx), "y1", y(v[0]), "y2", y(v[1]))
		b.leaf("line", "x1", num(cx), "x2", num(cx), "y1", y(v[3]), "y2", y(v[4]))
		b.leaf("line", "x1", num(cx-bw/4), "x2", num(cx+bw/4), "y1", y(v[0]), "y2", y(v[0]))
		b.leaf("line", "x1", num(cx-bw/4), "x2", num(cx+bw/4), "y1", y(v[4]), "y2", y(v[4]))
		b.close("g")
		top, bot := ax.sc.at(v[3]), ax.sc.at(v[1])
		b.leaf("rect", "class", "rw-box", "x", num(cx-bw/2), "y", num(top), "width", num(bw),
			"height", num(math.Max(bot-top, 1)), "fill", seriesColor(0), "fill-opacity", "0.25", "stroke", "currentColor")
		if bx.hasCI(c.LogY) {
			ct, cb := ax.sc.at(bx.CIHigh), ax.sc.at(bx.CILow)
			b.leaf("rect", "class", "rw-ci", "x", num(cx-bw/8), "y", num(ct), "width", num(bw/4),
				"height", num(math.Max(cb-ct, 1)), "fill", seriesColor(0), "fill-opacity", "0.6")
		}
		b.leaf("line", "class", "rw-median", "x1", num(cx-bw/2), "x2", num(cx+bw/2), "y1", y(v[2]), "y2", y(v[2]),
			"stroke", "currentColor", "stroke-width", "2.5")
		b.close("g")
		b.linkClose(ok)
	}
	c.drawRefs(b, a, ax.sc, true) // labels on top of the boxes
	desc := fmt.Sprintf("Box plot of %d categories: %s", len(c.Boxes), strings.Join(summary, "; "))
	if len(c.Boxes) > len(summary) {
		desc += "; …"
	}
	return H, desc + ".", true
}

// drawRefs draws the reference lines (labels false) or their labels at the
// right end (labels true); labels go last so boxes do not hide them.
func (c BoxPlot) drawRefs(b *builder, a area, sc scale, labels bool) {
	for _, r := range c.Refs {
		if !usable(r.Value, c.LogY) {
			continue
		}
		y := sc.at(r.Value)
		if labels {
			if r.Label != "" {
				b.elem("text", truncate(r.Label, 40), "class", "rw-ref-label", "x", num(a.r-2), "y", num(y-4),
					"text-anchor", "end", "font-size", "11", "fill", "currentColor")
			}
			continue
		}
		b.open("g")
		b.title(r.Label)
		b.leaf("line", "class", "rw-ref", "x1", num(a.l), "x2", num(a.r), "y1", num(y), "y2", num(y),
			"stroke", "currentColor", "stroke-dasharray", "6 3")
		b.close("g")
	}
}

// drawLabel writes a category label under the plot, wrapped or rotated,
// with the observation count under wrapped labels and the full label as
// tooltip.
func (c BoxPlot) drawLabel(b *builder, bx Box, lines []string, cx, y0 float64, rotate bool) {
	b.open("g", "class", "rw-axis rw-category", "fill", "currentColor")
	b.title(fmt.Sprintf("%s (n = %s)", bx.Label, human.Count(int64(bx.N))))
	if rotate {
		x, y := num(cx+4), num(y0+12)
		b.elem("text", lines[0], "x", x, "y", y, "text-anchor", "end", "font-size", "11",
			"transform", "rotate(-45 "+x+" "+y+")")
	} else {
		for j, l := range lines {
			b.elem("text", l, "x", num(cx), "y", num(y0+16+float64(j)*lineH), "text-anchor", "middle", "font-size", "11")
		}
		b.elem("text", "n = "+human.Count(int64(bx.N)), "class", "rw-muted", "x", num(cx),
			"y", num(y0+16+float64(len(lines))*lineH), "text-anchor", "middle", "font-size", "10")
	}
	b.close("g")
}
