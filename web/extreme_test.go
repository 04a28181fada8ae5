package web_test

import (
	"database/sql"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/store/sqlite"
	"github.com/restorewatch/restorewatch/store/storetest"
	"github.com/restorewatch/restorewatch/web"
)

// timeColumn names the warehouse's time columns (UTC or local ms).
var timeColumn = regexp.MustCompile(`(_at|_local|_utc|^started$|^finished$|^first_seen$|^last_seen$|^stop_at_local$|^day$)$`)

// extremes are stored values no door lets in any more (issue 28 item 2),
// but a warehouse written by an older version, a restored backup or a
// hand edit may hold: the ends of int64, the years 10000 and 0, and 0.
var extremes = []int64{math.MaxInt64, math.MinInt64, 253402300800000, -62167219200001, 0, -1}

// Every page and API answers without a server error whatever the stored
// times: the demo warehouse with extreme values written straight into
// every time column of a few rows of every table, then every route and
// every link the pages lead to (up to a bound) is fetched.
func TestEveryRouteSurvivesExtremeStoredValues(t *testing.T) {
	storetest.SQLiteOnly(t, "writes the extremes through SQLite's own catalogue (sqlite_master, pragma_table_info) into the file")
	db := copyDemo(t).(*sqlite.DB)
	raw, err := sql.Open("sqlite", "file:"+db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	tables := []string{}
	rows, err := raw.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'schema_migration'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	written := 0
	for _, tb := range tables {
		cols, err := raw.Query(`SELECT name, type FROM pragma_table_info(?)`, tb)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for cols.Next() {
			var n, typ string
			cols.Scan(&n, &typ)
			if strings.EqualFold(typ, "INTEGER") && timeColumn.MatchString(n) {
				names = append(names, n)
			}
		}
		cols.Close()
		for _, col := range names {
			for i, v := range extremes {
				// Row i of the table gets extreme i; a constraint may refuse
				// one, the others go in.
				res, err := raw.Exec(fmt.Sprintf(`UPDATE %q SET %q = ? WHERE rowid = (SELECT rowid FROM %q ORDER BY rowid LIMIT 1 OFFSET ?)`, tb, col, tb), v, i)
				if err == nil {
					n, _ := res.RowsAffected()
					written += int(n)
				}
			}
		}
	}
	if written < 100 {
		t.Fatalf("only %d extreme values written", written)
	}
	_, ts := serve(t, web.Config{DB: db})
	c := client(t)
	seen := map[string]bool{}
	queue := []string{"/", "/restores", "/restores.csv", "/restores?sort=duration", "/instances", "/regressions", "/builds", "/compare",
		"/live", "/collector", "/import", "/api/restores", "/api/regressions", "/api/instances", "/api/builds", "/healthz", "/metrics",
		"/reports/builds"}
	href := regexp.MustCompile(`href="(/[^"#]*)"`)
	for len(queue) > 0 && len(seen) < 300 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] || strings.HasPrefix(p, "/static/") || strings.HasPrefix(p, "/theme") {
			continue
		}
		seen[p] = true
		code, body, _ := get(t, c, ts.URL+p)
		if code >= 500 {
			t.Errorf("GET %s: %d", p, code)
		}
		for _, m := range href.FindAllStringSubmatch(body, -1) {
			u := strings.ReplaceAll(m[1], "&amp;", "&")
			if _, err := url.Parse(u); err == nil && !seen[u] {
				queue = append(queue, u)
			}
		}
	}
	if len(seen) < 50 {
		t.Errorf("only %d pages walked", len(seen))
	}
	t.Logf("%d pages walked, %d extreme values stored", len(seen), written)
}
