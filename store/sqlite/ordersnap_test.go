package sqlite

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/orders"
)

// encoded is o's snapshot stream, whole.
func encoded(t *testing.T, o *RestoreOrders) []byte {
	t.Helper()
	var out []byte
	if err := o.Encode(func(b []byte) error { out = append(out, b...); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// ordersFilters are lists the orders answer: every order, both directions,
// each fleet-wide filter alone and together, pages past the first.
func ordersFilters() []store.RestoreFilter {
	day := time.UnixMilli(1735689600000 + 5000*30000)
	var fs []store.RestoreFilter
	for _, sort := range []string{"at", "duration", "throughput"} {
		for _, asc := range []bool{false, true} {
			for _, f := range []store.RestoreFilter{{}, {Kind: store.KindLog}, {Kind: store.KindDiff, Offset: 30}, {Build: "15.0.4003"},
				{Database: "DB21"}, {Source: "SRC7"}, {Source: "SRC7", Kind: store.KindFull}, {From: day, To: day.Add(24 * time.Hour)},
				{Database: "DB21", From: day}, {Offset: 7000}} {
				f.Sort, f.Asc, f.Limit = sort, asc, 50
				fs = append(fs, f)
			}
		}
	}
	return fs
}

// samePages fails the test when a and b answer any of ordersFilters
// differently.
func samePages(t *testing.T, a, b *RestoreOrders) {
	t.Helper()
	for _, f := range ordersFilters() {
		ia, na, ea := a.Page(f, 1000)
		ib, nb, eb := b.Page(f, 1000)
		if !slices.Equal(ia, ib) || na != nb || ea != eb {
			t.Fatalf("%+v: %d ids, %d (exact %v) vs %d ids, %d (exact %v)", f, len(ia), na, ea, len(ib), nb, eb)
		}
	}
	fa, la := a.Span()
	fb, lb := b.Span()
	if !fa.Equal(fb) || !la.Equal(lb) {
		t.Fatalf("span %v–%v vs %v–%v", fa, la, fb, lb)
	}
}

// The orders a server keeps are the orders it read: loaded, they encode to
// the same bytes and answer every list as the read ones; brought up to
// date from the change log, as a rebuild does.
func TestOrdersSnapshotRoundTrip(t *testing.T) {
	defer func(n int) { orders.SnapshotPart = n }(orders.SnapshotPart)
	orders.SnapshotPart = 64 << 10 // many parts, several transactions
	ctx := context.Background()
	db := benchWarehouse(t, 20000)
	if o, err := db.loadOrders(ctx); err != nil || o != nil {
		t.Fatalf("before any save: %v, %v; want none", o, err)
	}
	read, err := db.RestoreOrders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !read.Scanned() {
		t.Fatal("orders read from every restore do not say so")
	}
	if err := db.SaveOrders(ctx, read); err != nil {
		t.Fatal(err)
	}
	var parts int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM order_snapshot`).Scan(&parts); err != nil {
		t.Fatal(err)
	}
	if parts < 10 {
		t.Fatalf("%d parts of %d KiB: the test wants several", parts, orders.SnapshotPart>>10)
	}
	loaded, err := db.loadOrders(ctx)
	if err != nil || loaded == nil {
		t.Fatalf("load: %v, %v", loaded, err)
	}
	if loaded.Scanned() {
		t.Error("loaded orders say they were read from every restore")
	}
	if !bytes.Equal(encoded(t, read), encoded(t, loaded)) {
		t.Fatal("the loaded orders differ from those saved")
	}
	samePages(t, read, loaded)

	// A day's changes: the loaded orders follow them as the read ones do.
	benchChanges(t, db, 20000, 600, 150, 40, false)
	updated, err := db.updatedOrders(ctx, loaded)
	if err != nil {
		t.Fatal(err)
	}
	if updated.Scanned() || updated.OrdersSeq() == loaded.OrdersSeq() {
		t.Fatalf("the loaded orders were not updated (seq %d, scanned %v)", updated.OrdersSeq(), updated.Scanned())
	}
	fresh, err := db.RestoreOrders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	samePages(t, fresh, updated)

	// A second save replaces the first.
	if err := db.SaveOrders(ctx, updated); err != nil {
		t.Fatal(err)
	}
	var gens int
	if err := db.read.QueryRowContext(ctx, `SELECT count(DISTINCT gen) FROM order_snapshot`).Scan(&gens); err != nil {
		t.Fatal(err)
	}
	again, err := db.loadOrders(ctx)
	if err != nil || again == nil || gens != 1 || again.OrdersSeq() != updated.OrdersSeq() {
		t.Fatalf("after a second save: %d generations, loaded %v (%v)", gens, again, err)
	}
}

// A snapshot whose structure is damaged, cut short or ahead of the change
// log is not loaded (the orders are read again), and never read out of
// range. (A changed value, a time or a throughput, is not told: no row of
// the warehouse carries a checksum.)
func TestOrdersSnapshotRefused(t *testing.T) {
	defer func(n int) { orders.SnapshotPart = n }(orders.SnapshotPart)
	orders.SnapshotPart = 64 << 10
	ctx := context.Background()
	db := benchWarehouse(t, 5000)
	o, err := db.RestoreOrders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, damage string
	}{
		{"a part cut short", `UPDATE order_snapshot SET body = substr(body, 1, length(body) - 9) WHERE part = 2`},
		{"a part lost", `DELETE FROM order_snapshot WHERE part = 3`},
		{"the format mark changed", `UPDATE order_snapshot SET body = substr(body, 1, 22) || x'7f' || substr(body, 24) WHERE part = 1`},
		{"an id beyond every chunk", `UPDATE order_snapshot SET body = substr(body, 1, length(body) - 4) || x'ffffff00'
			WHERE part = (SELECT MAX(part) FROM order_snapshot)`},
		{"the header's position ahead of the log", `UPDATE order_snapshot SET body = x'feffffff0f02' WHERE part = 0`},
		{"no header", `DELETE FROM order_snapshot WHERE part = 0`},
	} {
		if err := db.SaveOrders(ctx, o); err != nil {
			t.Fatal(err)
		}
		if _, err := db.write.ExecContext(ctx, c.damage); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := db.loadOrders(ctx)
		if err != nil || got != nil {
			t.Errorf("%s: loaded %v, %v; want none", c.name, got != nil, err)
		}
	}
	// Undamaged, the same save loads.
	if err := db.SaveOrders(ctx, o); err != nil {
		t.Fatal(err)
	}
	if got, err := db.loadOrders(ctx); err != nil || got == nil {
		t.Fatalf("undamaged: %v, %v", got, err)
	}
}
