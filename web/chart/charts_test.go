package chart_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/web/chart"
)

// parsed summarises an SVG document decoded with encoding/xml.
type parsed struct {
	elems   map[string]int // element name → count
	classes map[string]int // class token → count
	hrefs   []string
	text    string // all character data
	root    xml.StartElement
}

// parseSVG decodes svg strictly and checks the safety properties every
// chart must have whatever its input: no script element, no event-handler
// attribute, and only safe link targets.
func parseSVG(t testing.TB, svg string) parsed {
	t.Helper()
	p := parsed{elems: map[string]int{}, classes: map[string]int{}}
	d := xml.NewDecoder(strings.NewReader(svg))
	var text strings.Builder
	first := true
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if first {
				p.root, first = tok.Copy(), false
			}
			name := tok.Name.Local
			p.elems[name]++
			if strings.EqualFold(name, "script") || strings.EqualFold(name, "foreignObject") {
				t.Fatalf("forbidden element <%s>", name)
			}
			for _, a := range tok.Attr {
				if strings.HasPrefix(strings.ToLower(a.Name.Local), "on") {
					t.Fatalf("event handler attribute %s=%q", a.Name.Local, a.Value)
				}
				switch a.Name.Local {
				case "class":
					for _, c := range strings.Fields(a.Value) {
						p.classes[c]++
					}
				case "href":
					if _, ok := chart.SafeURL(a.Value); !ok {
						t.Fatalf("unsafe href %q", a.Value)
					}
					p.hrefs = append(p.hrefs, a.Value)
				}
			}
		case xml.CharData:
			text.Write(tok)
		}
	}
	if first || p.root.Name.Local != "svg" {
		t.Fatalf("root is not <svg>: %q", svg)
	}
	p.text = text.String()
	return p
}

func (p parsed) attr(name string) string {
	for _, a := range p.root.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func TestSamplesWellFormedAndAccessible(t *testing.T) {
	for _, s := range samples() {
		t.Run(s.name, func(t *testing.T) {
			svg := s.c.SVG()
			p := parseSVG(t, svg)
			if p.attr("role") != "img" || p.attr("viewBox") == "" || p.attr("xmlns") != "http://www.w3.org/2000/svg" {
				t.Errorf("root lacks role/viewBox/xmlns: %v", p.root.Attr)
			}
			if s.name != "sparkline" && p.attr("width") != "100%" {
				t.Errorf("width = %q, want 100%%", p.attr("width"))
			}
			// aria-labelledby must point at the <title>, aria-describedby at <desc>.
			for attr, el := range map[string]string{"aria-labelledby": "title", "aria-describedby": "desc"} {
				id := p.attr(attr)
				if id == "" || !strings.Contains(svg, "<"+el+` id="`+id+`">`) {
					t.Errorf("%s=%q does not reference a <%s>", attr, id, el)
				}
			}
			if strings.Contains(p.text, "NaN") || strings.Contains(svg, "Inf") {
				t.Errorf("NaN/Inf leaked into output")
			}
			var buf bytes.Buffer
			if err := s.c.Render(context.Background(), &buf); err != nil || buf.String() != svg {
				t.Errorf("Render differs from SVG() (err %v)", err)
			}
			if again := s.c.SVG(); again != svg {
				t.Errorf("output is not deterministic")
			}
		})
	}
}

func TestSampleCounts(t *testing.T) {
	want := map[string]struct {
		class    string
		n, links int
	}{
		"timescatter": {"rw-point", 80, 80},
		"line":        {"rw-line", 1, 0},
		"boxplot":     {"rw-box", 2, 2}, // the NaN box is drawn as "no data"
		"bars":        {"rw-bar", 5, 1}, // 3 before + 2 after (one after is NaN)
		"sparkline":   {"rw-spark", 1, 0},
	}
	for _, s := range samples() {
		p := parseSVG(t, s.c.SVG())
		w := want[s.name]
		if got := p.classes[w.class]; got != w.n {
			t.Errorf("%s: %d elements of class %s, want %d", s.name, got, w.class, w.n)
		}
		if got := len(p.hrefs); got != w.links {
			t.Errorf("%s: %d links, want %d", s.name, got, w.links)
		}
	}
	ts := parseSVG(t, samples()[0].c.SVG())
	if ts.classes["rw-outlier"] != 1 || ts.classes["rw-changepoint"] != 1 || ts.classes["rw-marker"] != 2 || ts.classes["rw-ref"] != 2 {
		t.Errorf("timescatter decorations: %v", ts.classes)
	}
	// Median labels never sit on the data: they are legend entries.
	if ts.classes["rw-ref-label"] != 0 || ts.classes["rw-ref-swatch"] != 2 {
		t.Errorf("the reference lines' labels are drawn on the plot, not in the legend: %v", ts.classes)
	}
	if ts.classes["rw-series-0"] < 40 || ts.classes["rw-series-1"] < 40 || ts.classes["rw-axis"] == 0 || ts.classes["rw-grid"] == 0 {
		t.Errorf("timescatter classes: %v", ts.classes)
	}
	bp := parseSVG(t, samples()[2].c.SVG())
	if bp.classes["rw-ci"] != 1 || bp.classes["rw-median"] != 2 || !strings.Contains(bp.text, "usual speed") {
		t.Errorf("boxplot: %v", bp.classes)
	}
}

const hostile = `<script>alert(1)</script>"onmouseover=alert(2) x='&amp;`

// hostileCharts puts hostile text in every data-derived string field.
func hostileCharts() []sample {
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	f := chart.Frame{Title: hostile, Desc: hostile, ID: `x" onload="alert(3)`}
	return []sample{
		{"timescatter", chart.TimeScatter{Frame: f, YLabel: hostile,
			Series:       []chart.Series{{Name: hostile, Points: []chart.Point{{T: at, V: 1, Href: "/db/" + hostile}, {T: at.Add(time.Hour), V: 2, Tooltip: hostile}}}},
			Markers:      []chart.Marker{{T: at.Add(30 * time.Minute), Label: hostile}},
			ChangePoints: []chart.ChangePoint{{T: at.Add(40 * time.Minute), Label: hostile}},
			RefLines:     []chart.RefLine{{Y: 1.5, Label: hostile}}}},
		{"line", chart.Line{Frame: f, XLabel: hostile, YLabel: hostile,
			Series: []chart.LineSeries{{Name: hostile, Points: []chart.XY{{X: 0, Y: 0}, {X: 1, Y: 1}}}},
			Knee:   &chart.Annotation{X: 0.5, Y: 0.5, Label: hostile}}},
		{"boxplot", chart.BoxPlot{Frame: f, YLabel: hostile, Refs: []chart.Reference{{Value: 1, Label: hostile}},
			Boxes: []chart.Box{{Label: hostile, Min: 1, Q1: 2, Median: 3, Q3: 4, Max: 5, Href: "?db=" + hostile, Tooltip: hostile}}}},
		{"bars", chart.Bars{Frame: f, Unit: hostile, Compare: true, ValueName: hostile, CompareName: hostile,
			Bars: []chart.Bar{{Label: hostile, Value: 1, Compare: 2, ValueText: hostile, Href: hostile}}}},
		{"sparkline", chart.Sparkline{Frame: f, Values: []float64{1, 2}}},
	}
}

func TestHostileTextIsEscaped(t *testing.T) {
	for _, s := range hostileCharts() {
		t.Run(s.name, func(t *testing.T) {
			svg := s.c.SVG()
			p := parseSVG(t, svg) // also fails on <script> elements and on* attributes
			for _, bad := range []string{"<script", `"onmouseover`, `onload="`, "x='"} {
				if strings.Contains(svg, bad) {
					t.Errorf("output contains raw %q", bad)
				}
			}
			// The text survives, escaped, so users still see the real name.
			if !strings.Contains(p.text, "<script>alert(1)</script>") || !strings.Contains(svg, "&lt;script&gt;") {
				t.Errorf("hostile label not shown escaped")
			}
			if !strings.HasPrefix(p.attr("aria-labelledby"), "xonloadalert3") {
				t.Errorf("ID not sanitised: %q", p.attr("aria-labelledby"))
			}
		})
	}
}

func TestJavascriptLinksRefused(t *testing.T) {
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	bad := []string{"javascript:alert(1)", " JAVASCRIPT:alert(1)", "java\tscript:alert(1)", "data:text/html,x", "vbscript:x"}
	var pts []chart.Point
	var boxes []chart.Box
	var bars []chart.Bar
	for i, h := range bad {
		pts = append(pts, chart.Point{T: at.Add(time.Duration(i) * time.Hour), V: float64(i + 1), Href: h})
		boxes = append(boxes, chart.Box{Label: h, Min: 1, Q1: 2, Median: 3, Q3: 4, Max: 5, Href: h})
		bars = append(bars, chart.Bar{Label: h, Value: 1, Href: h})
	}
	pts = append(pts, chart.Point{T: at.Add(9 * time.Hour), V: 3, Href: "/ok"})
	for _, c := range []component{
		chart.TimeScatter{Series: []chart.Series{{Points: pts}}},
		chart.BoxPlot{Boxes: boxes},
		chart.Bars{Bars: bars},
	} {
		svg := c.SVG()
		p := parseSVG(t, svg)
		if strings.Contains(strings.ToLower(svg), `href="java`) || strings.Contains(svg, `href="data:`) || strings.Contains(svg, `href="vbscript:`) {
			t.Errorf("unsafe link rendered: %s", svg)
		}
		for _, h := range p.hrefs {
			if h != "/ok" {
				t.Errorf("unexpected href %q", h)
			}
		}
	}
}

func TestEmptyAndInvalidData(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	cases := []sample{
		{"scatter nil", chart.TimeScatter{}},
		{"scatter empty series", chart.TimeScatter{Series: []chart.Series{{Name: "a"}}}},
		{"scatter NaN/Inf", chart.TimeScatter{Series: []chart.Series{{Points: []chart.Point{{T: at, V: nan}, {T: at, V: inf}}}}}},
		{"scatter log non-positive", chart.TimeScatter{LogY: true, Series: []chart.Series{{Points: []chart.Point{{T: at, V: 0}, {T: at, V: -1}}}}}},
		{"line nil", chart.Line{}},
		{"line NaN", chart.Line{Series: []chart.LineSeries{{Points: []chart.XY{{X: nan, Y: 1}, {X: 1, Y: inf}}}}}},
		{"box nil", chart.BoxPlot{}},
		{"box NaN", chart.BoxPlot{Boxes: []chart.Box{{Label: "a", Min: nan}}}},
		{"bars nil", chart.Bars{}},
		{"bars NaN", chart.Bars{Bars: []chart.Bar{{Label: "a", Value: nan}}}},
		{"spark nil", chart.Sparkline{}},
		{"spark NaN", chart.Sparkline{Values: []float64{nan, inf, -inf}}},
	}
	for _, s := range cases {
		t.Run(s.name, func(t *testing.T) {
			p := parseSVG(t, s.c.SVG())
			if !strings.Contains(p.text, "No data") || p.classes["rw-empty"] != 1 {
				t.Errorf("no 'No data' placeholder: %q", p.text)
			}
		})
	}
}

func TestSinglePointAndZeroSpan(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	nan := math.NaN()
	cases := []struct {
		name   string
		c      component
		class  string
		points int
	}{
		{"scatter single point", chart.TimeScatter{Series: []chart.Series{{Points: []chart.Point{{T: at, V: 5}}}}}, "rw-point", 1},
		{"scatter same time", chart.TimeScatter{Series: []chart.Series{{Points: []chart.Point{{T: at, V: 5}, {T: at, V: 7}}}}}, "rw-point", 2},
		{"scatter same value log", chart.TimeScatter{LogY: true, Series: []chart.Series{{Points: []chart.Point{{T: at, V: 5}, {T: at.Add(time.Hour), V: 5}, {T: at, V: nan}}}}}, "rw-point", 2},
		{"scatter zero time", chart.TimeScatter{Series: []chart.Series{{Points: []chart.Point{{V: 1}, {T: at, V: 2}}}}}, "rw-point", 2},
		{"line single point", chart.Line{XKind: chart.XTime, Series: []chart.LineSeries{{Points: []chart.XY{{X: 1e9, Y: 3}}}}}, "rw-line", 1},
		{"line flat", chart.Line{XKind: chart.XDuration, Series: []chart.LineSeries{{Points: []chart.XY{{X: 0, Y: 3}, {X: 0, Y: 3}}}}}, "rw-line", 1},
		{"box degenerate", chart.BoxPlot{Boxes: []chart.Box{{Label: "a", Min: 1, Q1: 1, Median: 1, Q3: 1, Max: 1}}}, "rw-box", 1},
		{"bars zero", chart.Bars{Bars: []chart.Bar{{Label: "a", Value: 0}}}, "rw-bar", 1},
		{"bars negative", chart.Bars{Bars: []chart.Bar{{Label: "a", Value: -3}, {Label: "b", Value: 2}}}, "rw-bar", 2},
		{"spark single", chart.Sparkline{Values: []float64{4}, MarkLast: true}, "rw-spark-dot", 1},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			svg := tt.c.SVG()
			p := parseSVG(t, svg)
			if got := p.classes[tt.class]; got != tt.points {
				t.Errorf("%d × %s, want %d", got, tt.class, tt.points)
			}
			if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") || p.classes["rw-empty"] != 0 {
				t.Errorf("bad output:\n%s", svg)
			}
		})
	}
}

func TestRenderHonoursCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var buf bytes.Buffer
	err := samples()[0].c.Render(ctx, &buf)
	if !errors.Is(err, context.Canceled) || buf.Len() != 0 {
		t.Errorf("err = %v, wrote %d bytes", err, buf.Len())
	}
}

func TestDistinctChartsGetDistinctIDs(t *testing.T) {
	a := chart.Sparkline{Values: []float64{1, 2, 3}}.SVG()
	b := chart.Sparkline{Values: []float64{3, 2, 1}}.SVG()
	pa, pb := parseSVG(t, a), parseSVG(t, b)
	if pa.attr("aria-labelledby") == pb.attr("aria-labelledby") {
		t.Errorf("two different charts share id %q", pa.attr("aria-labelledby"))
	}
}

func TestDefaultCSS(t *testing.T) {
	for _, want := range []string{"@media (prefers-color-scheme: dark)", "[data-theme=dark]", "currentColor",
		".rw-axis", ".rw-grid", ".rw-point", ".rw-series-0", ".rw-series-7", ".rw-marker", ".rw-changepoint",
		".rw-outlier", ".rw-box", ".rw-bar", "@media print"} {
		if !strings.Contains(chart.DefaultCSS, want) {
			t.Errorf("DefaultCSS lacks %q", want)
		}
	}
	if strings.Count(chart.DefaultCSS, "{") != strings.Count(chart.DefaultCSS, "}") {
		t.Errorf("DefaultCSS has unbalanced braces")
	}
}

// A prerendered chart writes the bytes its fields draw.
func TestPrerenderedDrawsTheSame(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	c := chart.TimeScatter{Frame: chart.Frame{Title: "t", ID: "p"}, YLabel: "MiB/s",
		Series: []chart.Series{{Name: "full", Points: []chart.Point{{T: t0, V: 1}, {T: t0.Add(time.Hour), V: 3}}}}}
	var want, got bytes.Buffer
	if err := c.Render(context.Background(), &want); err != nil {
		t.Fatal(err)
	}
	p := c.Prerendered()
	if err := p.Render(context.Background(), &got); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() || p.SVG() != want.String() {
		t.Errorf("prerendered %d bytes, drawn %d", got.Len(), want.Len())
	}
	// For a screen and a phone: the same two drawings, the phone's drawn
	// once by Prerendered and not again by each view.
	want.Reset()
	got.Reset()
	if err := c.Responsive().Render(context.Background(), &want); err != nil {
		t.Fatal(err)
	}
	if err := p.Responsive().Render(context.Background(), &got); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() || !strings.Contains(got.String(), `id="p-phone`) {
		t.Errorf("prerendered responsive %d bytes, drawn %d", got.Len(), want.Len())
	}
}
