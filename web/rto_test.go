package web_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/human"
	"github.com/restorewatch/restorewatch/web"
)

// TestOverviewRTOFromThePlan: a database with a backup history is projected
// by its restore plan — the chain the plan page shows, at the speeds it
// shows — not by the size of its last full over its speed.
func TestOverviewRTOFromThePlan(t *testing.T) {
	_, ts := serve(t, web.Config{DB: demoDB(t)})
	resp, err := http.Get(ts.URL + "/api/plan?instance=DWH-SQL02&database=DW_Sales")
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		TotalS float64 `json:"total_s"`
	}
	err = json.NewDecoder(resp.Body).Decode(&p)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || p.TotalS <= 0 {
		t.Fatalf("plan: %d %v %+v", resp.StatusCode, err, p)
	}
	_, body, _ := get(t, client(t), ts.URL+"/")
	i := strings.Index(body, `id="rto"`)
	if i < 0 {
		t.Fatal("no RTO section")
	}
	sec := body[i:]
	row := sec[strings.Index(sec, "DW_Sales"):]
	row = row[:strings.Index(row, "</tr>")]
	if !strings.Contains(row, "restore plan") || !strings.Contains(row, human.Duration(p.TotalS)) {
		t.Errorf("DW_Sales's row does not project its plan's %s:\n%s", human.Duration(p.TotalS), row)
	}
}

// Every database whose restore plan is over its RTO target is on the
// overview (issue 38): a database with only a backup history
// (RPT-SQL01\REPORTING's Warehouse) or only log restores (LS-SQL03's
// Orders) too, projected by its plan; before, only databases with a
// series of full restores were projected.
func TestOverviewListsEveryDatabaseOverItsRTO(t *testing.T) {
	db := demoDB(t)
	_, ts := serve(t, web.Config{DB: db})
	c := client(t)
	_, body, _ := get(t, c, ts.URL+"/")
	i := strings.Index(body, `id="rto"`)
	if i < 0 {
		t.Fatal("no RTO section")
	}
	sec := body[i:]
	if j := strings.Index(sec, "</section>"); j > 0 {
		sec = sec[:j]
	}
	// Every database the warehouse knows: those restored (any kind) and
	// the one the demo knows only by its backups.
	series, err := db.ListSeries(t.Context(), store.SeriesFilter{})
	if err != nil {
		t.Fatal(err)
	}
	type cand struct{ Instance, Database string }
	cs := []cand{{`RPT-SQL01\REPORTING`, "Warehouse"}}
	for _, s := range series {
		if !slices.Contains(cs, cand{s.Instance, s.Database}) && s.Instance != hostileInstance {
			cs = append(cs, cand{s.Instance, s.Database})
		}
	}
	over := 0
	for _, cand := range cs {
		code, p := apiPlan(t, c, ts.URL, cand.Instance, cand.Database, "")
		if code != http.StatusOK || !p.OverRTO || p.Unestimated > 0 {
			continue
		}
		over++
		if !strings.Contains(sec, ">"+cand.Database+"<") || !strings.Contains(sec, human.Duration(p.TotalS)) {
			t.Errorf("%s on %s: its plan takes %s, over its target, but the overview's RTO list does not say so",
				cand.Database, cand.Instance, human.Duration(p.TotalS))
		}
	}
	if over < 2 {
		t.Errorf("%d databases over their RTO by their plans; the demo has DW_Sales and Warehouse at least", over)
	}
}
