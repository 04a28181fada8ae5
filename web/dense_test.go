package web_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web"
	"github.com/restorewatch/restorewatch/web/view"
)

// TestDenseSeriesDrawnAsBand: the demo's log-shipping database (thousands
// of log restores) is drawn as a band of its middle 80 % with the median
// per time bucket and the restores beyond it as points, not thinned to
// each pixel column's extremes (which emptied the band around the median
// and made the series look bimodal); its charts share one time range, and
// the page says how many restores it charts of how many (issue 15 item 3).
func TestDenseSeriesDrawnAsBand(t *testing.T) {
	db := demoDB(t)
	series, err := db.ListSeries(t.Context(), store.SeriesFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var dense store.Series
	for _, se := range series {
		if se.N > dense.N {
			dense = se
		}
	}
	if dense.N < 2000 {
		t.Fatalf("the demo's densest series has %d restores; the test needs a dense one", dense.N)
	}
	_, ts := serve(t, web.Config{DB: db})
	u := view.DatabaseKindURL(dense.Instance, dense.Database, string(dense.Kind))
	code, body, _ := get(t, client(t), ts.URL+u)
	if code != http.StatusOK {
		t.Fatalf("GET %s = %d", u, code)
	}
	for _, id := range []string{"db-tput", "db-dur"} {
		svg := body[strings.Index(body, `id="`+id+`-title"`):]
		svg = svg[:strings.Index(svg, "</svg>")]
		if !strings.Contains(svg, "rw-band-range") || !strings.Contains(svg, "rw-band-mid") || !strings.Contains(svg, "middle 80 %") {
			t.Errorf("%s: the dense series is not drawn as a band", id)
		}
		// The band holds the middle 80 %: at most about a fifth of the
		// charted restores (plus sparse buckets and outliers) are points.
		if n := strings.Count(svg, "rw-point "); n > 2000/4 {
			t.Errorf("%s: %d points drawn beyond the band of 2,000 restores", id, n)
		}
	}
	want := "the newest 2,000 of " + view.Int(int64(dense.N)) + " restores charted"
	if !strings.Contains(body, want) {
		t.Errorf("the page does not say %q", want)
	}
	// One time range: the x-axis tick labels of the three charts agree.
	ticks := map[string]bool{}
	for _, id := range []string{"db-tput", "db-dur", "db-size"} {
		svg := body[strings.Index(body, `id="`+id+`-title"`):]
		svg = svg[:strings.Index(svg, "</svg>")]
		var xs []string
		for _, m := range regexp.MustCompile(`<text x="([0-9.]+)" y="[0-9.]+">([A-Z][a-z]{2} [0-9]+)</text>`).FindAllStringSubmatch(svg, -1) {
			xs = append(xs, m[2])
		}
		ticks[strings.Join(xs, ",")] = true
	}
	if len(ticks) != 1 {
		t.Errorf("the charts of one page have different time axes: %v", ticks)
	}
}
