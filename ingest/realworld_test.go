package ingest_test

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// TestRealWorldFolder imports testdata/realworld — real, attributed error
// logs, captured output in eleven encodings and languages, dbatools exports,
// each folder with a README of its sources — the way a DBA would: one
// command over the folder, kinds detected, instances named by the files or
// their folders, undated output dated with --at. It checks that the READMEs
// and the expectation table are skipped and nothing else, and that the
// warehouse holds exactly the restores a DBA reading the files counts: a
// recovery step, a failed attempt or a backup is none; the same restore in
// two files (the derived fixtures repeat their sources) is one.
func TestRealWorldFolder(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join("..", "testdata", "realworld")
	files, err := ingest.ExpandPaths([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	db := storetest.OpenEngine(t)
	l := ingest.NewLoader(db, ingest.LoaderOptions{})
	at := time.Date(2025, 3, 1, 2, 0, 0, 0, time.UTC)
	run, err := l.StoreFiles(ctx, files, ingest.FilesOptions{InstanceFromDir: true,
		Options: ingest.Options{At: at}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Derive(ctx); err != nil {
		t.Fatal(err)
	}
	var skipped []string
	for _, r := range run.Files {
		rel, _ := filepath.Rel(root, r.Path)
		if r.Err != nil {
			t.Errorf("%s: %v", rel, r.Err)
		}
		if r.Skipped != "" {
			skipped = append(skipped, filepath.ToSlash(rel))
		}
	}
	wantSkipped := []string{"dbatools/README.md", "errorlog/README.md", "localized/README.md", "localized/expect.tsv", "messages/README.md"}
	if !slices.Equal(skipped, wantSkipped) {
		t.Errorf("skipped %v, want %v", skipped, wantSkipped)
	}

	got := map[string]int{}
	timedByDbatools := 0
	err = storetest.EachRestore(ctx, db, store.RestoreFilter{}, func(r *store.Restore) error {
		got[r.Instance+"|"+r.Database+"|"+string(r.Kind)]++
		if r.DurationSource == "dbatools_file_restore_time" {
			timedByDbatools++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{
		// dbatools: five renderings (PowerShell 5.1/7, en-GB, en-US, de-DE
		// with ';', ja-JP, invariant) of one five-row history — a VERIFYONLY
		// kept apart and four restores, each counted once whatever the
		// rendering — and Restore-DbaDatabase's timings of three of them.
		`SQLPROD01\BILLING|Billing|full`: 1, `SQLPROD01\BILLING|Billing|diff`: 1, `SQLPROD01\BILLING|Billing|log`: 1,
		`SQLPROD01\BILLING|Sales|full`: 1,
		// Error logs: two UTF-16 logs joined with cat (it names SQLMOCK);
		// the same log pasted into, appended to UTF-8 or copied from a
		// viewer, which name no server; a NORECOVERY chain whose final
		// WITH RECOVERY step is not a restore.
		"SQLMOCK|SQLTestDB|full": 1, "SQLMOCK|SQLTestDB|diff": 1, "SQLMOCK|SQLTestDB|log": 1,
		"errorlog|SQLTestDB|full": 1, "errorlog|SQLTestDB|diff": 1, "errorlog|SQLTestDB|log": 1,
		"errorlog|AdventureWorks|full": 1,
		// Localized output (Japanese, Russian, Spanish, Simplified Chinese);
		// the unrecognised language and the single 3014 lines of error logs
		// are rejects, the BACKUP lines are none.
		// Client output whose RESTORE DATABASE says no more than that is
		// "full or differential", not guessed full.
		"localized|BeerCap|full_or_diff": 1, "localized|Contoso|full_or_diff": 1, "localized|DiffBackupTestDB|full_or_diff": 2,
		"localized|User_Actions|full_or_diff": 1, "localized|db_test|full_or_diff": 1, "localized|sampleDatabase|full_or_diff": 1,
		// Captured output: failed attempts and recovery steps are none, a
		// page restore is a page restore, outputs joined or pasted across
		// encodings repeat restores counted once.
		"messages|DBMaint2012|full_or_diff": 1, "messages|DBMaint2012|log": 1,
		"messages|ExamplesDB_PageRestore|page": 1, "messages|ExamplesDB_PageRestore|log": 2,
		"messages|IronOreSilicaPrediction_2|full_or_diff": 1,
		"messages|Northwind|full_or_diff":                 1, "messages|Northwind|log": 2,
		"messages|Sales|full": 1,
	}
	if !maps.Equal(got, want) {
		for _, k := range slices.Sorted(maps.Keys(got)) {
			if got[k] != want[k] {
				t.Errorf("%s: %d restores, want %d", k, got[k], want[k])
			}
		}
		for _, k := range slices.Sorted(maps.Keys(want)) {
			if _, ok := got[k]; !ok {
				t.Errorf("%s: missing, want %d", k, want[k])
			}
		}
	}

	// Restore-DbaDatabase's three rows time the Billing chain's restores.
	if timedByDbatools != 3 {
		t.Errorf("%d restores timed by Restore-DbaDatabase, want 3", timedByDbatools)
	}

	tot := run.Sum()
	var failed, recovery int64
	for rule, n := range tot.Ignored {
		switch {
		case strings.HasPrefix(rule, "failed restore attempt"):
			failed += n
		case strings.HasPrefix(rule, "recovery step"):
			recovery += n
		}
	}
	if failed < 9 || recovery < 3 {
		t.Errorf("set aside: %d failed attempts, %d recovery steps; want every one named (%v)", failed, recovery, tot.Ignored)
	}
	if n := tot.RejectsByReason["looks like a restore message in an unrecognised language: …; not imported"]; n < 2 {
		t.Errorf("unrecognised-language rejects: %d (%v)", n, tot.RejectsByReason)
	}
}
