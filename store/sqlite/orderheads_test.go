package sqlite

import (
	"context"
	"slices"
	"testing"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/orders"
)

// headSorts are the orders the heads keep (orders.HeadsOf).
var headSorts = [...]struct {
	sort string
	asc  bool
}{{"at", false}, {"at", true}, {"duration", false}, {"duration", true}, {"throughput", false}, {"throughput", true}}

// headFilters are the unfiltered list's pages of 100 in every order, ten
// deep and one past the heads, and one page of 7 at an odd offset.
func headFilters() []store.RestoreFilter {
	var fs []store.RestoreFilter
	for _, s := range headSorts {
		for off := 0; off <= orders.HeadLen; off += 100 {
			fs = append(fs, store.RestoreFilter{Sort: s.sort, Asc: s.asc, Limit: 100, Offset: off})
		}
		fs = append(fs, store.RestoreFilter{Sort: s.sort, Asc: s.asc, Limit: 7, Offset: 333})
	}
	return fs
}

// sameHeadPages fails the test when h answers a page of headFilters (at
// count caps of 0, 1,000 and 10,000) otherwise than o, or answers fewer
// than want of them at the cap of 1,000.
func sameHeadPages(t *testing.T, h *orders.Heads, o *RestoreOrders, want int) {
	t.Helper()
	answered := 0
	for _, countCap := range []int{0, 1000, 10000} {
		for _, f := range headFilters() {
			if !h.Answers(f, countCap) {
				continue
			}
			if countCap == 1000 {
				answered++
			}
			ih, nh, eh := h.Page(f, countCap)
			io, no, eo := o.Page(f, countCap)
			if !slices.Equal(ih, io) || nh != no || eh != eo {
				t.Fatalf("%+v, cap %d: heads %d ids (%v…), %d (exact %v); orders %d ids (%v…), %d (exact %v)",
					f, countCap, len(ih), ih[:min(3, len(ih))], nh, eh, len(io), io[:min(3, len(io))], no, eo)
			}
		}
	}
	if answered < want {
		t.Fatalf("the heads answered %d pages of %d at a cap of 1,000; want at least %d", answered, len(headFilters()), want)
	}
}

// The heads kept with the orders answer the unfiltered list's first pages
// as the orders do, before and after the changes of a day (new restores at
// its head, re-derived and deleted ones among the newest, re-derived ones
// anywhere), and stand aside where they cannot (the pages past them, an
// exact count of a large order, a log they cannot follow).
func TestOrderHeadsAnswerAsTheOrders(t *testing.T) {
	ctx := context.Background()
	db := benchWarehouse(t, 20000)
	if h, err := db.loadOrderHeads(ctx); err != nil || h != nil {
		t.Fatalf("before any save: %v, %v; want none", h, err)
	}
	o, err := db.RestoreOrders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SaveOrders(ctx, o); err != nil {
		t.Fatal(err)
	}
	h, err := db.loadOrderHeads(ctx)
	if err != nil || h == nil {
		t.Fatalf("load: %v, %v", h, err)
	}
	// Ten pages of each of the six orders, at the cap of 1,000.
	sameHeadPages(t, h, o, 60)
	if f := (store.RestoreFilter{Sort: "at", Kind: store.KindLog, Limit: 100}); h.Answers(f, 1000) {
		t.Error("the heads answer a filtered list")
	}

	benchChanges(t, db, 20000, 600, 150, 40, false)
	benchChanges(t, db, 20600, 0, 300, 0, true)
	h, err = db.loadOrderHeads(ctx)
	if err != nil || h == nil {
		t.Fatalf("load after the changes: %v, %v", h, err)
	}
	fresh, err := db.RestoreOrders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Deleted and re-derived restores leave the heads shorter: most
	// pages still answer.
	sameHeadPages(t, h, fresh, 40)

	// Not counted again, the heads answer where the orders surely hold
	// more restores than a count shows.
	func() {
		defer func(n int64) { orders.HeadsRecount = n }(orders.HeadsRecount)
		orders.HeadsRecount = 1000
		h, err := db.loadOrderHeads(ctx)
		if err != nil || h == nil || h.Lost() == 0 {
			t.Fatalf("load, not counted again: %v, %v", h, err)
		}
		sameHeadPages(t, h, fresh, 40)
		if f := (store.RestoreFilter{Sort: "at", Limit: 100}); h.Answers(f, 0) || h.Answers(f, 50000) {
			t.Error("heads not counted again answer an exact count")
		}
	}()

	// The same pages through Restores, rows and all, with the heads and
	// without them.
	heads := func(context.Context) (store.OrderHeads, error) { return h, nil }
	byOrders := func(context.Context) (store.OrderedPages, error) { return fresh, nil }
	for _, f := range headFilters() {
		got, err := db.Restores(ctx, store.RestoreQuery{Filter: f, CountCap: 10000, Orders: byOrders, Heads: heads})
		if err != nil {
			t.Fatal(err)
		}
		want, err := db.Restores(ctx, store.RestoreQuery{Filter: f, CountCap: 10000, Orders: byOrders})
		if err != nil {
			t.Fatal(err)
		}
		if got.Total != want.Total || got.Exact != want.Exact || len(got.Restores) != len(want.Restores) {
			t.Fatalf("%+v: %d restores of %d with the heads, %d of %d without", f, len(got.Restores), got.Total, len(want.Restores), want.Total)
		}
		for i := range got.Restores {
			if got.Restores[i].ID != want.Restores[i].ID {
				t.Fatalf("%+v: row %d is restore %d with the heads, %d without", f, i, got.Restores[i].ID, want.Restores[i].ID)
			}
		}
	}

	// Further behind than they follow, the heads are not read.
	defer func(n int64) { orders.HeadsMaxChanges = n }(orders.HeadsMaxChanges)
	orders.HeadsMaxChanges = 100
	if h, err := db.loadOrderHeads(ctx); err != nil || h != nil {
		t.Fatalf("heads 1,090 changes behind, at most 100 read: %v, %v; want none", h, err)
	}
}

// On a warehouse smaller than a head, the heads hold every order whole:
// they answer every page with its exact count, and follow the changes.
func TestOrderHeadsWhole(t *testing.T) {
	ctx := context.Background()
	defer func(n int) { orders.HeadLen = n }(orders.HeadLen)
	orders.HeadLen = 3000
	db := benchWarehouse(t, 2000)
	o, err := db.RestoreOrders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SaveOrders(ctx, o); err != nil {
		t.Fatal(err)
	}
	benchChanges(t, db, 2000, 300, 60, 40, true)
	h, err := db.loadOrderHeads(ctx)
	if err != nil || h == nil {
		t.Fatalf("load: %v, %v", h, err)
	}
	fresh, err := db.RestoreOrders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameHeadPages(t, h, fresh, len(headFilters()))
	for _, countCap := range []int{0, 1000} {
		f := store.RestoreFilter{Sort: "duration"}
		ih, nh, _ := h.Page(f, countCap)
		io, no, _ := fresh.Page(f, countCap)
		if !h.Answers(f, countCap) || !slices.Equal(ih, io) || nh != no {
			t.Fatalf("every restore by duration, cap %d: heads %d of %d, orders %d of %d", countCap, len(ih), nh, len(io), no)
		}
	}
}

// Heads that are damaged (orders.TestHeadsRefused), or missing from a
// snapshot saved before they were kept, are not read: the orders answer.
func TestOrderHeadsRefused(t *testing.T) {
	ctx := context.Background()
	db := benchWarehouse(t, 3000)
	o, err := db.RestoreOrders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SaveOrders(ctx, o); err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.ExecContext(ctx, `UPDATE order_snapshot SET body = substr(body, 1, length(body) - 5) WHERE part = -1`); err != nil {
		t.Fatal(err)
	}
	if h, err := db.LoadOrderHeads(ctx); err != nil || h != nil {
		t.Fatalf("damaged heads: %v, %v; want none", h, err)
	}
	if _, err := db.write.ExecContext(ctx, `DELETE FROM order_snapshot WHERE part = -1`); err != nil {
		t.Fatal(err)
	}
	if h, err := db.LoadOrderHeads(ctx); err != nil || h != nil {
		t.Fatalf("no heads: %v, %v; want none", h, err)
	}
	if loaded, err := db.LoadOrders(ctx); err != nil || loaded == nil {
		t.Fatalf("the orders without heads: %v, %v", loaded, err)
	}
}
