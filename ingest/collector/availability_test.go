package collector_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// TestEveryReplicaIsRecordedAndKeptCurrent: a secondary that never takes a
// backup is recorded as a member of its availability group all the same
// (its host snapshot reads the membership on every pass, with VIEW SERVER
// STATE only); evicted from the group, it is no longer one.
func TestEveryReplicaIsRecordedAndKeptCurrent(t *testing.T) {
	f := newFleet(t)
	ctx := context.Background()
	member := store.AGMembership{Database: "Sales", AG: "AGSales", Listener: "sales-lsn.corp.example",
		GroupDatabaseID: "0D1E2F30-4152-6374-8596-A7B8C9D0E1F2"}
	primary, secondary := f.add("SQL-A", "16.0.4135.4"), f.add("SQL-B", "16.0.4135.4")
	primary.AddAvailability(member)
	secondary.AddAvailability(member)
	f.once()
	for _, name := range []string{"AGSales", "SQL-A", "SQL-B", "sales-lsn.corp.example"} {
		r, err := f.db.BackupReplicas(ctx, name, "Sales")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(sorted(r.Instances), []string{"SQL-A", "SQL-B"}) || !strings.Contains(r.Via, "availability group AGSales") {
			t.Errorf("replicas of %s: %+v", name, r)
		}
	}
	// SQL-B leaves the group; the next pass, later, reads it.
	secondary.SetAvailability()
	primary.SetClock(base.Add(time.Hour))
	secondary.SetClock(base.Add(time.Hour))
	f.once()
	r, err := f.db.BackupReplicas(ctx, "AGSales", "Sales")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Instances, []string{"SQL-A"}) {
		t.Errorf("after SQL-B left: %+v", r)
	}
}

// TestDistributedGroupToldApart: a distributed availability group lists the
// database a second time; the membership recorded is the database's own
// group, whatever the order of the rows, and the run record says what was
// left out: the distributed group, and the listener a login without VIEW
// ANY DEFINITION cannot see.
func TestDistributedGroupToldApart(t *testing.T) {
	f := newFleet(t)
	ctx := context.Background()
	in := f.add("SQL-A", "16.0.4135.4")
	in.AddAvailability(store.AGMembership{Database: "Sales", AG: "ZDAG", Distributed: true, GroupDatabaseID: "0D1E2F30-4152-6374-8596-A7B8C9D0E1F2"},
		store.AGMembership{Database: "Sales", AG: "AGSales", Listener: "sales-lsn.corp.example", GroupDatabaseID: "0D1E2F30-4152-6374-8596-A7B8C9D0E1F2"})
	in.WithoutViewDefinition()
	f.once()
	r, err := f.db.BackupReplicas(ctx, "SQL-A", "Sales")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Via, "availability group AGSales") {
		t.Errorf("replicas %+v", r)
	}
	if r, _ := f.db.BackupReplicas(ctx, "ZDAG", "Sales"); len(r.Instances) != 1 || r.Instances[0] != "ZDAG" {
		t.Errorf("the distributed group was recorded: %+v", r)
	}
	errs := f.runs()["SQL-A"].Errors
	if note := errs["host/availability"]; !strings.Contains(note, "distributed availability group ZDAG") || !strings.Contains(note, "VIEW ANY DEFINITION") {
		t.Errorf("run record says %q", note)
	}
	if note := errs["host/volumes"]; !strings.Contains(note, "VIEW ANY DEFINITION") {
		t.Errorf("run record says nothing of the volumes the login cannot see: %v", errs)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
