package main

import (
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/postgres"
	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
	"github.com/restorewatch/restorewatch/web/walk"
)

// TestWalkerAfterMonthsDropOnPostgres (issue 41 item 4): the demo in a
// PostgreSQL warehouse that ran through its months (each month's partitions
// made as it began), pruned so that whole months drop, still states every
// figure alike on every page and the CLI.
func TestWalkerAfterMonthsDropOnPostgres(t *testing.T) {
	u := pgtest.URL(t)
	db, err := postgres.Open(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now()
	for at := now.AddDate(-2, 0, 0); at.Before(now); at = at.AddDate(0, 1, 0) {
		if err := db.EnsureMonths(t.Context(), at); err != nil {
			t.Fatal(err)
		}
	}
	if _, stderr, code := runMain(t, "demo", "--db", u, "--dir", t.TempDir()); code != 0 {
		t.Fatalf("demo on PostgreSQL: %s", stderr)
	}
	st, err := db.Prune(t.Context(), store.Retention{Restores: 45 * 24 * time.Hour}, now)
	if err != nil {
		t.Fatal(err)
	}
	if st.Months == 0 || st.RolledUp == 0 {
		t.Fatalf("prune %+v: want whole months dropped", st)
	}
	t.Logf("prune: %+v", st)
	res, err := walk.Walk(t.Context(), walkSource(t, u, false))
	if err != nil {
		t.Fatal(err)
	}
	report(t, res)
	if res.Entities < 8 || res.Checks < 200 {
		t.Errorf("the walk compared %d figures of %d entities: too few to prove anything", res.Checks, res.Entities)
	}
}
