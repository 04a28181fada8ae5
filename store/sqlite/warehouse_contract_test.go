package sqlite_test

import (
	"testing"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// The warehouse contract (store.Warehouse), held on SQLite; store/postgres
// runs the same suite.
func TestWarehouseContract(t *testing.T) {
	storetest.Contract(t, func(tb testing.TB) store.Warehouse { return storetest.Open(tb) })
}
