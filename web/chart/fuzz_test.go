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
	f.Add("SQL01", "<script>alert(1)</script>", "javascript:alert(1)", 1.5, 200.0, int64(1767225600), int64(3600), true, false)
	f.Add("\"onmouseover=x", "a&b", "/r?id=1&x=2", math.NaN(), math.Inf(1), int64(0), int64(0), false, true)
	f.Add("\x00\xff\ufffe", "\u202e", "https://x.test", -1.0, 0.0, int64(-62135596800), int64(1), true, true)
	f.Add("", "", "", 1e308, -1e308, int64(253402300799), int64(-5), false, false)
	f.Fuzz(func(t *testing.T, name, label, href string, v1, v2 float64, unix, step int64, logY, outlier bool) {
		// Keep times inside what time.Time formats sensibly (years 1..9999)
		// while still covering zero, negative and huge steps.
		const lo, hi = -62135596800, 253402300799
		unix = min(max(unix, lo), hi)
		t0 := time.Unix(unix, 0).UTC()
		t1 := time.Unix(min(max(unix+step, lo), hi), 0).UTC()
		c := chart.TimeScatter{
			Frame:  chart.Frame{Title: label, Desc: name, ID: name},
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
