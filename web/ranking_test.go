package web_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/web"
)

// hoursCell reads the "Hours lost / year" cells of a regression table: the
// sixth cell of each body row.
var rowRe = regexp.MustCompile(`(?s)<tr><th scope="row"[^>]*>.*?</tr>`)
var cellRe = regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
var tagRe = regexp.MustCompile(`<[^>]*>`)

func regressionCells(t *testing.T, body string) [][]string {
	t.Helper()
	var out [][]string
	for _, row := range rowRe.FindAllString(body, -1) {
		var cells []string
		for _, m := range cellRe.FindAllStringSubmatch(row, -1) {
			cells = append(cells, strings.TrimSpace(tagRe.ReplaceAllString(m[1], " ")))
		}
		if len(cells) >= 6 && strings.Contains(row, `href="/regressions/`) { // not the knees' table
			out = append(out, cells)
		}
	}
	return out
}

func hours(t *testing.T, cell string) float64 {
	t.Helper()
	cell = strings.ReplaceAll(strings.TrimSuffix(cell, " h"), ",", "")
	if strings.HasSuffix(cell, " min") {
		v, err := strconv.ParseFloat(strings.TrimSuffix(cell, " min"), 64)
		if err != nil {
			t.Fatalf("hours cell %q", cell)
		}
		return v / 60
	}
	v, err := strconv.ParseFloat(cell, 64)
	if err != nil {
		t.Fatalf("hours cell %q", cell)
	}
	return v
}

// TestRegressionsRankedByCost: the overview and /regressions list the
// costliest regression first (hours lost a year), each with a "why" in
// words, and the list states the threshold the analysis was configured
// with, not a hard-coded one (issue 15 item 5, issue 14 item 4).
func TestRegressionsRankedByCost(t *testing.T) {
	db := demoDB(t)
	cfg := analysis.DefaultConfig()
	cfg.Ratio, cfg.MinEach = 0.55, 5
	_, ts := serve(t, web.Config{DB: db, Analysis: analysis.Options{Config: cfg}})
	c := client(t)
	for _, page := range []string{"/regressions", "/"} {
		code, body, _ := get(t, c, ts.URL+page)
		if code != http.StatusOK {
			t.Fatalf("GET %s = %d", page, code)
		}
		rows := regressionCells(t, body)
		if len(rows) < 2 {
			t.Fatalf("%s: %d regression rows; the demo has five", page, len(rows))
		}
		for i, r := range rows {
			if i > 0 && hours(t, r[4]) > hours(t, rows[i-1][4]) {
				t.Errorf("%s: row %d costs %s a year, more than the row above (%s)", page, i+1, r[4], rows[i-1][4])
			}
			if why := r[5]; why == "" || strings.Contains(why, "_") {
				t.Errorf("%s: row %d's why is %q (want words)", page, i+1, why)
			}
		}
		if page == "/" {
			// Every count links to what it counts (issue 15 item 5).
			wants := []string{`<a href="#regressions">`, `<a href="#rto">`}
			if !strings.Contains(body, "none without a measured throughput") {
				// Since restore plans project every database with a backup
				// history, the demo's are all measured; a count of the
				// unmeasured, when there is one, links to their names.
				wants = append(wants, `<a href="#rto-unmeasured">`, `id="rto-unmeasured"`)
			}
			for _, want := range wants {
				if !strings.Contains(body, want) {
					t.Errorf("the overview lacks the link %s", want)
				}
			}
		}
		if page == "/regressions" && (!strings.Contains(body, "at least 1.8× slower") || !strings.Contains(body, "at least 5 restores") || strings.Contains(body, "1.5× slower")) {
			t.Errorf("/regressions does not state the configured threshold (0.55×, 5 restores)")
		}
	}
	regs, err := db.ListRegressions(t.Context(), store.RegressionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := get(t, c, ts.URL+"/regressions/"+strconv.FormatInt(regs[0].ID, 10))
	if !strings.Contains(body, "at least 1.8× slower") || strings.Contains(body, "1.5× slower") {
		t.Error("the evidence page does not state the configured threshold")
	}
}
