package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

func restoreIndexNames(t *testing.T, db *DB) []string {
	t.Helper()
	rows, err := db.write.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'restore' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return names
}

func bulkFixture(t *testing.T, db *DB) {
	t.Helper()
	im, err := db.NewImport(context.Background(), "test", "bulk.csv")
	if err != nil {
		t.Fatal(err)
	}
	size := int64(10 << 30)
	for i := 0; i < 300; i++ {
		at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour)
		h := store.HistoryRow{Instance: []string{"SQL01", "SQL02", "SQL03"}[i%3], RestoreHistoryID: int64(i + 1), RestoreDate: at,
			Database: []string{"A", "B"}[i%2], RestoreType: "D", BackupType: "D", BackupSize: &size,
			Origin: store.Origin{Source: "history", File: "bulk.csv", Line: i + 2}}
		if err := im.History(h); err != nil {
			t.Fatal(err)
		}
		l := store.LogRestore{Instance: h.Instance, Database: h.Database, Kind: store.KindFull, MessageID: 18267,
			CompletedAt: at.Add(time.Duration(60+i) * time.Second), Has3014: true, Statement: "RESTORE DATABASE",
			Pages: 1 << 20, Seconds: float64(60 + i), MBps: 100, Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: i + 1}}
		if err := im.LogRestore(l); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := im.CommitAndReconcile(); err != nil {
		t.Fatal(err)
	}
}

// TestBulkReconcile: a reconciliation large enough to drop restore's
// secondary indexes derives what an incremental one derives and leaves every
// index as it was.
func TestBulkReconcile(t *testing.T) {
	ctx := context.Background()
	open := func() *DB {
		db, err := Open(ctx, filepath.Join(t.TempDir(), "w.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	defer func(n int64) { bulkMinChanges = n }(bulkMinChanges)

	bulkMinChanges = 1 << 40 // never
	plain := open()
	want := restoreIndexNames(t, plain)
	drops := bulkDrops.Load()
	bulkFixture(t, plain)
	if bulkDrops.Load() != drops {
		t.Fatal("a reconciliation under bulkMinChanges dropped the indexes")
	}

	bulkMinChanges = 10
	bulk := open()
	before := bulkDrops.Load()
	bulkFixture(t, bulk)
	if bulkDrops.Load() == before {
		t.Fatal("the import did not reconcile in bulk")
	}
	if got := restoreIndexNames(t, bulk); !reflect.DeepEqual(got, want) {
		t.Errorf("indexes after a bulk reconcile = %v, want %v", got, want)
	}
	a, _, err := plain.ListRestores(ctx, store.RestoreFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := bulk.ListRestores(ctx, store.RestoreFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 300 || !reflect.DeepEqual(a, b) {
		t.Errorf("bulk and incremental reconciliation differ (%d and %d restores)", len(a), len(b))
	}
	var n int
	if err := bulk.write.QueryRow(`SELECT count(*) FROM setting WHERE key = ?`, droppedKey).Scan(&n); err != nil || n != 0 {
		t.Errorf("%s still recorded (%d, %v)", droppedKey, n, err)
	}
}

// TestDroppedIndexesComeBack: indexes a crashed bulk reconciliation left
// dropped are built again by the next Reconcile.
func TestDroppedIndexesComeBack(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	want := restoreIndexNames(t, db)
	if err := db.dropIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if got := restoreIndexNames(t, db); len(got) >= len(want) {
		t.Fatalf("dropIndexes left %v (had %v)", got, want)
	}
	// The process dies here; the next one reconciles.
	if err := db.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if got := restoreIndexNames(t, db); !reflect.DeepEqual(got, want) {
		t.Errorf("indexes after recovery = %v, want %v", got, want)
	}
	var n int
	if err := db.write.QueryRow(`SELECT count(*) FROM setting WHERE key = ?`, droppedKey).Scan(&n); err != nil || n != 0 {
		t.Errorf("%s still recorded (%d, %v)", droppedKey, n, err)
	}
}

// TestProgressReports: a bulk import reports its instances as they are
// written and its indexes as they are built, each phase ending at its total.
func TestProgressReports(t *testing.T) {
	defer func(n int64) { bulkMinChanges = n }(bulkMinChanges)
	bulkMinChanges = 10
	db := openTestDB(t)
	var mu sync.Mutex
	last := map[string]store.Progress{}
	db.SetProgress(func(p store.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if prev, ok := last[p.Phase]; ok && (p.Done < prev.Done || p.Total != prev.Total) {
			t.Errorf("%s went from %+v to %+v", p.Phase, prev, p)
		}
		last[p.Phase] = p
	})
	bulkFixture(t, db)
	db.SetProgress(nil)
	if p := last[store.PhaseDerive]; p.Done != 3 || p.Total != 3 {
		t.Errorf("derive progress ended at %+v, want 3 of 3 instances", p)
	}
	if p := last[store.PhaseIndexes]; p.Total == 0 || p.Done != p.Total {
		t.Errorf("index progress ended at %+v", p)
	}
}

// TestIndexRebuildFallsBackToMemory: when an index cannot be sorted through
// temporary files, the rebuild sorts it in memory instead of failing. As
// root every temporary directory SQLite tries is writable, so the failure
// is injected: every build fails while temp_store is FILE.
func TestIndexRebuildFallsBackToMemory(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	bulkFixture(t, db)
	want := restoreIndexNames(t, db)
	if err := db.dropIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	failed := 0
	indexFault = func(c *sql.DB) error {
		var store int
		if err := c.QueryRowContext(ctx, `PRAGMA temp_store`).Scan(&store); err != nil {
			return err
		}
		if store == 1 { // FILE
			failed++
			return errors.New("unable to open a temporary database file for storing temporary tables")
		}
		return nil
	}
	defer func() { indexFault = nil }()
	if err := db.restoreIndexes(ctx); err != nil {
		t.Fatalf("rebuild without temporary files: %v", err)
	}
	if failed == 0 {
		t.Fatal("no build ran with temp_store = FILE")
	}
	if got := restoreIndexNames(t, db); !reflect.DeepEqual(got, want) {
		t.Errorf("indexes after the fallback = %v, want %v", got, want)
	}
	// Without the fault, the next rebuild sorts through files again.
	var store int
	if err := db.write.QueryRow(`PRAGMA temp_store`).Scan(&store); err != nil || store != 2 {
		t.Errorf("temp_store after the rebuild: %d, %v; want 2 (MEMORY), the writer's own", store, err)
	}
}
