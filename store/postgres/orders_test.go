package postgres_test

import (
	"context"
	"errors"
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

// TestOrdersHeadsOnPostgres: the heads saved with the orders' snapshot,
// brought up to date from PostgreSQL's change log after a second import,
// answer the unfiltered list's pages as a rebuild of the orders does.
func TestOrdersHeadsOnPostgres(t *testing.T) {
	ctx := context.Background()
	files := smallFleet(t)
	pg := open(t)
	if h, err := pg.LoadOrderHeads(ctx); err != nil || h != nil {
		t.Fatalf("before any save: %v, %v; want none", h, err)
	}
	importFleet(t, pg, files[:len(files)/2])
	old, err := pg.UpdateOrders(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := pg.SaveOrders(ctx, old); err != nil {
		t.Fatal(err)
	}
	importFleet(t, pg, files[len(files)/2:])
	h, err := pg.LoadOrderHeads(ctx)
	if err != nil || h == nil {
		t.Fatalf("LoadOrderHeads after the second import = %v, %v", h, err)
	}
	if h.(*orders.Heads).Seq() == old.OrdersSeq() {
		t.Fatal("the heads did not follow the second import")
	}
	want, err := pg.RestoreOrders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, sort := range []string{"at", "duration", "throughput"} {
		for _, asc := range []bool{false, true} {
			for _, f := range []store.RestoreFilter{{Sort: sort, Asc: asc, Limit: 100}, {Sort: sort, Asc: asc, Limit: 7, Offset: 3}} {
				for _, countCap := range []int{0, 10000} {
					if !h.Answers(f, countCap) {
						t.Fatalf("%+v, cap %d: not answered by the heads of a small fleet", f, countCap)
					}
					ga, na, ea := h.Page(f, countCap)
					gb, nb, eb := want.Page(f, countCap)
					if !reflect.DeepEqual(ga, gb) || na != nb || ea != eb {
						t.Errorf("%+v, cap %d: heads %d of %d (exact %v), orders %d of %d (exact %v)", f, countCap, len(ga), na, ea, len(gb), nb, eb)
					}
				}
			}
		}
	}
	if f := (store.RestoreFilter{Sort: "at", Kind: store.KindLog, Limit: 100}); h.Answers(f, 10000) {
		t.Error("the heads answer a filtered list")
	}

	// The same pages through Restores, rows and all, with the heads
	// (the orders not at hand) and without them.
	heads := func(context.Context) (store.OrderHeads, error) { return h, nil }
	none := func(context.Context) (store.OrderedPages, error) { return nil, errors.New("the orders are loading") }
	byOrders := func(context.Context) (store.OrderedPages, error) { return want, nil }
	for _, f := range []store.RestoreFilter{{Sort: "at", Limit: 100}, {Sort: "duration", Asc: true, Limit: 7, Offset: 3}} {
		got, err := pg.Restores(ctx, store.RestoreQuery{Filter: f, CountCap: 10000, Orders: none, Heads: heads})
		if err != nil {
			t.Fatal(err)
		}
		exp, err := pg.Restores(ctx, store.RestoreQuery{Filter: f, CountCap: 10000, Orders: byOrders})
		if err != nil {
			t.Fatal(err)
		}
		if got.Total != exp.Total || got.Exact != exp.Exact || len(got.Restores) != len(exp.Restores) || len(got.Restores) == 0 {
			t.Fatalf("%+v: %d restores of %d with the heads, %d of %d without", f, len(got.Restores), got.Total, len(exp.Restores), exp.Total)
		}
		for i := range got.Restores {
			if got.Restores[i].ID != exp.Restores[i].ID {
				t.Fatalf("%+v: row %d is restore %d with the heads, %d without", f, i, got.Restores[i].ID, exp.Restores[i].ID)
			}
		}
	}
}
