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
	f, err := demo.Generate(demo.Config{Seed: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
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
	copyAt := f.Backups.LastDiff.Add(-3*24*time.Hour + 7*time.Hour)
	c, err := plan.Build(by[f.Backups.CopyOnly], f.Backups.CopyOnly[1], copyAt)
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
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
