package web_test

import (
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/demo"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web"
	"github.com/restorewatch/restorewatch/web/view"
)

// TestDemoShowsLiveFeatures: the demo fills /live, /collector and the
// restore pages (they were empty): the 16 TB restore of seed 000 is still
// running, slowed after 55 %; the newest Billing restore of the reporting
// server shows its curve and knee on its page; the Archive restore crawls
// after 92 % (seed 002); one instance's collector login lacks a permission
// (issue 15 item 10).
var kneeRe = regexp.MustCompile(`slowed after ([0-9.]+) %[^<]*`)

func TestDemoShowsLiveFeatures(t *testing.T) {
	db := demoDB(t)
	_, ts := serve(t, web.Config{DB: db, Now: func() time.Time { return demo.DefaultNow }})
	c := client(t)
	code, body, _ := get(t, c, ts.URL+"/live")
	if code != http.StatusOK {
		t.Fatalf("GET /live = %d", code)
	}
	for _, want := range []string{"In flight (1)", "Warehouse", "slowed after 55 %", `class="rw-knee"`} {
		if !strings.Contains(body, want) {
			t.Errorf("/live lacks %q", want)
		}
	}
	_, body, _ = get(t, c, ts.URL+"/collector")
	for _, want := range []string{"The user does not have permission to perform this action. (error 297)", "permissions.sql"} {
		if !strings.Contains(body, want) {
			t.Errorf("/collector lacks %q", want)
		}
	}
	for _, tc := range []struct {
		prefix, database string
		knee             float64
	}{
		{"RPT-SQL", "Billing", 55},
		{"ARCH-SQL", "Archive", 92},
	} {
		insts, err := db.ListInstances(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		name := ""
		for _, in := range insts {
			if strings.HasPrefix(in.Name, tc.prefix) && name == "" {
				name = in.Name
			}
		}
		rs, _, err := db.ListRestores(t.Context(), store.RestoreFilter{Instance: name, Database: tc.database, Kind: store.KindFull, Limit: 1})
		if err != nil || len(rs) == 0 {
			t.Fatalf("%s on %s: %v", tc.database, name, err)
		}
		u := view.RestoreURL(rs[0].ID)
		_, body, _ := get(t, c, ts.URL+u)
		m := kneeRe.FindStringSubmatch(body)
		if !strings.Contains(body, "Progress while it ran") || !strings.Contains(body, `class="rw-knee"`) || m == nil {
			t.Errorf("%s (%s on %s) shows no progress curve with its knee", u, tc.database, name)
			continue
		}
		// Sampled every 1/120 of the restore: the knee is seen within a
		// sample of where it is.
		if at, _ := strconv.ParseFloat(m[1], 64); math.Abs(at-tc.knee) > 2 {
			t.Errorf("%s: %s, want the knee near %.0f %%", u, m[0], tc.knee)
		}
	}
}
