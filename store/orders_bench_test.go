package store_test

import (
	"context"
	"os"
	"testing"

	"github.com/restorewatch/restorewatch/store"
)

// BenchmarkRestoreOrders builds the fleet orders of the warehouse named by
// RW_BENCH_DB (a copy: opening it applies pending migrations), e.g. the
// dashboard benchmark's: RW_BENCH_DB=/tmp/rwbench/dashboard.db go test
// -run '^$' -bench RestoreOrders -benchtime 3x ./store/
func BenchmarkRestoreOrders(b *testing.B) {
	path := os.Getenv("RW_BENCH_DB")
	if path == "" {
		b.Skip("RW_BENCH_DB names no warehouse")
	}
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for b.Loop() {
		if _, err := db.RestoreOrders(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
