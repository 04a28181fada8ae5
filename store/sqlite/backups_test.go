package sqlite_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/storetest"
)

func backupSets() []store.BackupSet {
	t0 := time.Date(2026, 11, 1, 22, 0, 0, 0, time.UTC)
	off := -300
	return []store.BackupSet{
		{Instance: "SQL01", Database: "Sales", UUID: "{6c1b0e1e-0000-4a8e-9e1b-000000000001}", Type: "D", Families: 2,
			FirstLSN: "39000000010000001", LastLSN: "39000000010500001.0", CheckpointLSN: "0039000000010000101",
			Start: t0, Finish: t0.Add(20 * time.Minute), UTCOffset: &off, Size: 40 << 30, CompressedSize: 12 << 30, Checksums: true,
			Media:  []store.BackupMedia{{Family: 1, DeviceType: 2, Device: `D:\Backup\Sales_1.bak`}},
			Files:  []store.BackupFile{{LogicalName: "Sales", PhysicalName: `D:\Data\Sales.mdf`, Type: "D", Size: 50 << 30, Filegroup: "PRIMARY"}},
			Origin: store.Origin{File: "backups.csv", Line: 2}},
		{Instance: "sql01", Database: "Sales", UUID: "6C1B0E1E-0000-4A8E-9E1B-000000000001", Type: "D", Families: 2,
			FirstLSN: "39000000010000001", LastLSN: "39000000010500001", Start: t0, Finish: t0.Add(20 * time.Minute),
			Media:  []store.BackupMedia{{Family: 2, DeviceType: 2, Device: `D:\Backup\Sales_2.bak`}},
			Files:  []store.BackupFile{{LogicalName: "Sales_log", PhysicalName: `L:\Log\Sales_log.ldf`, Type: "L"}},
			Origin: store.Origin{File: "backups.csv", Line: 3}},
		{Instance: "SQL01", Database: "Sales", UUID: "6C1B0E1E-0000-4A8E-9E1B-000000000002", Type: "L",
			FirstLSN: "39000000010000001", LastLSN: "39000000010600001", Start: t0.Add(30 * time.Minute), Finish: t0.Add(31 * time.Minute),
			Media:  []store.BackupMedia{{Family: 1, DeviceType: 9, Device: "https://acct.blob.core.windows.net/c/Sales.trn"}},
			Origin: store.Origin{File: "backups.csv", Line: 4}},
	}
}

// Rows of one set (one per stripe and file, as the export writes them)
// merge into one set; importing the same rows again adds nothing.
func TestBackupSetsImportIdempotent(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	added, err := storetest.BackupSets(ctx, db, backupSets())
	if err != nil || added != 2 {
		t.Fatalf("added %d, %v; want 2 sets", added, err)
	}
	added, err = storetest.BackupSets(ctx, db, backupSets())
	if err != nil || added != 0 {
		t.Fatalf("re-import added %d, %v", added, err)
	}
	got, err := db.BackupSets(ctx, "SQL01", "Sales", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d sets", len(got))
	}
	f := got[0]
	if f.UUID != "6C1B0E1E-0000-4A8E-9E1B-000000000001" || f.LastLSN != "39000000010500001" || f.CheckpointLSN != "39000000010000101" {
		t.Errorf("full %+v", f)
	}
	if len(f.Media) != 2 || f.Media[0].Device != `D:\Backup\Sales_1.bak` || f.Media[1].Family != 2 {
		t.Errorf("media %+v", f.Media)
	}
	if len(f.Files) != 2 || f.Files[0].Filegroup != "PRIMARY" || f.Files[1].Type != "L" || f.Files[0].Size != 50<<30 {
		t.Errorf("files %+v", f.Files)
	}
	if f.UTCOffset == nil || *f.UTCOffset != -300 || f.CompressedSize != 12<<30 || !f.Checksums || f.Origin.File != "backups.csv:2" {
		t.Errorf("facts %+v", f)
	}
	if !got[1].Finish.Equal(time.Date(2026, 11, 1, 22, 31, 0, 0, time.UTC)) || got[1].UTCOffset != nil {
		t.Errorf("log %+v", got[1])
	}
	// Read without the log (it finished before logsFrom), or without any
	// log: the full alone, with its own media and files.
	for _, from := range []time.Time{got[1].Finish.Add(time.Second), store.NoLogs} {
		part, err := db.BackupSets(ctx, "SQL01", "Sales", from)
		if err != nil || len(part) != 1 || part[0].Type != "D" || len(part[0].Media) != 2 || len(part[0].Files) != 2 {
			t.Errorf("from %v: %d sets %+v, %v; want the full alone", from, len(part), part, err)
		}
	}
	if part, _ := db.BackupSets(ctx, "SQL01", "Sales", got[1].Finish); len(part) != 2 || len(part[1].Media) != 1 {
		t.Errorf("from the log's finish: %+v; want both sets", part)
	}
	data, log, err := db.FileFolders(ctx, "SQL01")
	if err != nil || data != `D:\Data` || log != `L:\Log` {
		t.Errorf("folders %q %q %v", data, log, err)
	}
}

// An invalid set is rejected with its file and line and the rest of the
// import is stored, as with any other record.
func TestInvalidBackupSetIsRejectedWithItsLine(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	sets := backupSets()
	sets[2].LastLSN = "39:1:2"
	sum, err := storetest.ImportBackupSets(ctx, db, "backups.csv", sets)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Rejects) != 1 || sum.Rejects[0].File != "backups.csv" || sum.Rejects[0].Line != 4 ||
		!strings.Contains(sum.Rejects[0].Reason, "last_lsn") {
		t.Fatalf("rejects %v, want backups.csv:4 on its last_lsn", sum.Rejects)
	}
	if got, _ := db.BackupSets(ctx, "SQL01", "Sales", time.Time{}); len(got) != 1 || got[0].Type != "D" {
		t.Errorf("stored %+v, want the full beside the rejected log", got)
	}
	for _, bad := range []func(*store.BackupSet){
		func(b *store.BackupSet) { b.Type = "X" },
		func(b *store.BackupSet) { b.UUID = " " },
		func(b *store.BackupSet) { b.Finish = b.Start.Add(-time.Second) },
		func(b *store.BackupSet) { b.Media[0].Device = "" },
	} {
		s := backupSets()[:1]
		s[0].UUID = "6C1B0E1E-0000-4A8E-9E1B-0000000000FF"
		bad(&s[0])
		if sum, err := storetest.ImportBackupSets(ctx, db, "backups.csv", s); err != nil || len(sum.Rejects) != 1 || sum.Added != 0 {
			t.Errorf("%+v: added %d, rejects %v, %v", s[0], sum.Added, sum.Rejects, err)
		}
	}
}

// An instance's backup history, database by database: the newest backup of
// each type, whatever the name holds; an instance without one lists none.
func TestInstanceBackups(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	sets := backupSets()
	t0 := sets[0].Start
	odd := `Ops <"DW"> & 'x'`
	sets = append(sets,
		store.BackupSet{Instance: "SQL01", Database: odd, UUID: "6C1B0E1E-0000-4A8E-9E1B-000000000010", Type: "I",
			FirstLSN: "41000000010000001", LastLSN: "41000000010500001", Start: t0.Add(time.Hour), Finish: t0.Add(2 * time.Hour),
			Origin: store.Origin{File: "backups.csv", Line: 5}},
		store.BackupSet{Instance: "SQL01", Database: "Sales", UUID: "6C1B0E1E-0000-4A8E-9E1B-000000000011", Type: "L",
			FirstLSN: "39000000010600001", LastLSN: "39000000010700001", Start: t0.Add(3 * time.Hour), Finish: t0.Add(3*time.Hour + time.Minute),
			Origin: store.Origin{File: "backups.csv", Line: 6}},
		store.BackupSet{Instance: "SQL02", Database: "Other", UUID: "6C1B0E1E-0000-4A8E-9E1B-000000000012", Type: "D",
			FirstLSN: "1", LastLSN: "2", Start: t0, Finish: t0.Add(5 * time.Hour), Origin: store.Origin{File: "backups.csv", Line: 7}})
	if _, err := storetest.BackupSets(ctx, db, sets); err != nil {
		t.Fatal(err)
	}
	got, err := db.InstanceBackups(ctx, "sql01")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.DatabaseBackups{
		{Database: odd, LastDiff: t0.Add(2 * time.Hour)},
		{Database: "Sales", LastFull: t0.Add(20 * time.Minute), LastLog: t0.Add(3*time.Hour + time.Minute)},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Database != w.Database || !g.LastFull.Equal(w.LastFull) || !g.LastDiff.Equal(w.LastDiff) || !g.LastLog.Equal(w.LastLog) {
			t.Errorf("database %d: got %+v, want %+v", i, g, w)
		}
	}
	if got, err := db.InstanceBackups(ctx, "no such instance"); err != nil || len(got) != 0 {
		t.Errorf("unknown instance: %+v, %v", got, err)
	}
}
