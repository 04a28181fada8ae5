package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

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
