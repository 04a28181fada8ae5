package main

import (
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
)

// Two serve replicas on one PostgreSQL database take pushes from two
// collectors at once, each collector pushing through its own replica (issue
// 41's "done means"): after two passes the warehouse holds exactly what a
// direct collection of the whole fleet holds, each pass's run once, and
// both replicas answer every page of the dashboard alike, byte for byte,
// whichever replica a collector wrote through.
func TestTwoReplicasTakePushesFromTwoCollectors(t *testing.T) {
	ranInTheDefaultPass(t, "its replicas share a PostgreSQL warehouse whatever the engine")
	u := pgtest.URL(t)
	t.Setenv(pushPassEnv, pushPass)
	dir := t.TempDir()
	base := time.Date(2026, 3, 2, 6, 0, 0, 0, time.UTC)

	fleet, ports := tdsFleet(t, dir, base, "SQL-A1", "SQL-A2", "SQL-B1", "SQL-B2")
	tdsCAFile := filepath.Join(dir, "tds-ca.pem")
	for _, in := range fleet {
		in.AddBackups(backupSet(1, "D", base.Add(-30*time.Hour)), backupSet(2, "L", base.Add(-29*time.Hour)))
	}
	zoneA := collectorConfig(t, dir, "zone-a.toml", tdsCAFile, ports, "SQL-A1", "SQL-A2")
	zoneB := collectorConfig(t, dir, "zone-b.toml", tdsCAFile, ports, "SQL-B1", "SQL-B2")
	all := collectorConfig(t, dir, "all.toml", tdsCAFile, ports, "SQL-A1", "SQL-A2", "SQL-B1", "SQL-B2")
	tokA := writeFile(t, dir, "a.token", []byte(createToken(t, u, "zone-a")+"\n"))
	tokB := writeFile(t, dir, "b.token", []byte(createToken(t, u, "zone-b")+"\n"))
	caFile, certFile, keyFile := serverCA(t, dir)
	addrA := serveWarehouse(t, u, "--tls-cert", certFile, "--tls-key", keyFile)
	addrB := serveWarehouse(t, u, "--tls-cert", certFile, "--tls-key", keyFile)
	client := tlsClient(t, caFile)

	direct := filepath.Join(dir, "direct.db")
	pass := func(n int) {
		t.Helper()
		type result struct {
			zone   string
			stderr string
			code   int
		}
		done := make(chan result, 2)
		go func() {
			stderr, code := pushOnce(t, zoneA, filepath.Join(dir, "a-local.db"), "https://"+addrA, tokA, caFile, "2m")
			done <- result{"A", stderr, code}
		}()
		go func() {
			stderr, code := pushOnce(t, zoneB, filepath.Join(dir, "b-local.db"), "https://"+addrB, tokB, caFile, "2m")
			done <- result{"B", stderr, code}
		}()
		for range 2 {
			if r := <-done; r.code != 0 {
				t.Fatalf("pass %d, zone %s: exit %d: %s", n, r.zone, r.code, r.stderr)
			}
		}
		if _, stderr, code := runMain(t, "collect", "--db", direct, "--config", all, "--once"); code != 0 {
			t.Fatalf("pass %d, direct collect: exit %d: %s", n, code, stderr)
		}
	}

	// Every page alike on both replicas, each having written half; compared
	// after each pass, so that the second comparison also shows each replica
	// following the other's writes past the pages it had already served.
	alike := func(n int) {
		t.Helper()
		pages := []string{"/", "/restores", "/restores?sort=longest", "/instances", "/instances/SQL-A1",
			"/instances/SQL-B2", "/instances/SQL-B1/databases/Sales", "/regressions", "/builds", "/live",
			"/collector", "/alerts", "/api/restores?limit=1000", "/api/regressions", "/api/instances", "/api/builds"}
		ids := restoreLinks(t, client, addrA)
		if len(ids) == 0 {
			t.Fatal("/restores on replica A links to no restore")
		}
		pages = append(pages, "/restores/"+ids[0], "/restores/"+ids[len(ids)-1])
		for _, path := range pages {
			a, b := sameOnBoth(getPage(t, client, addrA, path)), sameOnBoth(getPage(t, client, addrB, path))
			if a != b {
				t.Errorf("after pass %d, %s differs between the replicas:\n%s", n, path, diffLines(splitLines(a), splitLines(b)))
			}
		}
	}

	pass(1)
	alike(1)
	for _, in := range fleet {
		script(in, base.Add(time.Hour), 3)
		in.AddBackups(backupSet(3, "L", base.Add(2*time.Hour)))
		in.SetClock(base.Add(6 * time.Hour))
	}
	pass(2)

	want, got := restoresJSON(t, direct), restoresJSON(t, u)
	if len(want) != 4*2*(4+3) {
		t.Fatalf("the direct warehouse has %d restores, want %d", len(want), 4*2*7)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the replicas' warehouse differs from a direct collection:\n%s", diffLines(want, got))
	}
	runs := `SELECT string_agg(k, ',' ORDER BY k) FROM (SELECT instance || ':' || count(*) || ':' || min(status) AS k
		FROM collector_run GROUP BY instance) r`
	if got := pgScalar(t, u, runs); got != "SQL-A1:2:ok,SQL-A2:2:ok,SQL-B1:2:ok,SQL-B2:2:ok" {
		t.Errorf("run records by instance: %s, want each instance's two passes once", got)
	}
	alike(2)

}

// perResponse matches what a page rightly varies from one response to the
// next: a form's CSRF token.
var perResponse = regexp.MustCompile(`name="_csrf" value="[^"]*"`)

func sameOnBoth(page string) string {
	return perResponse.ReplaceAllString(page, `name="_csrf" value=""`)
}

func splitLines(s string) []string { return strings.Split(s, "\n") }

// pgScalar answers a query of one text value from the PostgreSQL database at u.
func pgScalar(t *testing.T, u, q string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var s string
	if err := conn.QueryRow(ctx, q).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s
}
