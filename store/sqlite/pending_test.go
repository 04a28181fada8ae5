package sqlite

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

// saveEmptyFindings stands for the analysis: it stores (empty) findings of
// each instance with the mark read before, as analysis.Run does.
func saveEmptyFindings(db *DB, called *[]int64) func(context.Context, []int64) error {
	return func(ctx context.Context, ids []int64) error {
		*called = append(*called, ids...)
		marks, err := db.AnalysisPending(ctx)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := db.SaveFindings(ctx, id, marks[id], nil, nil, nil); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestCompletePendingAfterKillMidBulk: a kill between a bulk derivation's
// drop of restore's indexes and their rebuild leaves, committed, the dropped
// indexes' record, dirty instances and no index. The next open's
// CompletePending builds them again, derives and analyses, and clears every
// mark; a second call finds nothing to do.
func TestCompletePendingAfterKillMidBulk(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	bulkFixture(t, db)
	want := restoreIndexNames(t, db)
	if !slices.Contains(want, "restore_scan") {
		t.Fatalf("indexes %v: want restore_scan among them", want)
	}
	// The committed state of the kill: what dropIndexes and an import batch
	// commit, and nothing after.
	if err := db.dropIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.Exec(`UPDATE instance SET dirty = dirty + 1 WHERE name = 'SQL02'`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := db.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.Indexes == 0 || p.Derive != 1 || p.Analyse != 3 {
		t.Errorf("pending after the kill: %+v; want indexes, 1 instance to derive, 3 to analyse (the fixture's import did not analyse)", p)
	}
	var analysed []int64
	if _, err := db.CompletePending(ctx, saveEmptyFindings(db, &analysed)); err != nil {
		t.Fatal(err)
	}
	if got := restoreIndexNames(t, db); !slices.Equal(got, want) {
		t.Errorf("indexes after CompletePending: %v; want %v", got, want)
	}
	if len(analysed) != 3 {
		t.Errorf("analysed instances %v; want the 3 of the fixture", analysed)
	}
	if p, err := db.Pending(ctx); err != nil || p.Any() {
		t.Errorf("pending after CompletePending: %+v, %v; want nothing", p, err)
	}
	analysed = nil
	if _, err := db.CompletePending(ctx, saveEmptyFindings(db, &analysed)); err != nil || analysed != nil {
		t.Errorf("a second CompletePending analysed %v (%v); want nothing", analysed, err)
	}
}

// TestAnalysisMarkSurvivesNewerDerivation: findings judged on restores that
// were derived again while the analysis ran leave the instance pending.
func TestAnalysisMarkSurvivesNewerDerivation(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	bulkFixture(t, db)
	marks, err := db.AnalysisPending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(marks) != 3 {
		t.Fatalf("marks %v: want the fixture's 3 instances pending", marks)
	}
	if err := db.ReconcileAll(ctx); err != nil { // a derivation the analysis did not see
		t.Fatal(err)
	}
	for id, m := range marks {
		if err := db.SaveFindings(ctx, id, m, nil, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if p, err := db.Pending(ctx); err != nil || p.Analyse != 3 {
		t.Errorf("pending after stale findings: %+v, %v; want 3 instances still to analyse", p, err)
	}
	marks, _ = db.AnalysisPending(ctx)
	for id, m := range marks {
		if err := db.SaveFindings(ctx, id, m, nil, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if p, err := db.Pending(ctx); err != nil || p.Any() {
		t.Errorf("pending after current findings: %+v, %v; want nothing", p, err)
	}
}
