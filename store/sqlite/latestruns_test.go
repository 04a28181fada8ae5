package sqlite

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// TestLatestRunsEqualsGrouping: stepping from instance to instance through
// the index finds what grouping every run found, the latest run of each
// instance (names compared without case), in name order, on a random mix
// of instances, runs and case variants; and nothing on an empty table.
func TestLatestRunsEqualsGrouping(t *testing.T) {
	db := openTestDB(t)
	ctx := t.Context()
	if runs, err := db.LatestRuns(ctx); err != nil || len(runs) != 0 {
		t.Fatalf("no runs yet: %d runs, %v", len(runs), err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range 600 {
		name := fmt.Sprintf("SQL%02d", rng.IntN(40))
		if rng.IntN(3) == 0 {
			name = "sql" + name[3:] // the same instance, named in lower case
		}
		if i%50 == 0 {
			name = `<b>Z\SQL</b>`
		}
		id, err := db.StartRun(ctx, name, start.Add(time.Duration(i)*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if rng.IntN(4) > 0 {
			fin := start.Add(time.Duration(i)*time.Minute + 30*time.Second)
			if err := db.FinishRun(ctx, store.CollectorRun{ID: id, Instance: name, Started: start, Finished: &fin, Status: store.RunOK}); err != nil {
				t.Fatal(err)
			}
		}
	}
	want, err := db.runs(ctx, `SELECT `+runColumns+` FROM collector_run
		WHERE id IN (SELECT MAX(id) FROM collector_run GROUP BY instance) ORDER BY instance COLLATE NOCASE`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.LatestRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(rs []store.CollectorRun) (out []int64) {
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	if len(want) != 41 || !slices.Equal(ids(got), ids(want)) {
		t.Errorf("latest runs %v, want %v (41 instances)", ids(got), ids(want))
	}
}
