package web_test

import (
	"context"
	"errors"
	"testing"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/postgres"
	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
	"github.com/restorewatch/restorewatch/store/sqlite"
	"github.com/restorewatch/restorewatch/store/storetest"
	"github.com/restorewatch/restorewatch/web"
)

// warehouse is a test's warehouse on the engine RW_TEST_ENGINE names
// (storetest.EnvEngine): what the dashboard reads and the rest of the
// contract the tests fill it through.
type warehouse interface {
	store.Warehouse
	web.Store
}

// Both engines serve the dashboard.
var (
	_ warehouse = (*sqlite.DB)(nil)
	_ warehouse = (*postgres.DB)(nil)
)

// emptyDB opens a new, empty warehouse on the test engine.
func emptyDB(t testing.TB) warehouse {
	t.Helper()
	return storetest.OpenEngine(t).(warehouse)
}

// The demo on PostgreSQL: built once into a database nothing stays
// connected to (the source of every copy), and one copy the read-only
// tests share.
var pgDemo, pgShared string

// demoOnPostgres returns the URL of the shared copy of the demo, building
// the demo first.
func demoOnPostgres(t testing.TB) string {
	t.Helper()
	demoOnce.Do(func() {
		demoErr = errors.New("the demo on PostgreSQL was not built: see the first test that asked for it")
		demo := pgtest.Kept(t, "")
		if demoErr = buildDemoAt(demo); demoErr == nil {
			pgDemo, pgShared = demo, pgtest.Kept(t, demo)
		}
	})
	if demoErr != nil {
		t.Fatal(demoErr)
	}
	return pgShared
}

// buildDemoAt builds the demo into the PostgreSQL database at u and closes
// it.
func buildDemoAt(u string) error {
	db, err := postgres.Open(context.Background(), u)
	if err != nil {
		return err
	}
	defer db.Close()
	return fillDemo(demoDir, db)
}

// openPostgres opens the database at u, closed when t ends.
func openPostgres(t testing.TB, u string) warehouse {
	t.Helper()
	return storetest.OpenLocation(t, u).(warehouse)
}
