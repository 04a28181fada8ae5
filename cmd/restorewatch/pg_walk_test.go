package main

import (
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
	"github.com/restorewatch/restorewatch/web/walk"
)

// TestWalkerOnTheDemoOnPostgres (issue 41): the demo written into a
// PostgreSQL warehouse, served from it, states every regression's, watch's,
// RTO's and knee's figures alike on every page and the CLI, as on SQLite
// (TestWalkerOnTheDemo; the printed report is left to that one).
func TestWalkerOnTheDemoOnPostgres(t *testing.T) {
	ranInTheDefaultPass(t, "TestWalkerOnTheDemo walks the demo on PostgreSQL in this pass, the printed report too")
	u := pgtest.URL(t)
	start := time.Now()
	if _, stderr, code := runMain(t, "demo", "--db", u, "--dir", t.TempDir()); code != 0 {
		t.Fatalf("demo on PostgreSQL: %s", stderr)
	}
	demoTook := time.Since(start)
	res, err := walk.Walk(t.Context(), walkSource(t, u, false))
	if err != nil {
		t.Fatal(err)
	}
	report(t, res)
	if res.Entities < 8 || res.Checks < 200 {
		t.Errorf("the walk compared %d figures of %d entities: too few to prove anything", res.Checks, res.Entities)
	}
	t.Logf("demo %s, walk %s", demoTook.Round(time.Millisecond), (time.Since(start) - demoTook).Round(time.Millisecond))
}
