package web_test

import (
	"database/sql"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx", for the raw writes on PostgreSQL
	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
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
	var db warehouse
	var written int
	if storetest.OnPostgres() {
		demoOnPostgres(t)
		u := pgtest.CopyOf(t, pgDemo)
		db = openPostgres(t, u)
		written = writeExtremesPostgres(t, u)
	} else {
		sdb := copyDemo(t).(*sqlite.DB)
		db = sdb
		written = writeExtremesSQLite(t, sdb.Path())
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

// writeExtremesSQLite writes extreme i into every time column of row i of
// every table of the SQLite warehouse at path (a constraint may refuse one,
// the others go in), and says how many values went in.
func writeExtremesSQLite(t *testing.T, path string) int {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	tables := rawList(t, raw, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'schema_migration'`)
	written := 0
	for _, tb := range tables {
		for _, col := range rawTimeColumns(t, raw, `SELECT name FROM pragma_table_info(?) WHERE type = 'INTEGER' COLLATE NOCASE`, tb) {
			for i, v := range extremes {
				res, err := raw.Exec(fmt.Sprintf(`UPDATE %q SET %q = ? WHERE rowid = (SELECT rowid FROM %q ORDER BY rowid LIMIT 1 OFFSET ?)`, tb, col, tb), v, i)
				if err == nil {
					n, _ := res.RowsAffected()
					written += int(n)
				}
			}
		}
	}
	return written
}

// writeExtremesPostgres is writeExtremesSQLite on the PostgreSQL warehouse
// at u: every table (a partitioned one through its parent, whichever
// month's partition holds the row), every BIGINT time column.
func writeExtremesPostgres(t *testing.T, u string) int {
	t.Helper()
	raw, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	tables := rawList(t, raw, `SELECT c.relname FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relname <> 'schema_migration'
		ORDER BY 1`)
	written := 0
	for _, tb := range tables {
		for _, col := range rawTimeColumns(t, raw, `SELECT column_name FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = $1 AND data_type = 'bigint' ORDER BY ordinal_position`, tb) {
			for i, v := range extremes {
				res, err := raw.Exec(fmt.Sprintf(`UPDATE %q SET %q = $1 WHERE (tableoid, ctid) = (SELECT tableoid, ctid FROM %q
					ORDER BY tableoid, ctid LIMIT 1 OFFSET $2)`, tb, col, tb), v, i)
				if err == nil {
					n, _ := res.RowsAffected()
					written += int(n)
				}
			}
		}
	}
	return written
}

// rawList is the one text column q's rows hold.
func rawList(t *testing.T, raw *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := raw.Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// rawTimeColumns lists table's integer columns (q, given table) that hold
// times.
func rawTimeColumns(t *testing.T, raw *sql.DB, q, table string) []string {
	t.Helper()
	var out []string
	for _, c := range rawList(t, raw, q, table) {
		if timeColumn.MatchString(c) {
			out = append(out, c)
		}
	}
	return out
}
