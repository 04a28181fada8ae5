package chart_test

import (
	"math"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/web/chart"
)

// FuzzTimeScatter renders charts from arbitrary labels, links, times and
// values and checks the output is well-formed XML with no script, event
// handler or unsafe link (see parseSVG), and that rendering never panics.
// Run with: go test ./web/chart/ -run '^$' -fuzz FuzzTimeScatter -fuzztime 20s
func FuzzTimeScatter(f *testing.F) {
	f.Add("SQL01", "<script>alert(1)</script>", "javascript:alert(1)", 1.5, 200.0, int64(1767225600), int64(3600), true, false, uint16(0))
	f.Add("\"onmouseover=x", "a&b", "/r?id=1&x=2", math.NaN(), math.Inf(1), int64(0), int64(0), false, true, uint16(50))
	f.Add("\x00\xff\ufffe", "\u202e", "https://x.test", -1.0, 0.0, int64(-62135596800), int64(1), true, true, uint16(300))
	f.Add("", "", "", 1e308, -1e308, int64(253402300799), int64(-5), false, false, uint16(65535))
	f.Fuzz(func(t *testing.T, name, label, href string, v1, v2 float64, unix, step int64, logY, outlier bool, size uint16) {
		// Keep times inside what time.Time formats sensibly (years 1..9999)
		// while still covering zero, negative and huge steps.
		const lo, hi = -62135596800, 253402300799
		unix = min(max(unix, lo), hi)
		t0 := time.Unix(unix, 0).UTC()
		t1 := time.Unix(min(max(unix+step, lo), hi), 0).UTC()
		c := chart.TimeScatter{
			Frame:  chart.Frame{Title: label, Desc: name, ID: name, Width: float64(size), Height: float64(size) / 2},
			YLabel: label,
			LogY:   logY,
			Series: []chart.Series{
				{Name: name, Points: []chart.Point{{T: t0, V: v1, Href: href, Outlier: outlier}, {T: t1, V: v2, Tooltip: label}}},
				{Name: label, Points: []chart.Point{{T: t1, V: v1 * 2, Href: "/" + label}}},
			},
			Markers:      []chart.Marker{{T: t0, Label: label}, {T: t1, Label: name}},
			ChangePoints: []chart.ChangePoint{{T: t1, Label: label}},
			RefLines:     []chart.RefLine{{Y: v2, From: t0, To: t1, Label: name}},
		}
		svg := c.SVG()
		p := parseSVG(t, svg)
		if p.classes["rw-point"] > 3 {
			t.Fatalf("%d points from 3 inputs", p.classes["rw-point"])
		}
		if len(svg) > 1<<20 {
			t.Fatalf("output of %d bytes", len(svg))
		}
	})
}

// FuzzOtherCharts does the same for the category charts, whose label
// wrapping and truncation work on runes of arbitrary text.
func FuzzOtherCharts(f *testing.F) {
	f.Add("16.0.4135.4 CU15 <b>", "javascript:x", 0.5, 1.0, 2.0, uint8(3), true)
	f.Add("\xff\xfe long-label-without-spaces-that-must-be-broken-somewhere", "", math.NaN(), -1.0, 1e300, uint8(40), false)
	f.Fuzz(func(t *testing.T, label, href string, a, b, c float64, n uint8, flag bool) {
		var boxes []chart.Box
		var bars []chart.Bar
		var xy []chart.XY
		for i := 0; i < int(n%64); i++ {
			k := float64(i)
			boxes = append(boxes, chart.Box{Label: label, Min: a, Q1: b, Median: c, Q3: b + k, Max: c * k, N: i, CILow: a, CIHigh: c, Href: href})
			bars = append(bars, chart.Bar{Label: label, Value: a * k, Compare: b, Href: href, ValueText: label})
			xy = append(xy, chart.XY{X: a + k, Y: c * k})
		}
		for _, c := range []component{
			chart.BoxPlot{Frame: chart.Frame{Title: label}, Boxes: boxes, LogY: flag, YLabel: label, Refs: []chart.Reference{{Value: c, Label: label}}},
			chart.Bars{Bars: bars, Compare: flag, Unit: label},
			chart.Line{Series: []chart.LineSeries{{Name: label, Points: xy}}, XKind: chart.XKind(n % 3), YMin: a, YMax: b, Knee: &chart.Annotation{X: a, Y: b, Label: label}},
			chart.Sparkline{Values: []float64{a, b, c}, MarkLast: flag},
		} {
			parseSVG(t, c.SVG())
		}
	})
}
