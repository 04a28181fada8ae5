package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/restorewatch/restorewatch/store/keep"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

// After an import, and after analyze, the dashboard's aggregates are kept
// at the warehouse's data version (issue 42), the cohorts at least at an
// earlier one: the next serve reads them instead of every restore.
func TestImportAndAnalyzeKeepTheAggregates(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "w.db")
	logs, _ := filepath.Glob("../../ingest/errorlog/testdata/full_diff_log_norecovery_2023.log")
	current := func(step string) {
		t.Helper()
		ctx := context.Background()
		db, err := sqlite.Open(ctx, dbPath)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		version, err := db.DataVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{keep.NameFigures, keep.NameRTO, keep.NameInstances} {
			if _, ok, err := keep.Kept(ctx, db, name, Version, version); err != nil || !ok {
				t.Errorf("after %s: %s not kept at the data version %s (%v)", step, name, version, err)
			}
		}
		if a, _, err := keep.Kept(ctx, db, keep.NameCohorts, Version, ""); err != nil || a.Name == "" {
			t.Errorf("after %s: no cohorts kept (%v)", step, err)
		}
		if o, err := db.LoadOrders(ctx); err != nil || o == nil {
			t.Errorf("after %s: no orders kept (%v)", step, err)
		}
	}
	if _, stderr, code := runMain(t, "import", "errorlog", "--db", dbPath, "--instance", "LNX01", logs[0]); code != 0 {
		t.Fatalf("import exit %d: %s", code, stderr)
	}
	current("import")
	if _, stderr, code := runMain(t, "analyze", "--db", dbPath, "--rederive"); code != 0 {
		t.Fatalf("analyze exit %d: %s", code, stderr)
	}
	current("analyze --rederive")
}
