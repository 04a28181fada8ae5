package backups_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/backups"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/plan"
)

// msdbSets reads one of testdata/issue39/msdb's exports (modelled on the
// real msdb histories of dbatools' chain tests, see the README there) and
// checks that every set is one the warehouse keeps.
func msdbSets(t *testing.T, name string) []store.BackupSet {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "issue39", "msdb", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sets, st, err := backups.Parse(context.Background(), f, backups.Options{File: name})
	if err != nil || len(st.Rejects) > 0 {
		t.Fatalf("%s: %v %+v", name, err, st.Rejects)
	}
	for i := range sets {
		if err := sets[i].Validate(); err != nil {
			t.Errorf("%s: set %s rejected: %v", name, sets[i].UUID, err)
		}
	}
	return sets
}

func stepKinds(c plan.Chain) string {
	var k []string
	for _, s := range c.Steps {
		k = append(k, string(s.Kind)+"@"+s.Set.Finish.UTC().Format("15:04"))
	}
	return strings.Join(k, " ")
}

// TestLogsTakenWhileAFullRan: log backups finished while the full ran carry
// the running full's checkpoint as database_backup_lsn, after their own
// last_lsn. They are kept; the chain skips them and says why.
func TestLogsTakenWhileAFullRan(t *testing.T) {
	sets := msdbSets(t, "SQLPROD03_logs_during_full.csv")
	if len(sets) != 6 {
		t.Fatalf("%d sets", len(sets))
	}
	c, err := plan.Build(sets, "Inventory", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got := stepKinds(c); got != "full@21:41 log@21:45 log@22:00" {
		t.Errorf("steps %s", got)
	}
	if !strings.Contains(strings.Join(c.Notes, "\n"), "3 log backups taken while the full backup that finished 2026-11-20 21:41:10 UTC ran end at or before its last LSN") {
		t.Errorf("notes %q", c.Notes)
	}
}

// TestFullWhoseDatabaseBackupLSNIsAfterItsLast: such a full is a full all
// the same: the plan starts from it instead of finding no usable full.
func TestFullWhoseDatabaseBackupLSNIsAfterItsLast(t *testing.T) {
	sets := msdbSets(t, "SQLPROD04_full_dbl_after_last.csv")
	c, err := plan.Build(sets, "Billing", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got := stepKinds(c); got != "full@00:01 log@00:43 log@01:00" {
		t.Errorf("steps %s", got)
	}
}

// TestImpossibleLSNsStillRejected: what SQL Server cannot record is still
// refused: a first LSN after the last, a checkpoint after the last, a data
// backup's checkpoint before its first LSN.
func TestImpossibleLSNsStillRejected(t *testing.T) {
	base := msdbSets(t, "SQLPROD04_full_dbl_after_last.csv")[0]
	for name, edit := range map[string]func(*store.BackupSet){
		"first after last":          func(s *store.BackupSet) { s.FirstLSN, s.LastLSN = s.LastLSN, s.FirstLSN },
		"checkpoint after last":     func(s *store.BackupSet) { s.CheckpointLSN = "99000000000000001" + "0" },
		"checkpoint before first":   func(s *store.BackupSet) { s.CheckpointLSN = "1000001" },
		"database_backup_lsn after": nil,
	} {
		s := base
		if edit == nil {
			s.DatabaseBackupLSN = "99999999999999999999"
			if err := s.Validate(); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		edit(&s)
		if err := s.Validate(); store.ErrorCode(err) != store.EINVALID {
			t.Errorf("%s: %v", name, err)
		}
	}
}
