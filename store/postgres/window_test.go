package postgres_test

import (
	"context"
	"testing"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/postgres"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// pgWindows is PostgreSQL's side of the shared window tests.
var pgWindows = storetest.WindowEngine{
	Open: func(tb testing.TB) store.Warehouse { return open(tb) },
	State: func(tb testing.TB, w store.Warehouse) []string {
		tb.Helper()
		s, err := w.(*postgres.DB).DerivedState(context.Background())
		if err != nil {
			tb.Fatal(err)
		}
		return s
	},
	Windows: func(w store.Warehouse) int64 {
		n, _, _ := w.(*postgres.DB).WindowStats()
		return n
	},
}

// TestWindowEqualsWhole: random imports, late and out of order, derived
// from windows on PostgreSQL, leave what a whole derivation leaves.
func TestWindowEqualsWhole(t *testing.T) { storetest.WindowEqualsWhole(t, pgWindows) }
