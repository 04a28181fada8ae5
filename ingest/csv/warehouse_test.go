package csv_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/csv"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// TestMain stops the PostgreSQL tests' cluster, if they started one
// (RW_TEST_ENGINE=postgres).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// importReal imports one dbatools fixture into db and returns the summary.
func importReal(t *testing.T, db store.Warehouse, name string) store.ImportSummary {
	t.Helper()
	f, err := os.Open(filepath.Join(realworld, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	im, err := db.NewImport(context.Background(), "history", name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := csv.Parse(context.Background(), f, csv.Options{File: name}, im); err != nil {
		t.Fatal(err)
	}
	sum, err := im.CommitAndReconcile()
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// TestDbatoolsIntoWarehouse imports a Get-DbaDbRestoreHistory export into a
// real warehouse: its four restores (the VERIFYONLY row is kept apart) come
// out with their kinds, devices and times, the offset unknown because the
// export states none; the same history in another culture's rendering adds
// nothing; a Restore-DbaDatabase export is stored once however often it is
// imported.
func TestDbatoolsIntoWarehouse(t *testing.T) {
	ctx := context.Background()
	db := storetest.OpenEngine(t)

	if sum := importReal(t, db, "restorehistory_ps51_en-GB_utf16.csv"); sum.Added != 5 || len(sum.Rejects) != 0 {
		t.Fatalf("first import: %+v", sum)
	}
	rs, _, err := db.ListRestores(ctx, store.RestoreFilter{Instance: `SQLPROD01\BILLING`, Sort: "at", Asc: true})
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		db   string
		kind store.Kind
		at   string
		devs int
	}
	var list []got
	for _, r := range rs {
		list = append(list, got{r.Database, r.Kind, r.At.UTC().Format(time.DateTime), len(r.Devices)})
		if r.OffsetKnown {
			t.Errorf("%s at %s: offset known, but the export states none", r.Database, r.At)
		}
	}
	want := []got{
		{"Sales", store.KindFull, "2026-11-03 23:45:59", 1},
		{"Billing", store.KindFull, "2026-11-14 01:30:05", 2},
		{"Billing", store.KindDiff, "2026-11-14 02:05:17", 1},
		{"Billing", store.KindLog, "2026-11-14 02:06:40", 1},
	}
	if !reflect.DeepEqual(list, want) {
		t.Errorf("restores:\n got %v\nwant %v", list, want)
	}

	if sum := importReal(t, db, "restorehistory_ps51_en-US_utf8bom.csv"); sum.Added != 0 || sum.Duplicates != 5 {
		t.Errorf("the en-US rendering of the same history: %+v, want 5 duplicates", sum)
	}
	if sum := importReal(t, db, "restoredbadatabase_ps7_en-GB.csv"); sum.Added != 3 || len(sum.Rejects) != 0 {
		t.Errorf("Restore-DbaDatabase: %+v, want 3 added", sum)
	}
	if sum := importReal(t, db, "restoredbadatabase_ps7_en-GB.csv"); sum.Added != 0 || sum.Duplicates != 3 {
		t.Errorf("Restore-DbaDatabase again: %+v, want 3 duplicates", sum)
	}
}
