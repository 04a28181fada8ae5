package storetest

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// contractOrders: the fleet's orders answer the restores list, a server's
// snapshot of them loads back at the same position, an update with
// nothing changed returns the same orders and one after a derivation
// holds the new restores; an aggregate kept twice under one name is kept
// once, the last.
func contractOrders(t *testing.T, db store.Warehouse) {
	ctx := context.Background()
	contractImportAll(t, db, true)
	o, err := db.UpdateOrders(ctx, nil)
	built(t, "UpdateOrders", err)
	if ids, n, exact := o.Page(store.RestoreFilter{Sort: "at"}, 0); len(ids) != 1 || n != 1 || !exact {
		t.Fatalf("the orders list %v (%d, exact %v), want the one restore", ids, n, exact)
	}
	if again, err := db.UpdateOrders(ctx, o); err != nil || again != o {
		t.Errorf("an update with nothing changed: %v, want the same orders", err)
	}
	built(t, "SaveOrders", db.SaveOrders(ctx, o))
	loaded, err := db.LoadOrders(ctx)
	built(t, "LoadOrders", err)
	if loaded == nil || loaded.OrdersSeq() != o.OrdersSeq() || loaded.Scanned() {
		t.Fatalf("LoadOrders = %v: want the snapshot saved at %d", loaded, o.OrdersSeq())
	}
	heads, err := db.LoadOrderHeads(ctx)
	built(t, "LoadOrderHeads", err)
	plain := store.RestoreFilter{Sort: "at", Limit: 100}
	if heads == nil || !heads.Answers(plain, 10000) {
		t.Fatalf("LoadOrderHeads = %v: want heads that answer the list's first page", heads)
	}
	if ids, n, exact := heads.Page(plain, 10000); len(ids) != 1 || n != 1 || !exact {
		t.Errorf("the heads list %v (%d, exact %v), want the one restore", ids, n, exact)
	}
	built(t, "ReconcileAll", db.ReconcileAll(ctx))
	h, l, _ := contractFixture()
	h.RestoreHistoryID, h.RestoreDate = 8, h.RestoreDate.Add(24*time.Hour)
	l.CompletedAt, l.FirstLSN, l.LastLSN, l.Origin.Line = l.CompletedAt.Add(24*time.Hour), "", "", 90
	im, err := db.NewImport(ctx, "test", "t2")
	if err != nil {
		t.Fatal(err)
	}
	if err := im.History(h); err != nil {
		t.Fatal(err)
	}
	if _, err := im.CommitAndReconcile(); err != nil {
		t.Fatal(err)
	}
	newer, err := db.UpdateOrders(ctx, loaded)
	if err != nil {
		t.Fatal(err)
	}
	if _, n, _ := newer.Page(store.RestoreFilter{Sort: "at"}, 0); n != 2 || newer.OrdersSeq() <= o.OrdersSeq() {
		t.Errorf("orders after a second restore: %d restores at %d (were at %d), want 2 further on", n, newer.OrdersSeq(), o.OrdersSeq())
	}
	// The heads follow the change log.
	heads, err = db.LoadOrderHeads(ctx)
	built(t, "LoadOrderHeads", err)
	if heads == nil || !heads.Answers(plain, 10000) {
		t.Fatalf("LoadOrderHeads after a second restore = %v: want heads that answer the list's first page", heads)
	}
	ih, nh, eh := heads.Page(plain, 10000)
	io, no, eo := newer.Page(plain, 10000)
	if !slices.Equal(ih, io) || nh != no || eh != eo {
		t.Errorf("after a second restore the heads list %v (%d, exact %v), the orders %v (%d, exact %v)", ih, nh, eh, io, no, eo)
	}

	for _, body := range [][]byte{{1}, {2, 3}} {
		built(t, "SaveAggregate", db.SaveAggregate(ctx, store.Aggregate{Name: "figures", Version: "v", Took: time.Second, Body: body}))
	}
	as, err := db.Aggregates(ctx)
	built(t, "Aggregates", err)
	if len(as) != 1 || as[0].Name != "figures" || !bytes.Equal(as[0].Body, []byte{2, 3}) || as[0].Took != time.Second {
		t.Errorf("Aggregates = %+v, want the last one kept", as)
	}
}
