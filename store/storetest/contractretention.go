package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// contractRetention (issue 41): old log restores are rolled up
// per day and their facts deleted, but every full restore, a regression's
// series from its baseline window to its last sighting, and a series' last
// KeepLast restores stay raw, with the ids the regression cites.
func contractRetention(t *testing.T, db store.Warehouse) {
	ctx := context.Background()
	end := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	start := end.Add(-200 * 24 * time.Hour)
	size := int64(1 << 30)
	// A warehouse that ran through those months has had each month's
	// partitions made as it began (PostgreSQL): retention then drops
	// whole months.
	if p, ok := db.(interface {
		EnsureMonths(context.Context, time.Time) error
	}); ok {
		for at := start; at.Before(end); at = at.AddDate(0, 1, 0) {
			if err := p.EnsureMonths(ctx, at); err != nil {
				t.Fatal(err)
			}
		}
	}
	im, err := db.NewImport(ctx, "test", "h.csv")
	built(t, "NewImport", err)
	var n int64
	add := func(db, typ string, at time.Time) {
		n++
		if err := im.History(store.HistoryRow{Instance: "SQL01", RestoreHistoryID: n, RestoreDate: at, Database: db,
			RestoreType: typ, BackupType: typ, BackupSize: &size, FirstLSN: "1000", LastLSN: "2000",
			Origin: store.Origin{Source: "history", File: "h.csv", Line: int(n)}}); err != nil {
			t.Fatal(err)
		}
	}
	for at := start; at.Before(end); at = at.Add(6 * time.Hour) {
		add("Shipped", "L", at) // four log restores a day, the whole 200 days
		if at.Hour() == 0 {
			add("Nightly", "D", at) // a full restore a day
		}
		if at.Before(start.Add(40 * 24 * time.Hour)) {
			add("Retired", "L", at) // a log-shipped database given up 160 days ago
		}
	}
	if _, err := im.CommitAndReconcile(); err != nil {
		t.Fatal(err)
	}
	all := func(database string) []store.Restore {
		t.Helper()
		rs, _, err := db.ListRestores(ctx, store.RestoreFilter{Instance: "SQL01", Database: database, Sort: "at", Asc: true, Limit: 100000})
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	shipped := all("Shipped")
	if len(shipped) != 800 {
		t.Fatalf("%d log restores of Shipped, want 800", len(shipped))
	}
	// A regression in Shipped, changed at day 50, seen until day 60, judged
	// against the 12 restores before the change.
	change, last := shipped[200], shipped[240]
	inst, err := db.GetInstance(ctx, "SQL01")
	if err != nil {
		t.Fatal(err)
	}
	reg := store.Regression{InstanceID: inst.ID, Instance: "SQL01", Database: "Shipped", Kind: store.KindLog, Direction: "regression",
		ChangedAt: change.At, ChangeRestoreID: change.ID, BaselineMiBps: 100, CurrentMiBps: 40, Ratio: 0.4, BaselineN: 12,
		CurrentN: 41, PValue: 0.001, Status: "open", FirstSeen: last.At, LastSeen: last.At}
	if err := db.SaveFindings(ctx, inst.ID, 0, nil, []store.Regression{reg}, nil); err != nil {
		t.Fatal(err)
	}
	fulls := len(all("Nightly"))

	st, err := db.Prune(ctx, store.Retention{Restores: 90 * 24 * time.Hour, KeepLast: 4}, end)
	built(t, "Prune", err)
	t.Logf("prune: %+v", st)
	after := map[int64]store.Restore{}
	for _, r := range all("Shipped") {
		after[r.ID] = r
	}
	for _, r := range shipped[200-12 : 241] {
		if got, ok := after[r.ID]; !ok || !got.At.Equal(r.At) {
			t.Fatalf("restore %d of %s, cited by the regression, is gone or moved (%v)", r.ID, r.At, ok)
		}
	}
	cut := end.Add(-91 * 24 * time.Hour)
	var rolled int64
	for _, r := range shipped {
		_, kept := after[r.ID]
		cited := r.ID >= shipped[188].ID && r.ID <= shipped[240].ID
		switch {
		case !r.At.Before(cut) && !kept:
			t.Errorf("restore of %s, younger than the retention, is gone", r.At)
		case r.At.Before(cut) && !cited && kept:
			t.Errorf("restore of %s, old and cited by nothing, is kept", r.At)
		case r.At.Before(cut) && !cited:
			rolled++
		}
	}
	if got := len(all("Nightly")); got != fulls {
		t.Errorf("%d full restores after the retention, want all %d", got, fulls)
	}
	retired := all("Retired")
	if len(retired) != 4 {
		t.Errorf("%d restores of Retired kept, want its last 4 (KeepLast)", len(retired))
	}
	rolled += 160 - 4
	if st.RolledUp != rolled || st.History != rolled || st.Pinned != 53+4 {
		t.Errorf("stats %+v: want %d rolled up and their history rows deleted, %d pinned", st, rolled, 53+4)
	}
	// A roll-up row a day and database: about four log restores each.
	if st.Rollups == 0 || st.Rollups > rolled/3 {
		t.Errorf("%d roll-up rows for %d restores, want about a quarter as many", st.Rollups, rolled)
	}
	if got, want := int64(len(after)), int64(len(shipped))-(rolled-(160-4)); got != want {
		t.Errorf("%d restores of Shipped after the retention, want %d", got, want)
	}
	kept := unique(t, all(""))
	// The kept restores stand on their facts: derived again from them
	// alone, they are the same restores with the same ids.
	if err := db.ReconcileAll(ctx); err != nil {
		t.Fatal(err)
	}
	if again := unique(t, all("")); !sameRestores(again, kept) {
		t.Errorf("derived again after the retention: %d restores, want the %d kept", len(again), len(kept))
	}
	// Again: nothing more goes.
	if st, err := db.Prune(ctx, store.Retention{Restores: 90 * 24 * time.Hour, KeepLast: 4}, end); err != nil || st.RolledUp != 0 {
		t.Errorf("a second prune: %+v, %v; want nothing rolled up", st, err)
	}
	if again := unique(t, all("")); !sameRestores(again, kept) {
		t.Errorf("after a second prune: %d restores, want the %d kept", len(again), len(kept))
	}
}

// unique fails t when a restore is listed twice: by id, or as the same
// database's restore at the same time (each has its own in
// contractRetention). It returns them by id.
func unique(t *testing.T, rs []store.Restore) map[int64]store.Restore {
	t.Helper()
	byID := map[int64]store.Restore{}
	type at struct {
		db string
		ms int64
	}
	seen := map[at]int64{}
	for _, r := range rs {
		if _, dup := byID[r.ID]; dup {
			t.Errorf("restore %d listed twice", r.ID)
		}
		byID[r.ID] = r
		k := at{r.Database, r.At.UnixMilli()}
		if other, dup := seen[k]; dup {
			t.Errorf("restores %d and %d are both %s's of %s", other, r.ID, r.Database, r.At)
		}
		seen[k] = r.ID
	}
	return byID
}

// sameRestores says a and b hold the same ids, each of the same database,
// kind and time.
func sameRestores(a, b map[int64]store.Restore) bool {
	if len(a) != len(b) {
		return false
	}
	for id, r := range a {
		o, ok := b[id]
		if !ok || o.Database != r.Database || o.Kind != r.Kind || !o.At.Equal(r.At) {
			return false
		}
	}
	return true
}
