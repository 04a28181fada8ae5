package sqlite_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

// BenchmarkRestoreOrders builds the fleet orders of the warehouse named by
// RW_BENCH_DB (a copy: opening it applies pending migrations), e.g. the
// dashboard benchmark's: RW_BENCH_DB=/tmp/rwbench/dashboard.db go test
// -run '^$' -bench RestoreOrders -benchtime 3x ./store/
func BenchmarkRestoreOrders(b *testing.B) {
	ctx := context.Background()
	db := benchWarehouse(b)
	for b.Loop() {
		if _, err := db.RestoreOrders(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOrdersPage pages the fleet orders of the warehouse named by
// RW_BENCH_DB as the restores list does: the newest page, a page filtered
// by database and kind that reads the whole order, the newest day of a
// database, and the overview's throughput trend.
func BenchmarkOrdersPage(b *testing.B) {
	ctx := context.Background()
	db := benchWarehouse(b)
	o, err := db.RestoreOrders(ctx)
	if err != nil {
		b.Fatal(err)
	}
	first, last := o.Span()
	for _, c := range []struct {
		name string
		f    store.RestoreFilter
	}{
		{"newest", store.RestoreFilter{Sort: "at", Limit: 50}},
		{"database-kind", store.RestoreFilter{Sort: "duration", Database: "DB7", Kind: store.KindDiff, Limit: 50}},
		{"build-offset", store.RestoreFilter{Sort: "throughput", Build: "15.0.4001", Limit: 50, Offset: 5000}},
		// The newest day of one database, counted: the positions of the
		// day in time order, not the whole order.
		{"day-database", store.RestoreFilter{Sort: "at", Database: "DB7", From: last.Add(-24 * time.Hour), To: last, Limit: 50}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				o.Page(c.f, 0)
			}
		})
	}
	b.Run("trend", func(b *testing.B) {
		for b.Loop() {
			o.Throughputs(store.KindFull, first, last)
		}
	})
}

// benchWarehouse opens the warehouse RW_BENCH_DB names (a copy: opening it
// applies pending migrations), closed when the benchmark ends, or skips.
func benchWarehouse(b *testing.B) *sqlite.DB {
	path := os.Getenv("RW_BENCH_DB")
	if path == "" {
		b.Skip("RW_BENCH_DB names no warehouse")
	}
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}
