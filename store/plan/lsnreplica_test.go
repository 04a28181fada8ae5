package plan_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/plan"
)

// TestProveByLSN: a candidate joins only when a log backup of one side
// holds the last LSN of a backup of the other, on the same recovery fork;
// a database of the same name whose logs are on another fork (a restored
// copy), name no fork, or whose LSNs never meet stays out, and a joined replica can prove
// the next one.
func TestProveByLSN(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	const forkA, forkB = "AAAAAAAA-0000-4000-8000-000000000001", "BBBBBBBB-0000-4000-8000-000000000002"
	set := func(inst, typ string, first, last int64, fork string, m int) store.BackupSet {
		return store.BackupSet{Instance: inst, Database: "Claims", Type: typ, FirstLSN: itoa(first), LastLSN: itoa(last),
			FirstForkGUID: fork, LastForkGUID: fork, Start: t0.Add(time.Duration(m) * time.Minute), Finish: t0.Add(time.Duration(m+1) * time.Minute)}
	}
	history := map[string][]store.BackupSet{
		"A":    {set("A", "D", 100, 200, forkA, 0)},
		"B":    {set("B", "L", 150, 300, forkA, 15)},         // holds A's full's last LSN
		"C":    {set("C", "L", 300, 400, forkA, 30)},         // continues B, not A: joins after B
		"COPY": {set("COPY", "L", 150, 300, forkB, 15)},      // same LSNs, another fork
		"FAR":  {set("FAR", "L", 900000, 900100, forkA, 45)}, // never meets
	}
	read := func(_ context.Context, in string) ([]store.BackupSet, error) { return history[in], nil }
	reps, err := plan.ProveByLSN(context.Background(), store.Replicas{Instances: []string{"A"}, Database: "Claims",
		Candidates: []string{"C", "COPY", "FAR", "NOFORK", "B"}}, history["A"], read)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(reps.Instances, ",") != "A,B,C" || len(reps.Candidates) != 0 || !strings.Contains(reps.Via, "LSN continuity across A, B, C") {
		t.Errorf("%+v", reps)
	}
}
