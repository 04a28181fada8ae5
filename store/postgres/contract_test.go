package postgres_test

import (
	"testing"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// The warehouse contract on PostgreSQL: the suite store/sqlite passes.
func TestWarehouseContract(t *testing.T) {
	storetest.Contract(t, func(tb testing.TB) store.Warehouse { return open(tb) })
}
