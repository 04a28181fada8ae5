package chart

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
)

// Segment is one stretch of a Timeline: a step of a restore plan.
type Segment struct {
	// Label names the segment in its tooltip and the legend ("full backup").
	Label string
	// Seconds is its length; NaN, infinite or negative segments are skipped.
	Seconds float64
	// Series picks the colour (0 accent, 1, 2 …), so segments of one kind
	// share it and the legend names it once.
	Series int
	// Tooltip replaces the default tooltip (label and duration).
	Tooltip string
}

// Timeline is one horizontal bar of consecutive segments on a time axis
// from zero: the steps of a restore plan, one after the other, with a
// marker at Target (an RTO) when it is set.
type Timeline struct {
	Frame
	Segments []Segment
	// Target draws a labelled vertical line at that many seconds; 0: none.
	Target      float64
	TargetLabel string
}

// Render writes the chart as SVG; it satisfies templ.Component.
func (c Timeline) Render(ctx context.Context, w io.Writer) error {
	return render(ctx, w, c.Frame, c.opts(), c.draw)
}

// SVG returns the chart as an SVG string.
func (c Timeline) SVG() string { return string(renderBytes(c.Frame, c.opts(), c.draw)) }

func (c Timeline) opts() docOpts {
	return docOpts{kind: "rw-timeline", defTitle: "Timeline", defW: 800, defH: 0, width: "100%"}
}

func (c Timeline) draw(b *builder, W, H float64) (float64, string, bool) {
	total := 0.0
	var legend []legendEntry
	seen := map[int]bool{}
	for _, s := range c.Segments {
		if finite(s.Seconds) && s.Seconds > 0 {
			total += s.Seconds
			if !seen[s.Series] {
				seen[s.Series] = true
				legend = append(legend, legendEntry{name: s.Label, series: s.Series, swatch: "bar"})
			}
		}
	}
	if total <= 0 {
		return 0, "", false
	}
	top := 8 + lineH + 10
	if H == 0 {
		H = top + 40 + 26
	}
	a := area{l: 12, t: top, r: W - 12, b: top + 40}
	end := total
	if finite(c.Target) && c.Target > 0 {
		end = math.Max(end, c.Target)
	}
	ax := makeValueAxis([]float64{0, end}, false, true, max(2, int(a.w()/110)), FormatDuration, a.l, a.r)
	var xs []float64
	for _, t := range ax.ticks {
		xs = append(xs, ax.sc.at(t))
	}
	drawXTicks(b, a, xs, ax.labels, "")
	drawLegend(b, legend, a.l, 8+lineH-2, a.w())
	at := 0.0
	var parts []string
	for _, s := range c.Segments {
		if !finite(s.Seconds) || s.Seconds <= 0 {
			continue
		}
		x0, x1 := ax.sc.at(at), ax.sc.at(at+s.Seconds)
		tip := s.Tooltip
		if tip == "" {
			tip = s.Label + ": " + FormatDuration(s.Seconds)
		}
		b.open("g", "class", "rw-bar-group")
		b.title(tip)
		b.leaf("rect", "class", "rw-bar "+seriesClass(s.Series), "x", num(x0), "y", num(a.t+6), "width", num(math.Max(x1-x0, 0.5)),
			"height", num(a.h()-12), "fill", seriesColor(s.Series))
		b.close("g")
		at += s.Seconds
		if len(parts) < 12 {
			parts = append(parts, s.Label+" "+FormatDuration(s.Seconds))
		}
	}
	if finite(c.Target) && c.Target > 0 {
		x := ax.sc.at(c.Target)
		b.open("g", "class", "rw-target", "stroke", "currentColor")
		b.title(orDefault(c.TargetLabel, "target") + ": " + FormatDuration(c.Target))
		b.leaf("line", "x1", num(x), "x2", num(x), "y1", num(a.t), "y2", num(a.b), "stroke-dasharray", "4 3", "stroke-width", "2")
		b.close("g")
	}
	desc := fmt.Sprintf("Timeline of %d steps, %s in all: %s", len(c.Segments), FormatDuration(total), strings.Join(parts, "; "))
	if len(c.Segments) > len(parts) {
		desc += "; …"
	}
	if c.Target > 0 {
		desc += fmt.Sprintf("; %s %s", orDefault(c.TargetLabel, "target"), FormatDuration(c.Target))
	}
	return H, desc + ".", true
}
