package chart

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
)

// Sparkline is a tiny inline trend without axes, sized in em so it sits in
// a table cell or a sentence at the surrounding font size. The default
// viewBox is 100×20 (rendered 5em × 1em); Frame.Width and Frame.Height change
// the aspect ratio. NaN and infinite values leave gaps.
type Sparkline struct {
	Frame
	// Values are spaced evenly left to right.
	Values []float64
	// MarkLast draws a dot on the last value, the one readers look for.
	MarkLast bool
	// Format formats values in the generated description; nil: plain.
	Format func(float64) string
}

// Render writes the sparkline as SVG; it satisfies templ.Component.
func (c Sparkline) Render(ctx context.Context, w io.Writer) error {
	return render(ctx, w, c.Frame, c.opts(), c.draw)
}

// SVG returns the sparkline as an SVG string.
func (c Sparkline) SVG() string { return string(renderBytes(c.Frame, c.opts(), c.draw)) }

func (c Sparkline) opts() docOpts {
	w, h := 100.0, 20.0
	if finite(c.Width) && c.Width >= 40 && c.Width <= 1e5 {
		w = c.Width
	}
	if finite(c.Height) && c.Height >= 16 && c.Height <= 1e5 {
		h = c.Height
	}
	// 1em tall, width by the aspect ratio, so it scales with the text.
	return docOpts{kind: "rw-sparkline", defTitle: "Trend", defW: w, defH: h,
		width: trimZero(fmt.Sprintf("%.1f", w/h)) + "em", height: "1em"}
}

func (c Sparkline) draw(b *builder, W, H float64) (float64, string, bool) {
	lo, hi := math.Inf(1), math.Inf(-1)
	count, last := 0, math.NaN()
	for _, v := range c.Values {
		if finite(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
			count++
			last = v
		}
	}
	if count == 0 {
		return 0, "", false
	}
	pad := 2.5 // room for the stroke and the end dot
	ys := newScale(lo, hi, H-pad, pad, false)
	n := len(c.Values)
	x := func(i int) float64 {
		if n == 1 {
			return W / 2
		}
		return pad + float64(i)*(W-2*pad)/float64(n-1)
	}
	var d strings.Builder
	pen := false
	lastX, lastY := 0.0, 0.0
	for i, v := range c.Values {
		if !finite(v) {
			pen = false
			continue
		}
		px, py := x(i), ys.at(v)
		if pen {
			d.WriteByte('L')
		} else {
			d.WriteByte('M')
		}
		if !pen && (i+1 >= n || !finite(c.Values[i+1])) {
			// An isolated value would be an invisible zero-length path:
			// draw it as a short dash instead.
			d.WriteString(num(px-1.5) + " " + num(py) + "L")
			px += 1.5
		}
		pen = true
		d.WriteString(num(px) + " " + num(py))
		lastX, lastY = x(i), py
	}
	b.leaf("path", "class", "rw-spark", "d", d.String(), "fill", "none", "stroke", "currentColor",
		"stroke-width", "1.5", "stroke-linejoin", "round", "stroke-linecap", "round")
	if c.MarkLast {
		b.leaf("circle", "class", "rw-spark-dot", "cx", num(lastX), "cy", num(lastY), "r", "2", "fill", "currentColor")
	}
	f := c.Format
	if f == nil {
		f = formatValue
	}
	return H, fmt.Sprintf("Trend of %d values from %s to %s; lowest %s, highest %s.",
		count, f(firstFinite(c.Values)), f(last), f(lo), f(hi)), true
}

func firstFinite(v []float64) float64 {
	for _, x := range v {
		if finite(x) {
			return x
		}
	}
	return math.NaN()
}
