package chart_test

import (
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/web/chart"
)

// component is what every chart type offers; templ.Component has the same
// Render method, which is why the charts work in templ templates.
type component interface {
	Render(ctx context.Context, w io.Writer) error
	SVG() string
}

// Compile-time checks that all chart types (values and pointers) satisfy it.
var (
	_ component = chart.TimeScatter{}
	_ component = chart.Line{}
	_ component = chart.BoxPlot{}
	_ component = chart.Bars{}
	_ component = chart.Sparkline{}
	_ component = &chart.TimeScatter{}
)

type sample struct {
	name string
	c    component
}

var t0 = time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)

// samples returns realistic charts used by several tests and by
// TestWriteSamples.
func samples() []sample {
	var a, b []chart.Point
	for i := 0; i < 40; i++ {
		t := t0.Add(time.Duration(i) * 18 * time.Hour)
		v := 200 + 30*math.Sin(float64(i)/3)
		if i >= 25 {
			v -= 70
		}
		a = append(a, chart.Point{T: t, V: v, Href: "/restores/a" + string(rune('0'+i%10)), Outlier: i == 12})
		b = append(b, chart.Point{T: t.Add(5 * time.Hour), V: v * 1.4, Href: "https://example.test/r?id=1&x=2"})
	}
	ts := chart.TimeScatter{
		Frame:        chart.Frame{Title: "Restore throughput", ID: "ts1"},
		Series:       []chart.Series{{Name: "SQL01", Points: a}, {Name: "SQL02 (prod)", Points: b}},
		Markers:      []chart.Marker{{T: t0.AddDate(0, 0, 10), Label: "16.0.4135 CU15"}, {T: t0.AddDate(0, 0, 11), Label: "16.0.4140 CU16"}},
		ChangePoints: []chart.ChangePoint{{T: t0.Add(25 * 18 * time.Hour), Label: "-35% throughput"}},
		RefLines: []chart.RefLine{{Y: 200, To: t0.Add(25 * 18 * time.Hour), Label: "median before 200"},
			{Y: 130, From: t0.Add(25 * 18 * time.Hour), Label: "median after 130"}},
		YLabel: "MiB/s",
	}
	prog := chart.Line{
		Frame:  chart.Frame{Title: "Restore progress"},
		XKind:  chart.XDuration,
		XLabel: "elapsed", YLabel: "%", YMin: 0, YMax: 100,
		Knee: &chart.Annotation{X: 1500, Y: 82, Label: "log redo starts"},
	}
	var p []chart.XY
	for s := 0.0; s <= 2400; s += 60 {
		y := math.Min(100, s/1500*82)
		if s > 1500 {
			y = 82 + (s-1500)/900*18
		}
		p = append(p, chart.XY{X: s, Y: y})
	}
	prog.Series = []chart.LineSeries{{Name: "restore 42", Points: p}}
	box := chart.BoxPlot{
		Frame: chart.Frame{Title: "Speed by build"},
		Boxes: []chart.Box{
			{Label: "16.0.4135.4 CU15", Min: 0.7, Q1: 0.9, Median: 1.0, Q3: 1.1, Max: 1.3, N: 40, CILow: 0.97, CIHigh: 1.03, Href: "/builds/1"},
			{Label: "16.0.4140.3 CU16 with a very long description of the build", Min: 0.5, Q1: 0.6, Median: 0.68, Q3: 0.75, Max: 0.9, N: 12, Href: "/builds/2"},
			{Label: "empty", Min: math.NaN()},
		},
		Refs:   []chart.Reference{{Value: 1, Label: "usual speed"}},
		YLabel: "× usual", LogY: true,
	}
	bars := chart.Bars{
		Frame:   chart.Frame{Title: "Median throughput per server"},
		Compare: true, ValueName: "after", CompareName: "before",
		Bars: []chart.Bar{
			{Label: "SQL01", Value: 130, Compare: 200, Href: "/servers/1"},
			{Label: "SQL02 (prod) with a long name that goes on", Value: 280, Compare: 270},
			{Label: "SQL03", Value: math.NaN(), Compare: 90},
		},
		Format: chart.FormatMiBps,
	}
	spark := chart.Sparkline{Frame: chart.Frame{Title: "Last 20 restores"}, Values: []float64{3, 4, 3.5, 5, math.NaN(), 6, 5.5, 7, 6.5}, MarkLast: true}
	return []sample{{"timescatter", ts}, {"line", prog}, {"boxplot", box}, {"bars", bars}, {"sparkline", spark}}
}

// TestWriteSamples writes the sample charts as a themed HTML page and as
// SVG files to $RW_CHART_SAMPLES for a human to look at; skipped otherwise.
func TestWriteSamples(t *testing.T) {
	dir := os.Getenv("RW_CHART_SAMPLES")
	if dir == "" {
		t.Skip("set RW_CHART_SAMPLES=/some/dir to write sample charts")
	}
	page := "<!doctype html><meta charset=utf-8><style>body{font-family:sans-serif;max-width:900px}" +
		"[data-theme=dark]{background:#111;color:#eee}" + chart.DefaultCSS + "</style><body>"
	for _, s := range samples() {
		svg := s.c.SVG()
		if err := os.WriteFile(filepath.Join(dir, s.name+".svg"), []byte(svg), 0o644); err != nil {
			t.Fatal(err)
		}
		page += "<h2>" + s.name + "</h2>" + svg
	}
	page += "<p>Inline sparkline " + samples()[4].c.SVG() + " in text.</p>"
	if err := os.WriteFile(filepath.Join(dir, "charts.html"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
}
