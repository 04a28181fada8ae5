package tdstest_test

import (
	"context"
	"database/sql"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-sql/civil"
	mssql "github.com/microsoft/go-mssqldb"

	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
)

// asMSSQL is errors.As for the driver's error type.
func asMSSQL(err error, me *mssql.Error) bool { return errors.As(err, me) }

// recorder answers every query with an empty result and keeps it.
type recorder struct {
	mu sync.Mutex
	qs []tdstest.Query
}

func (r *recorder) Handle(_ context.Context, q tdstest.Query) ([]tdstest.ResultSet, error) {
	r.mu.Lock()
	r.qs = append(r.qs, q)
	r.mu.Unlock()
	return []tdstest.ResultSet{{Columns: []tdstest.Column{{Name: "ok", Type: tdstest.Int}}, Rows: [][]any{{1}}}}, nil
}

func (r *recorder) last(t *testing.T) tdstest.Query {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.qs) == 0 {
		t.Fatal("handler saw no query")
	}
	return r.qs[len(r.qs)-1]
}

func TestPing(t *testing.T) {
	srv, d := startServer(t, nil)
	if err := openDB(t, d).PingContext(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	qs := srv.Queries()
	if len(qs) != 1 || qs[0].SQL != "select 1;" || qs[0].Kind != tdstest.KindBatch ||
		qs[0].User != testUser || qs[0].Database != "msdb" {
		t.Fatalf("Queries() = %+v", qs)
	}
}

func TestExecuteSQLParams(t *testing.T) {
	rec := &recorder{}
	_, d := startServer(t, rec)
	db := openDB(t, d)
	since := time.Date(2024, 3, 18, 9, 30, 5, 123_456_700, time.UTC)
	local := time.Date(2024, 3, 18, 11, 30, 5, 0, time.FixedZone("CEST", 2*3600))
	long := strings.Repeat("x€", 2500) // 5000 characters: sent as PLP
	args := []any{
		since, int64(39000000115200001), "msdb", "", long, nil, true, 2.5, []byte{1, 2, 3},
		local, int32(7), sql.Named("db", "ReportServer"),
		civil.DateTime{Date: civil.Date{Year: 2024, Month: 3, Day: 18}, Time: civil.Time{Hour: 1, Minute: 2, Second: 3}},
		mssql.VarChar("latin"), mssql.DateTime1(since), sql.NullInt64{}, sql.NullString{},
		mssql.UniqueIdentifier{0x6F, 0x96, 0x19, 0xFF, 0x8B, 0x86, 0xD0, 0x11, 0xB4, 0x2D, 0x00, 0xC0, 0x4F, 0xC9, 0x64, 0xFF},
	}
	const stmt = "SELECT 1 FROM msdb.dbo.restorehistory WHERE restore_date > @p1"
	var ok int
	if err := db.QueryRowContext(ctxT(t), stmt, args...).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	q := rec.last(t)
	if q.Kind != tdstest.KindExecuteSQL || q.SQL != stmt || q.User != testUser || q.Database != "msdb" {
		t.Errorf("query = %v %q user %q db %q", q.Kind, q.SQL, q.User, q.Database)
	}
	if !strings.HasPrefix(q.Decl, "@p1 datetimeoffset(7),@p2 bigint,@p3 nvarchar(4),@p4 nvarchar(max)") {
		t.Errorf("Decl = %q", q.Decl)
	}
	want := []tdstest.Param{
		{Name: "@p1", Value: since},
		{Name: "@p2", Value: int64(39000000115200001)},
		{Name: "@p3", Value: "msdb"},
		{Name: "@p4", Value: ""},
		{Name: "@p5", Value: long},
		{Name: "@p6", Value: nil},
		{Name: "@p7", Value: true},
		{Name: "@p8", Value: 2.5},
		{Name: "@p9", Value: []byte{1, 2, 3}},
		{Name: "@p10", Value: local},
		{Name: "@p11", Value: int64(7)},
		{Name: "@db", Value: "ReportServer"},
		{Name: "@p13", Value: time.Date(2024, 3, 18, 1, 2, 3, 0, time.UTC)},
		{Name: "@p14", Value: "latin"},
		{Name: "@p15", Value: time.Date(2024, 3, 18, 9, 30, 5, 123_000_000, time.UTC)},
		{Name: "@p16", Value: nil},
		{Name: "@p17", Value: nil},
		{Name: "@p18", Value: "6F9619FF-8B86-D011-B42D-00C04FC964FF"},
	}
	if len(q.Params) != len(want) {
		t.Fatalf("got %d params, want %d: %+v", len(q.Params), len(want), q.Params)
	}
	for i, w := range want {
		g := q.Params[i]
		same := reflect.DeepEqual(g, w)
		if gt, ok := g.Value.(time.Time); ok {
			wt, _ := w.Value.(time.Time)
			same = g.Name == w.Name && gt.Equal(wt)
		}
		if !same {
			t.Errorf("param %d = %q %#v, want %q %#v", i+1, g.Name, g.Value, w.Name, w.Value)
		}
	}
	// A time.Time with an offset arrives as datetimeoffset in that offset.
	if _, off := q.Params[9].Value.(time.Time).Zone(); off != 7200 {
		t.Errorf("datetimeoffset param offset = %d, want 7200", off)
	}
}

func TestProcByName(t *testing.T) {
	rec := &recorder{}
	_, d := startServer(t, rec)
	db := openDB(t, d)
	if _, err := db.ExecContext(ctxT(t), "sp_who"); err != nil {
		t.Fatal(err)
	}
	if q := rec.last(t); q.Kind != tdstest.KindProc || q.SQL != "sp_who" || len(q.Params) != 0 {
		t.Errorf("got %+v", q)
	}
	if _, err := db.ExecContext(ctxT(t), "msdb.dbo.sp_help_job", sql.Named("job_name", "nightly"), 5); err != nil {
		t.Fatal(err)
	}
	q := rec.last(t)
	want := []tdstest.Param{{Name: "@job_name", Value: "nightly"}, {Name: "", Value: int64(5)}}
	if q.Kind != tdstest.KindProc || q.SQL != "msdb.dbo.sp_help_job" || !reflect.DeepEqual(q.Params, want) {
		t.Errorf("got %+v", q)
	}
}

func TestHandlerError(t *testing.T) {
	h := tdstest.HandlerFunc(func(_ context.Context, q tdstest.Query) ([]tdstest.ResultSet, error) {
		switch q.SQL {
		case "sql error":
			return nil, &tdstest.Error{Number: 229, State: 5, Class: 14,
				Message: "The SELECT permission was denied on the object 'restorehistory'."}
		case "after rows":
			return []tdstest.ResultSet{{Columns: []tdstest.Column{{Name: "n", Type: tdstest.Int}}, Rows: [][]any{{1}}}},
				tdstest.Error{Number: 1205, Message: "deadlock victim"}
		}
		return nil, errors.New("plain failure")
	})
	_, d := startServer(t, h)
	db := openDB(t, d)

	var me mssql.Error
	_, err := db.QueryContext(ctxT(t), "sql error")
	if !asMSSQL(err, &me) || me.Number != 229 || me.State != 5 || me.Class != 14 ||
		me.Message != "The SELECT permission was denied on the object 'restorehistory'." {
		t.Errorf("got %#v", err)
	}
	_, err = db.ExecContext(ctxT(t), "other", 1)
	if !asMSSQL(err, &me) || me.Number != 50000 || me.Class != 16 || me.Message != "plain failure" {
		t.Errorf("got %#v", err)
	}
	// Rows first, then the error: it surfaces once the rows are read.
	rows, err := db.QueryContext(ctxT(t), "after rows")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	if err := rows.Err(); !asMSSQL(err, &me) || me.Number != 1205 {
		t.Errorf("rows.Err() = %v, want error 1205", err)
	}
	rows.Close()
	// The connection is still usable after errors.
	if err := db.PingContext(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

func TestWrongPassword(t *testing.T) {
	srv, _ := startServer(t, nil)
	for _, cred := range [][2]string{{testUser, "wrong"}, {"sa", testPass}} {
		db := openDB(t, dsn(cred[0], cred[1], srv.Addr(), ""))
		err := db.PingContext(ctxT(t))
		var me mssql.Error
		if !asMSSQL(err, &me) || me.Number != 18456 || !strings.Contains(me.Message, "Login failed for user '"+cred[0]+"'.") {
			t.Errorf("%v: got %v, want login error 18456", cred, err)
		}
	}
	// The right credentials still work on the same server.
	if err := openDB(t, dsn(testUser, testPass, srv.Addr(), "")).PingContext(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}
