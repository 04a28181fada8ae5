package tdstest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
)

func intSet(vals ...any) tdstest.ResultSet {
	rs := tdstest.ResultSet{Columns: []tdstest.Column{{Name: "n", Type: tdstest.Int}}}
	for _, v := range vals {
		rs.Rows = append(rs.Rows, []any{v})
	}
	return rs
}

func TestMultipleResultSets(t *testing.T) {
	sets := []tdstest.ResultSet{
		intSet(1, 2),
		{Columns: []tdstest.Column{{Name: "name", Type: tdstest.NVarChar}}, Rows: [][]any{{"a"}}},
		intSet(), // empty result set
		intSet(3),
	}
	_, d := startServer(t, byQuery{"multi": sets})
	rows, err := openDB(t, d).QueryContext(ctxT(t), "multi")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for set := 0; ; set++ {
		cols, _ := rows.Columns()
		for rows.Next() {
			var v any
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%d:%s=%v", set, cols[0], v))
		}
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := "0:n=1 0:n=2 1:name=a 3:n=3"; strings.Join(got, " ") != want {
		t.Errorf("got %v, want %s", got, want)
	}
}

func TestRowsAffected(t *testing.T) {
	_, d := startServer(t, byQuery{"update": {{RowsAffected: 42}}})
	res, err := openDB(t, d).ExecContext(ctxT(t), "update")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 42 {
		t.Errorf("RowsAffected = %d, %v", n, err)
	}
}

func TestHang(t *testing.T) {
	srv, d := startServer(t, byQuery{"q": {intSet(1)}})
	db := openDB(t, d)
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctxT(t)); err != nil { // open the connection before hanging
		t.Fatal(err)
	}
	srv.Hang(true)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	var n int
	err := db.QueryRowContext(ctx, "q").Scan(&n)
	elapsed := time.Since(start)
	if err == nil {
		t.Fatal("query on a hung server succeeded")
	}
	if ctx.Err() == nil {
		t.Errorf("query failed before its deadline: %v", err)
	}
	// go-mssqldb waits up to 5 s for the attention acknowledgement.
	if elapsed > 8*time.Second {
		t.Errorf("query took %v to give up", elapsed)
	}
	t.Logf("hung query returned after %v: %v", elapsed, err)

	start = time.Now()
	srv.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v with a hung connection", d)
	}
}

// TestHangNewConnection shows that a connection opened against a hung
// server is bounded by the DSN's "connection timeout", not the context.
func TestHangNewConnection(t *testing.T) {
	srv, _ := startServer(t, nil)
	srv.Hang(true)
	db := openDB(t, dsn(testUser, testPass, srv.Addr(), "connection+timeout=1"))
	start := time.Now()
	if err := db.PingContext(ctxT(t)); err == nil {
		t.Fatal("ping of a hung server succeeded")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("login against a hung server took %v", d)
	}
	srv.Hang(false)
	db2 := openDB(t, dsn(testUser, testPass, srv.Addr(), ""))
	if err := db2.PingContext(ctxT(t)); err != nil {
		t.Fatalf("after Hang(false): %v", err)
	}
}

func TestDropNext(t *testing.T) {
	srv, d := startServer(t, byQuery{"q": {intSet(7)}})
	db := openDB(t, d)
	if err := db.PingContext(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	srv.DropNext()
	var n int
	err := db.QueryRowContext(ctxT(t), "q").Scan(&n)
	if err == nil {
		t.Fatal("query on a dropped connection succeeded")
	}
	t.Logf("dropped: %v", err)
	// The pool discards the broken connection; the next query dials anew.
	if err := db.QueryRowContext(ctxT(t), "q").Scan(&n); err != nil || n != 7 {
		t.Fatalf("after drop: n=%d err=%v", n, err)
	}
	if qs := srv.Queries(); len(qs) != 3 || qs[1].SQL != "q" || qs[2].SQL != "q" {
		t.Errorf("Queries() = %+v", qs)
	}
}

// TestCancel checks attention handling: the Handler's context is
// cancelled, the client gets its context error, and the same connection
// serves the next query.
func TestCancel(t *testing.T) {
	cancelled := make(chan struct{})
	h := tdstest.HandlerFunc(func(ctx context.Context, q tdstest.Query) ([]tdstest.ResultSet, error) {
		if q.SQL == "slow" {
			<-ctx.Done()
			close(cancelled)
			return nil, ctx.Err()
		}
		return []tdstest.ResultSet{intSet(5)}, nil
	})
	_, d := startServer(t, h)
	db := openDB(t, d)
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := db.QueryContext(ctx, "slow")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("cancel took %v", d)
	}
	<-cancelled // the handler's context ends (or the test binary's -timeout reports it)
	var n int
	if err := db.QueryRowContext(ctxT(t), "fast").Scan(&n); err != nil || n != 5 {
		t.Fatalf("after cancel: n=%d err=%v", n, err)
	}
	if s := db.Stats(); s.OpenConnections != 1 {
		t.Errorf("open connections = %d, want the same single connection", s.OpenConnections)
	}
}

func TestTransaction(t *testing.T) {
	srv, d := startServer(t, byQuery{"q": {intSet(1)}})
	db := openDB(t, d)
	for _, commit := range []bool{true, false} {
		tx, err := db.BeginTx(ctxT(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := tx.QueryRowContext(ctxT(t), "q").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var kinds []string
	for _, q := range srv.Queries() {
		kinds = append(kinds, q.SQL)
	}
	want := "BEGIN TRANSACTION,q,COMMIT TRANSACTION,BEGIN TRANSACTION,q,ROLLBACK TRANSACTION"
	if strings.Join(kinds, ",") != want {
		t.Errorf("got %v", kinds)
	}
}

// TestLargeMessages sends a request and a reply that span many packets.
func TestLargeMessages(t *testing.T) {
	h := tdstest.HandlerFunc(func(_ context.Context, q tdstest.Query) ([]tdstest.ResultSet, error) {
		s := q.Params[0].Value.(string)
		rs := tdstest.ResultSet{Columns: []tdstest.Column{{Name: "i", Type: tdstest.Int}, {Name: "s", Type: tdstest.NVarChar, Size: 100}}}
		for i := range 3000 {
			rs.Rows = append(rs.Rows, []any{i, s[:100]})
		}
		return []tdstest.ResultSet{rs, {Columns: []tdstest.Column{{Name: "all", Type: tdstest.NVarChar, Size: tdstest.Max}}, Rows: [][]any{{s}}}}, nil
	})
	_, d := startServer(t, h)
	big := strings.Repeat("0123456789", 30000)
	rows, err := openDB(t, d).QueryContext(ctxT(t), "select @p1", big)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	count := 0
	for rows.Next() {
		var i int
		var s string
		if err := rows.Scan(&i, &s); err != nil {
			t.Fatal(err)
		}
		if i != count || s != big[:100] {
			t.Fatalf("row %d = %d %q", count, i, s)
		}
		count++
	}
	if count != 3000 || !rows.NextResultSet() || !rows.Next() {
		t.Fatalf("rows = %d, err %v", count, rows.Err())
	}
	var all string
	if err := rows.Scan(&all); err != nil || all != big {
		t.Fatalf("echo of %d chars: got %d chars, err %v", len(big), len(all), err)
	}
}

func TestConcurrentClients(t *testing.T) {
	h := tdstest.HandlerFunc(func(_ context.Context, q tdstest.Query) ([]tdstest.ResultSet, error) {
		return []tdstest.ResultSet{intSet(q.Params[0].Value.(int64) * 2)}, nil
	})
	_, d := startServer(t, h)
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for g := range 10 {
		wg.Go(func() {
			db := openDB(t, d) // one pool per goroutine: 10 clients
			for i := range 20 {
				want := int64(g*1000 + i)
				var got int64
				if err := db.QueryRowContext(ctxT(t), "select @p1*2", want).Scan(&got); err != nil {
					errs <- err
					return
				}
				if got != want*2 {
					errs <- fmt.Errorf("client %d: got %d, want %d", g, got, want*2)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestBadServerVersion(t *testing.T) {
	srv := tdstest.New(tdstest.Config{ServerVersion: "sixteen"})
	defer srv.Close()
	if _, err := srv.Start(); err == nil {
		t.Fatal("Start accepted a malformed ServerVersion")
	}
}

func TestCloseWithBlockedHandler(t *testing.T) {
	started := make(chan struct{})
	h := tdstest.HandlerFunc(func(ctx context.Context, q tdstest.Query) ([]tdstest.ResultSet, error) {
		close(started)
		<-ctx.Done() // a well-behaved handler returns when its context ends
		return nil, ctx.Err()
	})
	srv, d := startServer(t, h)
	db := openDB(t, d)
	errc := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(context.Background(), "block")
		errc <- err
	}()
	<-started
	start := time.Now()
	srv.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v", d)
	}
	if err := <-errc; err == nil {
		t.Error("query interrupted by Close succeeded")
	}
}

// TestEncryptRequired: a server without a certificate (Config.TLS unset)
// has no TLS, and a client that insists on encryption gets a clear driver
// error instead of a hang.
func TestEncryptRequired(t *testing.T) {
	srv, _ := startServer(t, nil)
	d := strings.Replace(dsn(testUser, testPass, srv.Addr(), ""), "encrypt=disable", "encrypt=true", 1)
	err := openDB(t, d).PingContext(ctxT(t))
	if err == nil || !strings.Contains(err.Error(), "does not support encryption") {
		t.Fatalf("got %v, want the driver's 'server does not support encryption'", err)
	}
}
