package main

import (
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
)

// --db and RW_DB take a postgres:// URL: the same commands on the shared
// warehouse, its password never printed.
func TestPostgresWarehouse(t *testing.T) {
	u := pgtest.URL(t)
	out, errs, code := runMain(t, "--db", u, "token", "create", "zone-a")
	if code != 0 || !strings.Contains(out, "rwc_") {
		t.Fatalf("token create on PostgreSQL: %d, %q, %q", code, out, errs)
	}
	t.Setenv("RW_DB", u)
	out, errs, code = runMain(t, "token", "list")
	if code != 0 || !strings.Contains(out, "zone-a") {
		t.Fatalf("token list through RW_DB: %d, %q, %q", code, out, errs)
	}
	// What is not built on PostgreSQL yet says so, and nothing else.
	_, errs, code = runMain(t, "restores")
	if code != 1 || !strings.Contains(errs, "not built on PostgreSQL yet") {
		t.Errorf("restores on PostgreSQL: %d, %q; want the unsupported error", code, errs)
	}
}

// A password in the URL never reaches a message.
func TestPostgresURLPasswordNotPrinted(t *testing.T) {
	_, errs, code := runMain(t, "--db", "postgres://rw:hunter2@127.0.0.1:1/rw?sslmode=disable&connect_timeout=2", "token", "list")
	if code == 0 || strings.Contains(errs, "hunter2") {
		t.Errorf("unreachable server: %d, %q: want a failure without the password", code, errs)
	}
}
