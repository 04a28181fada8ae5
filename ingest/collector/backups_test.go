package collector_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/store"
)

// TestPassCollectsBackupHistory: a pass reads msdb's backup history after
// its watermark into the warehouse, so restore plans work from live
// instances; the next pass reads only what is new and adds nothing twice.
func TestPassCollectsBackupHistory(t *testing.T) {
	f := newFleet(t)
	in := f.add("SQL01", "16.0.4135.4")
	t0 := base.Add(-48 * time.Hour)
	set := func(n int, typ string, finish time.Time) store.BackupSet {
		lsn := func(k int) string { return fmt.Sprintf("%d", int64(39000000010000001)+int64(n*1000+k*100)) }
		return store.BackupSet{Database: "Sales", UUID: fmt.Sprintf("6C1B0E1E-77A1-4A8E-9E1B-3F2D1C0B0A%02d", n),
			Type: typ, Families: 1, FirstLSN: lsn(0), LastLSN: lsn(5), CheckpointLSN: lsn(1), DatabaseBackupLSN: lsn(0),
			Start: finish.Add(-time.Minute), Finish: finish, Size: 1 << 30, SoftwareBuild: "16.0.4135",
			Media: []store.BackupMedia{{Family: 1, DeviceType: 2, Device: `G:\b\Sales_` + typ + `.bak`}}}
	}
	in.AddBackups(set(1, "D", t0), set(2, "L", t0.Add(15*time.Minute)))
	f.once()
	ctx := context.Background()
	got, err := f.db.BackupSets(ctx, "SQL01", "Sales", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("after one pass: %d backup sets, want 2", len(got))
	}
	if r := f.runs()["SQL01"]; r.Rows[mssql.SourceBackups] != 2 || r.Errors[mssql.SourceBackups] != "" {
		t.Errorf("run record: rows %v, errors %v", r.Rows, r.Errors)
	}
	in.AddBackups(set(3, "L", t0.Add(30*time.Minute)))
	f.once()
	if got, _ = f.db.BackupSets(ctx, "SQL01", "Sales", time.Time{}); len(got) != 3 {
		t.Errorf("after the second pass: %d backup sets, want 3", len(got))
	}
	if r := f.runs()["SQL01"]; r.Rows[mssql.SourceBackups] != 1 {
		t.Errorf("the second pass read %d sets, want only the new one", r.Rows[mssql.SourceBackups])
	}
}
