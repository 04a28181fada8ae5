package web_test

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/storetest"
	"github.com/restorewatch/restorewatch/web"
)

// TestCollectorPaged: a collector of hundreds of instances is listed 200
// a page, in name order, each instance once; the summary and the
// unprotected-login banner count every instance on every page, and the
// banner names ten of them, not all. Before, one page held every instance
// and the banner named them all.
func TestCollectorPaged(t *testing.T) {
	db := storetest.Open(t)
	const n = 450
	var names []string
	for i := range n {
		name := fmt.Sprintf("SQL-%04d", i)
		status, errs, notes := store.RunOK, map[string]string(nil), []string(nil)
		if i%10 == 3 {
			status, errs = store.RunFailed, map[string]string{"login": "login failed"}
		}
		if i%30 == 7 {
			notes = []string{mssql.InsecureNote + `encrypt = "false"`}
		}
		addRun(t, db, name, status, liveNow.Add(-4*time.Minute), liveNow.Add(-3*time.Minute), nil, errs, notes)
		names = append(names, name)
	}
	addRun(t, db, hostileInstance, store.RunOK, liveNow.Add(-4*time.Minute), liveNow.Add(-3*time.Minute), nil, nil, nil)
	names = append([]string{hostileInstance}, names...) // '<' sorts before 'S'
	_, ts := serve(t, web.Config{DB: db, Now: func() time.Time { return liveNow }})
	c := client(t)
	row := regexp.MustCompile(`<a class="small" href="/collector\?instance=([^"]+)">recent runs</a>`)
	var got []string
	for page := 1; page <= 4; page++ {
		code, body, _ := get(t, c, ts.URL+fmt.Sprintf("/collector?page=%d", page))
		if code != http.StatusOK {
			t.Fatalf("page %d: %d", page, code)
		}
		var rows []string
		for _, m := range row.FindAllStringSubmatch(body, -1) {
			rows = append(rows, m[1])
		}
		wantRows := []int{200, 200, 51, 0}[page-1]
		if len(rows) != wantRows {
			t.Errorf("page %d lists %d instances, want %d", page, len(rows), wantRows)
		}
		for _, r := range rows {
			got = append(got, strings.NewReplacer("%3C", "<", "%3E", ">", "%28", "(", "%29", ")", "%2F", "/").Replace(r))
		}
		for _, want := range []string{"451 instances · 406 ok · 45 failing",
			"15 instances log in without protection (SQL-0007, SQL-0037, SQL-0067, SQL-0097, SQL-0127, SQL-0157, SQL-0187, SQL-0217, SQL-0247, SQL-0277 and 5 more)"} {
			if !strings.Contains(body, want) {
				t.Errorf("page %d lacks %q", page, want)
			}
		}
		if strings.Contains(body, "SQL-0307,") {
			t.Errorf("page %d's banner names more than ten instances", page)
		}
		if (page < 3) != strings.Contains(body, fmt.Sprintf(`href="/collector?page=%d" rel="next"`, page+1)) {
			t.Errorf("page %d: next link shown %v", page, page >= 3)
		}
		if page == 4 && (!strings.Contains(body, "No instances on this page (451 in all)") || !strings.Contains(body, `href="/collector?page=3" rel="prev"`)) {
			t.Error("a page past the end does not say so or lead back to the last")
		}
		if strings.Contains(body, hostileInstance) {
			t.Errorf("page %d shows a hostile name unescaped", page)
		}
	}
	if !slices.Equal(got, names) {
		t.Errorf("the pages list %d instances, want the %d in name order once each", len(got), len(names))
	}
	if code, body, _ := get(t, c, ts.URL+"/collector?page=9223372036854775807"); code != http.StatusOK || !strings.Contains(body, "No instances on this page") {
		t.Errorf("page=MaxInt64: %d", code)
	}
	// One instance's history is not paged (its 50 latest runs).
	if _, body, _ := get(t, c, ts.URL+"/collector?instance=SQL-0003"); strings.Contains(body, `rel="next"`) || !strings.Contains(body, "1 run · 0 ok · 1 failing") {
		t.Error("one instance's runs are paged or miscounted")
	}
}

// TestListsPastAnyOffset: a page number whose offset would overflow is a
// page past the end of the instance list, not a 500 (it was a panic).
func TestListsPastAnyOffset(t *testing.T) {
	_, ts := serve(t, web.Config{DB: demoDB(t)})
	code, body, _ := get(t, client(t), ts.URL+"/instances?page=9223372036854775807")
	if code != http.StatusOK || !strings.Contains(body, "No instance matches.") || !strings.Contains(body, `rel="prev"`) {
		t.Errorf("/instances?page=MaxInt64: %d", code)
	}
}
