package chart

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
)

// Bar is one row of a Bars chart, e.g. one server's median throughput.
type Bar struct {
	// Label names the row; long labels are truncated, full text in tooltip.
	Label string
	// Value is the bar length; NaN or infinite shows "n/a" and no bar.
	Value float64
	// Compare is the second value (e.g. before a change) drawn above Value
	// when Bars.Compare is set; NaN or infinite draws no compare bar.
	Compare float64
	// ValueText and CompareText replace the formatted numbers at bar ends.
	ValueText, CompareText string
	// Href optionally makes the row's bars a link (relative or http(s)).
	Href string
	// Tooltip replaces the default tooltip.
	Tooltip string
}

// Bars is a horizontal bar chart, optionally grouping a second value per
// row for before/after comparison. Bars start at zero so lengths compare
// honestly. Height grows with the number of rows unless Frame.Height is set.
type Bars struct {
	Frame
	// Bars are the rows, top to bottom in the given order.
	Bars []Bar
	// Unit is appended to default value texts and shown under the axis.
	Unit string
	// Compare draws each Bar's Compare value as a second, grey bar.
	Compare bool
	// ValueName and CompareName label the two bars in the legend and
	// tooltips, e.g. "after" and "before".
	ValueName, CompareName string
	// Format formats values (e.g. FormatMiBps); nil: plain numbers + Unit.
	Format func(float64) string
}

// Render writes the chart as SVG; it satisfies templ.Component.
func (c Bars) Render(ctx context.Context, w io.Writer) error {
	return render(ctx, w, c.Frame, c.opts(), c.draw)
}

// SVG returns the chart as an SVG string.
func (c Bars) SVG() string { return string(renderBytes(c.Frame, c.opts(), c.draw)) }

func (c Bars) opts() docOpts {
	return docOpts{kind: "rw-bars", defTitle: "Bar chart", defW: 800, defH: 0, width: "100%"}
}

// compareSeries is the neutral grey series used for the "before" bar, so
// the current value keeps the accent colour.
const compareSeries = 7

func (c Bars) valueText(v float64, text string) string {
	switch {
	case text != "":
		return text
	case !finite(v):
		return "n/a"
	case c.Format != nil:
		return c.Format(v)
	}
	return withUnit(formatValue(v), c.Unit)
}

func (c Bars) draw(b *builder, W, H float64) (float64, string, bool) {
	var vals []float64
	labelW, textW := 0.0, 0.0
	for _, r := range c.Bars {
		if finite(r.Value) {
			vals = append(vals, r.Value)
		}
		if c.Compare && finite(r.Compare) {
			vals = append(vals, r.Compare)
			textW = math.Max(textW, textWidth(c.valueText(r.Compare, r.CompareText)))
		}
		labelW = math.Max(labelW, textWidth(r.Label))
		textW = math.Max(textW, textWidth(c.valueText(r.Value, r.ValueText)))
	}
	if len(vals) == 0 {
		return 0, "", false
	}
	rowH := 26.0
	if c.Compare {
		rowH = 38
	}
	top := 8.0
	if c.Compare {
		top += lineH + 10 // legend row
	}
	bottom := 26.0
	if c.Unit != "" && c.Format == nil {
		bottom += 16
	}
	n := float64(len(c.Bars))
	if H == 0 {
		H = top + n*rowH + bottom
	} else {
		rowH = math.Max(4, (H-top-bottom)/n)
	}
	labelW = math.Min(labelW+12, W*0.35)
	a := area{l: labelW, t: top, r: W - math.Min(textW+12, W*0.25), b: top + n*rowH}
	ax := makeValueAxis(vals, false, true, max(2, int(a.w()/90)), c.Format, a.l, a.r)
	var xs []float64
	for _, t := range ax.ticks {
		xs = append(xs, ax.sc.at(t))
	}
	unit := c.Unit
	if c.Format != nil {
		unit = "" // the formatter already carries the unit
	}
	drawXTicks(b, a, xs, ax.labels, unit)
	if c.Compare {
		drawLegend(b, []legendEntry{{name: orDefault(c.CompareName, "before"), series: compareSeries, swatch: "bar"},
			{name: orDefault(c.ValueName, "after"), series: 0, swatch: "bar"}}, a.l, 8+lineH-2, a.w())
	}
	zero := ax.sc.at(0)
	maxChars := int((labelW - 12) / charWidth)
	var summary []string
	for i, r := range c.Bars {
		y := top + float64(i)*rowH
		b.open("g", "class", "rw-bar-row")
		b.open("g", "class", "rw-axis rw-category", "fill", "currentColor")
		b.title(r.Label)
		b.elem("text", truncate(r.Label, maxChars), "x", num(labelW-8), "y", num(y+rowH/2+4), "text-anchor", "end")
		b.close("g")
		tip := r.Tooltip
		if tip == "" {
			tip = r.Label + "\n" + orDefault(c.ValueName, "value") + ": " + c.valueText(r.Value, r.ValueText)
			if c.Compare {
				tip += "\n" + orDefault(c.CompareName, "before") + ": " + c.valueText(r.Compare, r.CompareText)
				if finite(r.Value) && finite(r.Compare) && r.Compare != 0 {
					tip += "\nchange: " + SignedPercent((r.Value/r.Compare-1)*100)
				}
			}
		}
		if len(summary) < 30 {
			summary = append(summary, r.Label+" "+c.valueText(r.Value, r.ValueText))
		}
		ok := b.linkOpen(r.Href)
		b.open("g", "class", "rw-bar-group")
		b.title(tip)
		bh := rowH * 0.62
		if c.Compare {
			bh = rowH * 0.36
			c.bar(b, zero, ax.sc.at(r.Compare), y+rowH*0.12, bh, compareSeries, r.Compare, r.CompareText)
			c.bar(b, zero, ax.sc.at(r.Value), y+rowH*0.12+bh+1, bh, 0, r.Value, r.ValueText)
		} else {
			c.bar(b, zero, ax.sc.at(r.Value), y+rowH*0.19, bh, 0, r.Value, r.ValueText)
		}
		b.close("g")
		b.linkClose(ok)
		b.close("g")
	}
	desc := fmt.Sprintf("Bar chart of %d rows: %s", len(c.Bars), strings.Join(summary, "; "))
	if len(c.Bars) > len(summary) {
		desc += "; …"
	}
	return H, desc + ".", true
}

// bar draws one bar from x0 to x1 at y with height h, and its value text
// just past the end (left of it for negative values).
func (c Bars) bar(b *builder, x0, x1, y, h float64, series int, v float64, text string) {
	label := c.valueText(v, text)
	ty := num(y + h/2 + 4)
	if !finite(v) {
		b.elem("text", label, "class", "rw-bar-value", "x", num(x0+4), "y", ty, "font-size", "11", "fill", "currentColor")
		return
	}
	l, r := math.Min(x0, x1), math.Max(x0, x1)
	b.leaf("rect", "class", "rw-bar "+seriesClass(series), "x", num(l), "y", num(y),
		"width", num(math.Max(r-l, 0.5)), "height", num(h), "fill", seriesColor(series))
	x, anchor := r+4, "start"
	if x1 < x0 {
		x, anchor = l-4, "end"
	}
	b.elem("text", label, "class", "rw-bar-value", "x", num(x), "y", ty, "text-anchor", anchor,
		"font-size", "11", "fill", "currentColor")
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// SignedPercent is a change in whole percent, "0 %" when it rounds to
// nothing (never "-0 %").
func SignedPercent(pct float64) string {
	r := math.Round(pct)
	if r == 0 || math.IsNaN(r) {
		return "0 %"
	}
	return fmt.Sprintf("%+.0f %%", r)
}
