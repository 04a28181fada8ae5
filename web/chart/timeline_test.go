package chart_test

import (
	"math"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/web/chart"
)

// A timeline lays its segments end to end from zero, names each kind once
// in the legend, escapes labels and marks the target; bad lengths are
// skipped and an empty one says so.
func TestTimeline(t *testing.T) {
	c := chart.Timeline{Frame: chart.Frame{Title: "Plan", ID: "tl"}, Target: 3600, TargetLabel: "RTO target",
		Segments: []chart.Segment{{Label: "full <backup>", Seconds: 1200}, {Label: "log backups", Seconds: 60, Series: 2},
			{Label: "log backups", Seconds: math.NaN(), Series: 2}, {Label: "log backups", Seconds: 60, Series: 2}}}
	svg := c.SVG()
	if n := strings.Count(svg, `class="rw-bar `); n != 3 {
		t.Errorf("%d bars, want 3", n)
	}
	if strings.Contains(svg, "<backup>") || !strings.Contains(svg, "full &lt;backup&gt;") {
		t.Error("label not escaped")
	}
	if strings.Count(svg, ">log backups</text>") != 1 {
		t.Error("the legend repeats a kind")
	}
	if !strings.Contains(svg, "RTO target: ") || !strings.Contains(svg, "stroke-dasharray") {
		t.Error("no target line")
	}
	if !strings.Contains(svg, "Timeline of 4 steps") {
		t.Errorf("desc: %.300s", svg)
	}
	if c.SVG() != svg {
		t.Error("not deterministic")
	}
	empty := chart.Timeline{Segments: []chart.Segment{{Label: "x", Seconds: -1}}}.SVG()
	if !strings.Contains(empty, "No data") {
		t.Errorf("empty: %.200s", empty)
	}
}
