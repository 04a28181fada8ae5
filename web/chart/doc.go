// Package chart renders the dashboard's charts as server-side SVG using only
// the standard library: no JavaScript, so charts work in print, in e-mail
// snapshots and with scripting disabled.
//
// Every chart type is a plain struct with value-receiver methods
// Render(ctx, w) and SVG(). Render has the signature of templ.Component, so a
// chart value can be used directly in a templ template (@chart.Bars{...})
// without this package importing templ.
//
// Design rules that every chart follows, and why:
//
//   - All text that comes from data (database names, build labels, URLs,
//     tooltips) is XML-escaped by one small builder; chart code never writes
//     data with string concatenation, so escaping cannot be forgotten.
//   - Links go through SafeURL: relative URLs and http(s) only, because a
//     database name or tag could smuggle a javascript: URL.
//   - Colours come from CSS classes (see DefaultCSS) and currentColor, so the
//     page's light/dark theme applies; presentation attributes give a readable
//     fallback when no stylesheet is present (downloaded SVG, print preview).
//     Series also differ by marker shape so they survive grey-scale printing
//     and colour-blindness.
//   - The root element is <svg role="img" aria-labelledby aria-describedby>
//     with <title> and a generated <desc> summary, a viewBox and width 100%,
//     so it scales from a laptop to a projector.
//   - Output is deterministic (same input, same bytes) so pages can be cached
//     and tests can compare output; coordinates use one decimal.
//   - Empty input renders a "No data" chart; NaN and ±Inf values are skipped;
//     nothing panics on odd input (there is a fuzz test for that).
package chart
