package web_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/web"
	"github.com/restorewatch/restorewatch/web/view"
)

// TestCompareLikeWithLike: /compare leads with the series restored on both
// sides, each against itself, summarised per restore kind (full restores
// first, so hourly log restores cannot drown them), and warns that pooled
// MiB/s mix databases; the builds form opens on the fleet's most recent
// upgrade, not one build against itself (issue 15 item 6).
func TestCompareLikeWithLike(t *testing.T) {
	db := demoDB(t)
	_, ts := serve(t, web.Config{DB: db})
	c := client(t)
	_, body, _ := get(t, c, ts.URL+"/builds")
	sel := regexp.MustCompile(`<option value="build:([0-9.]+)" selected>`).FindAllStringSubmatch(body, -1)
	if len(sel) != 2 || sel[0][1] == sel[1][1] {
		t.Fatalf("the builds form opens on %v, want two different builds", sel)
	}
	if sel[0][1] != "15.0.4236.7" || sel[1][1] != "15.0.4355.3" {
		t.Errorf("the builds form opens on %s → %s, want the demo's latest upgrade 15.0.4236.7 → 15.0.4355.3", sel[0][1], sel[1][1])
	}
	_, body, _ = get(t, c, ts.URL+view.CompareURL("period:2025-01-01..2025-04-01", "period:2025-04-01..2025-06-30"))
	m, p := strings.Index(body, `id="matched"`), strings.Index(body, "Pooled over every restore")
	if m < 0 || p < 0 || m > p {
		t.Fatalf("the period comparison does not lead with the matched comparison")
	}
	kinds := regexp.MustCompile(`(?s)<table id="matched-kinds">.*?</table>`).FindString(body)
	full, log := strings.Index(kinds, `<th scope="row">full</th>`), strings.Index(kinds, `<th scope="row">log</th>`)
	if full < 0 || log < 0 || full > log {
		t.Errorf("the matched comparison is not per restore kind, full first: %.600s", kinds)
	}
	fullRow := regexp.MustCompile(`(?s)<th scope="row">full</th>.*?</tr>`).FindString(kinds)
	if !regexp.MustCompile(`bad-text">▼ [1-9][0-9]* of [0-9]+<`).MatchString(fullRow) {
		t.Errorf("the period comparison hides the full-restore regressions: %s", fullRow)
	}
	if !strings.Contains(body, "Pooled figures mix different databases") {
		t.Error("pooled MiB/s are shown without the warning")
	}
}
