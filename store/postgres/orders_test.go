package postgres_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/orders"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// TestOrdersOnPostgres: the fleet's orders read from PostgreSQL, updated
// from its change log after a second import, equal a rebuild; a snapshot
// saved loads back equal; and the list's pages they answer are SQLite's
// on the same files.
func TestOrdersOnPostgres(t *testing.T) {
	ctx := context.Background()
	files := smallFleet(t)
	pg := open(t)
	importFleet(t, pg, files[:len(files)/2])
	old, err := pg.UpdateOrders(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	importFleet(t, pg, files[len(files)/2:])
	fo, err := pg.UpdateOrders(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	got := fo.(*orders.Orders)
	if got.Scanned() {
		t.Error("the second import's orders were read anew, not updated from the change log")
	}
	want, err := pg.RestoreOrders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := orders.Diff(got, want); d != "" {
		t.Fatalf("updated orders differ from a rebuild: %s", d)
	}
	if again, err := pg.UpdateOrders(ctx, got); err != nil || again != fo {
		t.Errorf("an update with nothing changed: %v, want the same orders", err)
	}

	if err := pg.SaveOrders(ctx, want); err != nil {
		t.Fatal(err)
	}
	loaded, err := pg.LoadOrders(ctx)
	if err != nil || loaded == nil {
		t.Fatalf("LoadOrders = %v, %v", loaded, err)
	}
	if d := orders.Diff(loaded.(*orders.Orders), want); d != "" {
		t.Fatalf("a loaded snapshot differs: %s", d)
	}

	lite := storetest.Open(t)
	importFleet(t, lite, files[:len(files)/2])
	importFleet(t, lite, files[len(files)/2:])
	lo, err := lite.UpdateOrders(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []store.RestoreFilter{{Sort: "at"}, {Sort: "duration", Asc: true}, {Sort: "throughput", Limit: 7, Offset: 3},
		{Sort: "at", Kind: store.KindLog}, {Sort: "at", Build: "15.0"}, {Sort: "at", Database: "DW_Sales"}} {
		ga, na, ea := lo.Page(f, 0)
		gb, nb, eb := got.Page(f, 0)
		if !reflect.DeepEqual(ga, gb) || na != nb || ea != eb {
			t.Errorf("Page(%+v): SQLite %d of %d, PostgreSQL %d of %d", f, len(ga), na, len(gb), nb)
		}
	}

	a := store.Aggregate{Name: "cohorts", Version: "v1", Took: 3 * time.Second, Body: []byte{0, 1, 2}}
	for range 2 {
		if err := pg.SaveAggregate(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if as, err := pg.Aggregates(ctx); err != nil || len(as) != 1 || !reflect.DeepEqual(as[0], a) {
		t.Errorf("Aggregates = %+v, %v; want the one kept", as, err)
	}
}
