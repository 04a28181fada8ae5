package collector_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/plan"
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

// TestPassRecordsAvailabilityGroups: two replicas of an availability group
// database, the full taken on the primary and the logs on the secondary
// (the AG's backup preference), collected from each: the warehouse records
// the membership the collector reads (AG, listener, group database id), and
// a restore plan asked by the AG's name, its listener or either replica's
// name builds the one chain across both, each step on the replica that took
// it.
func TestPassRecordsAvailabilityGroups(t *testing.T) {
	f := newFleet(t)
	t0 := base.Add(-48 * time.Hour)
	lsn := func(k int) string { return fmt.Sprintf("%d", int64(39000000010000001)+int64(k*100)) }
	const fork = "A1B2C3D4-E5F6-4711-8899-AABBCCDDEEFF"
	set := func(n int, typ string, first, last int, finish time.Time) store.BackupSet {
		return store.BackupSet{Database: "Sales", UUID: fmt.Sprintf("6C1B0E1E-77A1-4A8E-9E1B-3F2D1C0B0A%02d", n),
			Type: typ, Families: 1, FirstLSN: lsn(first), LastLSN: lsn(last), CheckpointLSN: lsn(first), DatabaseBackupLSN: lsn(0),
			FirstForkGUID: fork, LastForkGUID: fork, FamilyGUID: "5F2B6C1E-8D3A-4C7B-9E1F-2A3B4C5D6E7F",
			Start: finish.Add(-time.Minute), Finish: finish, Size: 1 << 30, SoftwareBuild: "16.0.4135",
			Media: []store.BackupMedia{{Family: 1, DeviceType: 2, Device: fmt.Sprintf(`\\bk\Sales_%s_%d.bak`, typ, n)}}}
	}
	member := store.AGMembership{Database: "Sales", AG: "AGSales", Listener: "sales-lsn.corp.example",
		GroupDatabaseID: "0D1E2F30-4152-6374-8596-A7B8C9D0E1F2"}
	primary, secondary := f.add("SQL-A", "16.0.4135.4"), f.add("SQL-B", "16.0.4135.4")
	primary.AddAvailability(member)
	secondary.AddAvailability(member)
	primary.AddBackups(set(1, "D", 1, 3, t0))
	for i := range 3 {
		secondary.AddBackups(set(10+i, "L", 2+2*i, 4+2*i, t0.Add(time.Duration(15*(i+1))*time.Minute)))
	}
	f.once()
	for _, name := range []string{"AGSales", "sales-lsn.corp.example", "SQL-A", "SQL-B"} {
		p, _, err := plan.Make(context.Background(), f.db, plan.Request{Instance: name, Database: "Sales"})
		if err != nil {
			t.Fatalf("plan --instance %s: %v", name, err)
		}
		var got []string
		for _, s := range p.Steps {
			got = append(got, string(s.Kind)+"@"+s.Set.Instance)
		}
		if want := "full@SQL-A log@SQL-B log@SQL-B log@SQL-B"; strings.Join(got, " ") != want {
			t.Errorf("plan --instance %s: %v, want %s", name, got, want)
		}
		if !strings.Contains(p.Via, "availability group AGSales") {
			t.Errorf("plan --instance %s: via %q", name, p.Via)
		}
	}
}
