package chart

import "strconv"

// seriesCount is how many series get their own colour and marker shape;
// series beyond it reuse them cyclically (rw-series-0..7).
const seriesCount = 8

// lightPalette is the Okabe–Ito colour-blind-safe palette, reordered so the
// first two series (the common before/after case) are blue and vermillion,
// with yellow darkened and black replaced by grey to read on white. It is
// used as presentation-attribute fallback when no stylesheet is loaded and
// must match the light values in DefaultCSS.
var lightPalette = [seriesCount]string{
	"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#8c7a00", "#555555",
}

// seriesClass returns the CSS class of series i.
func seriesClass(i int) string {
	if i < 0 {
		i = -i
	}
	return "rw-series-" + strconv.Itoa(i%seriesCount)
}

// seriesColor returns the fallback colour of series i.
func seriesColor(i int) string {
	if i < 0 {
		i = -i
	}
	return lightPalette[i%seriesCount]
}

// DefaultCSS styles the charts. Include it once in the page (e.g. in the
// main stylesheet or a <style> element). Text and axes use currentColor, so
// they follow the page's text colour; series colours come from CSS variables
// with a light palette, a dark palette under
// @media (prefers-color-scheme: dark) unless the page pins
// [data-theme=light], and the dark palette whenever an ancestor has
// [data-theme=dark]. Print always uses the light palette because paper is
// white. Colours are Okabe–Ito (colour-blind safe); series also differ by
// marker shape.
const DefaultCSS = `/* restorewatch charts */
.rw-chart {
  --rw-s0: #0072b2; --rw-s1: #d55e00; --rw-s2: #009e73; --rw-s3: #cc79a7;
  --rw-s4: #e69f00; --rw-s5: #56b4e9; --rw-s6: #8c7a00; --rw-s7: #555555;
  --rw-cp: #b4005a; --rw-ref: #333333; --rw-box: #0072b2;
  display: block; max-width: 100%; height: auto; overflow: visible;
  font-family: system-ui, -apple-system, "Segoe UI", sans-serif;
}
/* Label classes below use .rw-chart too, to outrank this rule. */
.rw-chart text { fill: currentColor; }
.rw-sparkline { display: inline-block; vertical-align: -0.15em; }
.rw-axis { stroke: currentColor; stroke-opacity: 0.6; }
.rw-axis text, text.rw-axis { stroke: none; fill: currentColor; fill-opacity: 0.85; }
.rw-axis-label { font-weight: 600; }
.rw-grid { stroke: currentColor; stroke-opacity: 0.15; }
.rw-series-0 { fill: var(--rw-s0); stroke: var(--rw-s0); }
.rw-series-1 { fill: var(--rw-s1); stroke: var(--rw-s1); }
.rw-series-2 { fill: var(--rw-s2); stroke: var(--rw-s2); }
.rw-series-3 { fill: var(--rw-s3); stroke: var(--rw-s3); }
.rw-series-4 { fill: var(--rw-s4); stroke: var(--rw-s4); }
.rw-series-5 { fill: var(--rw-s5); stroke: var(--rw-s5); }
.rw-series-6 { fill: var(--rw-s6); stroke: var(--rw-s6); }
.rw-series-7 { fill: var(--rw-s7); stroke: var(--rw-s7); }
.rw-point { fill-opacity: 0.8; stroke-width: 1; }
.rw-point.rw-outlier { fill: none; stroke-width: 2; }
.rw-swatch { stroke-width: 2; }
.rw-line { fill: none; stroke-width: 2; stroke-linejoin: round; }
.rw-spark { fill: none; stroke: currentColor; stroke-width: 1.5; }
.rw-spark-dot { fill: currentColor; stroke: none; }
.rw-marker { stroke: currentColor; stroke-opacity: 0.55; stroke-dasharray: 4 3; }
.rw-marker-label { font-size: 11px; }
.rw-changepoint { stroke: var(--rw-cp); stroke-width: 2; }
.rw-chart .rw-changepoint-glyph, .rw-chart .rw-changepoint-label { fill: var(--rw-cp); stroke: none; }
.rw-changepoint-label { font-size: 11px; font-weight: 600; }
.rw-ref { stroke: var(--rw-ref); stroke-width: 1.5; stroke-dasharray: 6 3; }
.rw-chart .rw-ref-label { fill: var(--rw-ref); font-size: 11px; }
.rw-box { fill: var(--rw-box); fill-opacity: 0.25; stroke: currentColor; }
.rw-whisker { stroke: currentColor; }
.rw-median { stroke: currentColor; stroke-width: 2.5; }
.rw-ci { fill: var(--rw-box); fill-opacity: 0.6; stroke: none; }
.rw-bar { stroke: none; }
.rw-bar-value, .rw-muted { fill-opacity: 0.75; font-size: 11px; }
.rw-knee { fill: none; stroke: var(--rw-cp); stroke-width: 2; }
.rw-empty { fill-opacity: 0.6; }
.rw-chart a:hover .rw-point, .rw-chart a:hover .rw-box, .rw-chart a:hover .rw-bar { fill-opacity: 1; stroke-width: 2.5; }
.rw-chart a:focus { outline: none; }
.rw-chart a:focus-visible .rw-point, .rw-chart a:focus-visible .rw-box,
.rw-chart a:focus-visible .rw-bar { stroke: currentColor; stroke-width: 3; fill-opacity: 1; }
@media (prefers-color-scheme: dark) {
  :root:not([data-theme=light]) .rw-chart {
    --rw-s0: #56b4e9; --rw-s1: #e69f00; --rw-s2: #2bc29a; --rw-s3: #e8a3cb;
    --rw-s4: #f0e442; --rw-s5: #7fa7ff; --rw-s6: #ff8a4c; --rw-s7: #bbbbbb;
    --rw-cp: #ff6fb0; --rw-ref: #dddddd; --rw-box: #56b4e9;
  }
}
[data-theme=dark] .rw-chart {
  --rw-s0: #56b4e9; --rw-s1: #e69f00; --rw-s2: #2bc29a; --rw-s3: #e8a3cb;
  --rw-s4: #f0e442; --rw-s5: #7fa7ff; --rw-s6: #ff8a4c; --rw-s7: #bbbbbb;
  --rw-cp: #ff6fb0; --rw-ref: #dddddd; --rw-box: #56b4e9;
}
/* Repeated class: outranks the dark rules above (specificity 0,3,0). */
@media print {
  .rw-chart.rw-chart.rw-chart.rw-chart {
    --rw-s0: #0072b2; --rw-s1: #d55e00; --rw-s2: #009e73; --rw-s3: #cc79a7;
    --rw-s4: #e69f00; --rw-s5: #56b4e9; --rw-s6: #8c7a00; --rw-s7: #555555;
    --rw-cp: #b4005a; --rw-ref: #333333; --rw-box: #0072b2;
  }
}
`
