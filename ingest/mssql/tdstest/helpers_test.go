package tdstest_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"testing"
	"time"

	_ "github.com/microsoft/go-mssqldb" // registers the "sqlserver" driver

	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
)

const (
	testUser = "user"
	testPass = "pass"
)

// startServer starts a server with the test credentials and handler h and
// returns it with a DSN for go-mssqldb; the server is closed at cleanup.
func startServer(t testing.TB, h tdstest.Handler) (*tdstest.Server, string) {
	t.Helper()
	srv := tdstest.New(tdstest.Config{
		User: testUser, Password: testPass, Handler: h,
		ServerVersion: "16.0.4135.4",
		Logf:          t.Logf,
	})
	addr, err := srv.Start()
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, dsn(testUser, testPass, addr, "")
}

// dsn builds the DSN the collector uses, plus optional extra parameters.
func dsn(user, pass, addr, extra string) string {
	u := url.URL{Scheme: "sqlserver", User: url.UserPassword(user, pass), Host: addr,
		RawQuery: "database=msdb&encrypt=disable&dial+timeout=5"}
	if extra != "" {
		u.RawQuery += "&" + extra
	}
	return u.String()
}

// openDB opens a pool on dsn that is closed at cleanup.
func openDB(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlserver", dsn)
	if err != nil {
		t.Fatalf("sql.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// ctxT is a context bounded well below the test timeout so a protocol bug
// fails one test instead of hanging the run.
func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// byQuery answers with canned result sets keyed by exact query text, the
// way the collector's tests are meant to use the server.
type byQuery map[string][]tdstest.ResultSet

func (m byQuery) Handle(_ context.Context, q tdstest.Query) ([]tdstest.ResultSet, error) {
	rs, ok := m[q.SQL]
	if !ok {
		return nil, tdstest.Error{Number: 208, Message: fmt.Sprintf("Invalid object name '%s'.", q.SQL)}
	}
	return rs, nil
}
