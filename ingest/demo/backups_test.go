package demo_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/ingest/backups"
	"github.com/restorewatch/restorewatch/ingest/demo"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/plan"
)

// The demo's backup history reads back through the importer's parser and
// holds what it claims: a copy-only full, striped fulls, a broken chain
// and a recovery fork, each found by the chain logic.
func TestDemoBackupHistory(t *testing.T) {
	f, _ := defaultFleet(t)
	var path string
	for _, file := range f.Files {
		if file.Kind == ingest.Backups {
			path = file.Path
		}
	}
	r, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sets, st, err := backups.Parse(context.Background(), r, backups.Options{File: "backup-history.csv"})
	if err != nil || len(st.Rejects) > 0 {
		t.Fatalf("%v %v", err, st.Rejects)
	}
	if len(sets) != f.Backups.BackupSets {
		t.Errorf("%d sets read, %d written", len(sets), f.Backups.BackupSets)
	}
	by := map[[2]string][]store.BackupSet{}
	striped := 0
	for _, s := range sets {
		k := [2]string{s.Instance, s.Database}
		by[k] = append(by[k], s)
		if s.Type == "D" && s.Families > 1 && len(s.Media) == s.Families {
			striped++
		}
	}
	if len(by) != f.Backups.Databases || striped == 0 {
		t.Errorf("%d databases (want %d), %d striped fulls", len(by), f.Backups.Databases, striped)
	}
	c, err := plan.Build(by[f.Backups.CopyOnly], f.Backups.CopyOnly[1], f.Backups.CopyAt.Add(40*time.Minute))
	if err != nil || !c.Steps[0].Set.CopyOnly {
		t.Errorf("copy-only: %v %+v", err, c.Steps)
	}
	if _, err := plan.Build(by[f.Backups.Gap], f.Backups.Gap[1], f.Backups.GapAt); !strings.Contains(errString(err), "broken") {
		t.Errorf("gap: %v", err)
	}
	c, err = plan.Build(by[f.Backups.Fork], f.Backups.Fork[1], f.Backups.ForkAt.Add(2*time.Hour))
	if err != nil || !strings.Contains(strings.Join(c.Notes, " "), "crosses a recovery fork") {
		t.Errorf("fork: %v %q", err, c.Notes)
	}
	checkBackupsCouldHappen(t, f, by)
}

// The history could have happened (issue 38): no backup of a database runs
// while a restore over it does (a full or differential restore on the
// instance whose msdb recorded the backup); a log-shipped copy, always
// restoring, has none; and after each restore over a database its next
// backup is a full that starts a new chain, the one a plan of any later
// instant begins with.
func checkBackupsCouldHappen(t *testing.T, f demo.Fleet, by map[[2]string][]store.BackupSet) {
	t.Helper()
	over := map[[2]string][]truthRow{}
	logShipped := map[[2]string]bool{}
	for _, r := range readTruth(t, f) {
		k := [2]string{r.instance, r.db}
		if r.kind == "log" {
			logShipped[k] = true
			continue
		}
		over[k] = append(over[k], r)
	}
	refreshes := map[string]bool{} // the fulls that follow a restore
	for k, sets := range by {
		if logShipped[k] {
			t.Errorf("%s on %s is log-shipped (always restoring) but has %d backups", k[1], k[0], len(sets))
		}
		first := sets[0].Start
		for _, s := range sets {
			if s.Start.Before(first) {
				first = s.Start
			}
		}
		for _, r := range over[k] {
			for _, s := range sets {
				if !s.Start.After(r.end) && !s.Finish.Before(r.start) {
					t.Errorf("%s on %s: %s backup %s–%s runs while restore %d over it does (%s–%s)", k[1], k[0], s.Type,
						s.Start, s.Finish, r.histID, r.start, r.end)
					break
				}
			}
			if r.end.Before(first) {
				continue
			}
			// The next backup after the restore is a full that starts
			// the chain of an instant after it.
			var next *store.BackupSet
			for i := range sets {
				if s := &sets[i]; s.Start.After(r.end) && (next == nil || s.Start.Before(next.Start)) {
					next = s
				}
			}
			if next == nil {
				continue
			}
			refreshes[next.UUID] = true
			if next.Type != "D" || next.CopyOnly {
				t.Errorf("%s on %s: the first backup after restore %d (ended %s) is a %s backup, not a full starting a new chain",
					k[1], k[0], r.histID, r.end, next.Type)
				continue
			}
			c, err := plan.Build(sets, k[1], next.Finish.Add(10*time.Minute))
			if err == nil && c.Steps[0].Set.Start.Before(r.end) {
				t.Errorf("%s on %s: the plan of %s begins with a backup of %s, before restore %d replaced the database",
					k[1], k[0], next.Finish.Add(10*time.Minute), c.Steps[0].Set.Start, r.histID)
			}
		}
	}
	if len(refreshes) == 0 || len(refreshes) != f.Backups.Refreshes {
		t.Errorf("%d backups follow a restore over their database; the demo says it took %d fulls after one", len(refreshes), f.Backups.Refreshes)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
