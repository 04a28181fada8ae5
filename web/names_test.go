package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/web"
)

// TestRestoreFiltersMatchNames: the restores list matches an instance and a
// database by case and prefix, as the command line does; a name that
// matches nothing says so with the closest names; from after to is a clear
// 400 (issue 15 item 11).
func TestRestoreFiltersMatchNames(t *testing.T) {
	db := demoDB(t)
	_, ts := serve(t, web.Config{DB: db})
	c := client(t)
	list := func(q url.Values) (int, string) {
		code, body, _ := get(t, c, ts.URL+"/restores?"+q.Encode())
		return code, body
	}
	_, exact := list(url.Values{"instance": {`RPT-SQL01\REPORTING`}, "database": {"Billing"}})
	for _, q := range []url.Values{
		{"instance": {`rpt-sql01\reporting`}, "database": {"billing"}},
		{"instance": {"rpt-sql01"}, "database": {"Bill"}},
	} {
		code, body := list(q)
		if code != http.StatusOK || strings.Contains(body, `id="no-match"`) || !strings.Contains(body, `RPT-SQL01\REPORTING`) {
			t.Errorf("%v: %d, no-match %v", q, code, strings.Contains(body, `id="no-match"`))
		}
		if rows, want := strings.Count(body, `href="/restores/`), strings.Count(exact, `href="/restores/`); rows != want || rows == 0 {
			t.Errorf("%v lists %d restores; the exact names list %d", q, rows, want)
		}
	}
	code, body := list(url.Values{"instance": {"NOPE"}})
	if code != http.StatusOK || !strings.Contains(body, `id="no-match"`) || !strings.Contains(body, "No instance NOPE; ") {
		t.Errorf("an unknown instance: %d, no clear no-match notice", code)
	}
	code, body = list(url.Values{"instance": {"RPT-SQL01"}, "database": {"Bilingual"}})
	if !strings.Contains(body, `No database Bilingual on RPT-SQL01\REPORTING; databases: Billing`) {
		t.Errorf("an unknown database: %d, no suggestion of Billing", code)
	}
	code, body = list(url.Values{"from": {"2025-06-01"}, "to": {"2025-05-01"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "from 2025-06-01 is after to 2025-05-01") {
		t.Errorf("from after to: %d, want a clear 400", code)
	}
}
