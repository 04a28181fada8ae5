package messages_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/messages"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// TestMain stops the PostgreSQL tests' cluster, if they started one
// (RW_TEST_ENGINE=postgres).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// importFile parses one realworld file into the warehouse, as the import
// command does, and returns the summary.
func importFile(t *testing.T, db store.Warehouse, name string, opt messages.Options) store.ImportSummary {
	t.Helper()
	ctx := context.Background()
	f, err := os.Open(filepath.Join(realworld, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	im, err := db.NewImport(ctx, "messages", name)
	if err != nil {
		t.Fatal(err)
	}
	opt.File, opt.Instance = name, `SQL01\PROD`
	if _, err := messages.Parse(ctx, f, opt, im); err != nil {
		t.Fatal(err)
	}
	sum, err := im.CommitAndReconcile()
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// TestUntimedNeverStoredInvisibly is the evidence for rejecting undated
// restores instead of storing them: in a real warehouse, output without
// stamps and without --at adds nothing (three rejects that say how to date
// them); the advised re-import with --at then lists the three restores once,
// the recovery step among none of them, and a third import adds nothing.
// (Stored undated, they were listed nowhere, and the re-import with --at
// added a second, dated copy of each beside the invisible one.)
func TestUntimedNeverStoredInvisibly(t *testing.T) {
	ctx := context.Background()
	db := storetest.OpenEngine(t)
	const name = "norecovery_chain_northwind.txt"

	sum := importFile(t, db, name, messages.Options{})
	if sum.Added != 0 || len(sum.Rejects) != 3 {
		t.Fatalf("undated import: added %d, rejects %v", sum.Added, sum.Rejects)
	}
	if n, err := db.CountAllRestores(ctx); err != nil || n != 0 {
		t.Fatalf("restores after the undated import: %d, %v", n, err)
	}

	sum = importFile(t, db, name, messages.Options{At: sampleAt})
	if sum.Added != 3 || len(sum.Rejects) != 0 {
		t.Fatalf("dated import: added %d, rejects %v", sum.Added, sum.Rejects)
	}
	rs, total, err := db.ListRestores(ctx, store.RestoreFilter{Sort: "at", Asc: true})
	if err != nil {
		t.Fatal(err)
	}
	if total != 3 || len(rs) != 3 {
		t.Fatalf("listed %d restores (total %d), want 3", len(rs), total)
	}
	for _, r := range rs {
		if r.Database != "Northwind" || r.FinishedAt == nil {
			t.Errorf("restore %+v", r)
		}
	}
	if sum = importFile(t, db, name, messages.Options{At: sampleAt}); sum.Added != 0 {
		t.Errorf("re-import added %d", sum.Added)
	}
}
