package chart_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/web/chart"
)

// A throughput scatter for two servers with a build change. In a templ
// template the value is used directly: @chart.TimeScatter{...}; the page
// includes chart.DefaultCSS once.
func ExampleTimeScatter() {
	day := func(d int) time.Time { return time.Date(2026, 3, d, 2, 0, 0, 0, time.UTC) }
	c := chart.TimeScatter{
		Frame:  chart.Frame{Title: "Restore throughput", ID: "tput"},
		YLabel: "MiB/s",
		Series: []chart.Series{
			{Name: "SQL01", Points: []chart.Point{
				{T: day(1), V: 210, Href: "/restores/1"},
				{T: day(2), V: 205, Href: "/restores/2"},
				{T: day(3), V: 120, Href: "/restores/3", Outlier: true},
			}},
			{Name: "SQL02", Points: []chart.Point{{T: day(2), V: 340}}},
		},
		Markers: []chart.Marker{{T: day(2).Add(12 * time.Hour), Label: "CU16"}},
	}
	svg := c.SVG()
	fmt.Println(svg[:strings.Index(svg, ">")+1])
	fmt.Println("points:", strings.Count(svg, "rw-point "), "links:", strings.Count(svg, "<a href="))
	fmt.Println(chart.FormatDuration(93784), "|", chart.FormatMiBps(1234.5))
	// Output:
	// <svg xmlns="http://www.w3.org/2000/svg" class="rw-chart rw-timescatter" viewBox="0 0 800 360" width="100%" role="img" aria-labelledby="tput-title" aria-describedby="tput-desc" font-family="system-ui, sans-serif" font-size="12">
	// points: 4 links: 3
	// 1 d 2 h | 1,235 MiB/s
}
