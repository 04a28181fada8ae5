package tdstest_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"math/big"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
)

type captured struct {
	typ  byte
	body []byte
}

// captureMessages runs a real go-mssqldb session (login, ping, batches,
// sp_executesql with every parameter type, a proc call, a transaction)
// against a server and returns every message the driver sent. These are
// the fuzz seeds: real bytes, not hand-made ones.
func captureMessages(tb testing.TB) []captured {
	tb.Helper()
	var mu sync.Mutex
	var msgs []captured
	srv := tdstest.New(tdstest.Config{User: testUser, Password: testPass,
		Handler: tdstest.HandlerFunc(func(context.Context, tdstest.Query) ([]tdstest.ResultSet, error) { return nil, nil })})
	srv.SetCapture(func(typ byte, body []byte) {
		mu.Lock()
		msgs = append(msgs, captured{typ, bytes.Clone(body)})
		mu.Unlock()
	})
	addr, err := srv.Start()
	if err != nil {
		tb.Fatal(err)
	}
	defer srv.Close()
	db, err := sql.Open("sqlserver", dsn(testUser, testPass, addr, ""))
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	run := func(q string, args ...any) {
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
	}
	run("select name from sys.databases")
	run("select @p1", time.Date(2024, 3, 18, 9, 30, 5, 123_456_700, time.FixedZone("", 3600)))
	run("select @p1, @p2, @p3, @p4, @p5", int64(-5), "short", "", strings.Repeat("ü", 5000), nil)
	run("select @p1, @p2, @p3, @p4", true, 1.25, []byte{0, 1, 2}, mssql.VarChar("latin"))
	run("select @p1, @p2, @p3", mssql.DateTime1(time.Date(2024, 3, 18, 9, 30, 5, 0, time.UTC)),
		mssql.UniqueIdentifier{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, int32(7))
	run("select @p1, @p2, @p3", sql.NullTime{}, sql.NullBool{}, mssql.NVarCharMax("max"))
	run("sp_who", sql.Named("loginame", "sa"))
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return msgs
}

// checkParamValue fails if a decoded value is not one of the documented
// Go types.
func checkParamValue(t *testing.T, v any) {
	switch v.(type) {
	case nil, int64, string, time.Time, bool, []byte, float64:
	default:
		t.Fatalf("decoded value of undocumented type %T", v)
	}
}

func FuzzDecodeRPC(f *testing.F) {
	n := 0
	for _, m := range captureMessages(f) {
		if m.typ == tdstest.PktRPC {
			f.Add(m.body)
			n++
		}
	}
	if n < 5 {
		f.Fatalf("captured only %d RPC messages", n)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := tdstest.DecodeRPC(b)
		if err != nil {
			return
		}
		if q.Kind != tdstest.KindExecuteSQL && q.Kind != tdstest.KindProc {
			t.Fatalf("kind %v", q.Kind)
		}
		for _, p := range q.Params {
			checkParamValue(t, p.Value)
		}
	})
}

func FuzzDecodeLogin7(f *testing.F) {
	for _, m := range captureMessages(f) {
		if m.typ == tdstest.PktLogin7 {
			f.Add(m.body)
			user, pass, db, err := tdstest.DecodeLogin7(m.body)
			if err != nil || user != testUser || pass != testPass || db != "msdb" {
				f.Fatalf("captured LOGIN7 decodes to %q %q %q %v", user, pass, db, err)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tdstest.DecodeLogin7(b) // must not panic
	})
}

// FuzzMessage feeds raw bytes through packet reassembly and then the
// decoder for the message type, as a connection does.
func FuzzMessage(f *testing.F) {
	for _, m := range captureMessages(f) {
		f.Add(frame(m.typ, m.body, 512))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := tdstest.ReadMessage(bytes.NewReader(b))
		if err != nil {
			return
		}
		if len(m.Body) > len(b) {
			t.Fatalf("message of %d bytes from %d input bytes", len(m.Body), len(b))
		}
		switch m.Type {
		case tdstest.PktBatch:
			tdstest.DecodeBatch(m.Body)
		case tdstest.PktRPC:
			if q, err := tdstest.DecodeRPC(m.Body); err == nil {
				for _, p := range q.Params {
					checkParamValue(t, p.Value)
				}
			}
		case tdstest.PktTransMgr:
			tdstest.DecodeTransMgr(m.Body)
		case tdstest.PktLogin7:
			tdstest.DecodeLogin7(m.Body)
		case tdstest.PktPrelogin:
			tdstest.DecodePrelogin(m.Body)
		}
	})
}

// frame splits body into TDS packets of at most size bytes.
func frame(typ byte, body []byte, size int) []byte {
	var out []byte
	for id := 1; ; id++ {
		n := min(len(body), size-8)
		status := byte(0)
		if n == len(body) {
			status = 1
		}
		out = append(out, typ, status)
		out = binary.BigEndian.AppendUint16(out, uint16(n+8))
		out = append(out, 0, 0, byte(id), 0)
		out = append(out, body[:n]...)
		body = body[n:]
		if status == 1 {
			return out
		}
	}
}

// TestDecodeRPCCrafted covers parameter encodings go-mssqldb does not
// send by itself (fixed-length types, numeric, money, time, xml) so the
// decoder's answers are checked, not only its survival under fuzzing.
func TestDecodeRPCCrafted(t *testing.T) {
	rpc := func(params ...[]byte) []byte {
		b := []byte{4, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 0}                   // ALL_HEADERS, sp_executesql, flags
		b = append(b, 0, 0, 0xE7, 0x40, 0x1F, 0, 0, 0, 0, 0, 2, 0, 'q', 0) // @stmt N'q'
		b = append(b, 0, 0, 0xE7, 0x40, 0x1F, 0, 0, 0, 0, 0, 0, 0)         // @params N''
		for _, p := range params {
			b = append(append(b, 0, 0), p...) // unnamed, status 0
		}
		return b
	}
	num := func(prec, scale byte, neg bool, mag int64) []byte {
		sign := byte(1)
		if neg {
			sign = 0
		}
		b := []byte{0x6C, 17, prec, scale, 17, sign}
		return append(b, new(big.Int).SetInt64(mag).FillBytes(make([]byte, 16))...)
	}
	reverse := func(b []byte) []byte { // FillBytes is big-endian, the wire is little-endian
		for i, j := 6, len(b)-1; i < j; i, j = i+1, j-1 {
			b[i], b[j] = b[j], b[i]
		}
		return b
	}
	cases := []struct {
		param []byte
		want  any
	}{
		{[]byte{0x30, 200}, int64(200)},
		{[]byte{0x34, 0xFE, 0xFF}, int64(-2)},
		{[]byte{0x38, 1, 0, 0, 0}, int64(1)},
		{[]byte{0x32, 1}, true},
		{reverse(num(25, 0, false, 39000000115200001)), "39000000115200001"},
		{reverse(num(10, 2, true, 1250)), "-12.50"},
		{[]byte{0x6E, 8, 8, 0, 0, 0, 0, 0x10, 0x27, 0, 0}, "1.0000"},
		{[]byte{0x29, 7, 5, 0, 0, 0, 0, 0}, time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{[]byte{0x28, 3, 0, 0, 0}, time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{[]byte{0x26, 4, 0}, nil},
		{[]byte{0xF1, 0, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 2, 0, 0, 0, 'x', 0, 0, 0, 0, 0}, "x"},
	}
	for i, c := range cases {
		q, err := tdstest.DecodeRPC(rpc(c.param))
		if err != nil {
			t.Errorf("case %d: %v", i, err)
			continue
		}
		got := q.Params[len(q.Params)-1].Value
		if gt, ok := got.(time.Time); ok {
			if wt, ok := c.want.(time.Time); !ok || !gt.Equal(wt) {
				t.Errorf("case %d: got %v, want %v", i, got, c.want)
			}
		} else if got != c.want {
			t.Errorf("case %d: got %#v, want %#v", i, got, c.want)
		}
	}
	for i, bad := range [][]byte{
		{0x26, 4, 3, 1, 2, 3},                // intn of 3 bytes
		{0x2A, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0}, // scale 8
		{0x6C, 17, 0, 0, 1, 1},               // precision 0
		{0x62, 0, 0, 0, 0},                   // sql_variant
		{0xE7, 0xFF, 0xFF, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 'x', 0, 0, 0, 0}, // PLP length mismatch
	} {
		if _, err := tdstest.DecodeRPC(rpc(bad)); err == nil {
			t.Errorf("bad case %d decoded without error", i)
		}
	}
}

// FuzzDecodePrelogin is seeded with the PRELOGIN messages go-mssqldb sends
// for each encrypt setting, captured by a server with a certificate (the
// strict one is read inside TLS).
func FuzzDecodePrelogin(f *testing.F) {
	ca, err := tdstest.NewCA("fuzz CA")
	if err != nil {
		f.Fatal(err)
	}
	tc, err := ca.ServerTLS("127.0.0.1")
	if err != nil {
		f.Fatal(err)
	}
	caFile := f.TempDir() + "/ca.pem"
	if err := os.WriteFile(caFile, ca.PEM, 0o600); err != nil {
		f.Fatal(err)
	}
	var mu sync.Mutex
	var seeds [][]byte
	srv := tdstest.New(tdstest.Config{User: testUser, Password: testPass, TLS: tc})
	srv.SetCapture(func(typ byte, body []byte) {
		if typ == tdstest.PktPrelogin {
			mu.Lock()
			seeds = append(seeds, bytes.Clone(body))
			mu.Unlock()
		}
	})
	addr, err := srv.Start()
	if err != nil {
		f.Fatal(err)
	}
	defer srv.Close()
	for _, enc := range []string{"strict", "true", "false", "disable"} {
		db, err := sql.Open("sqlserver", tlsDSN(addr, url.Values{"encrypt": {enc}, "certificate": {caFile}}))
		if err != nil {
			f.Fatal(err)
		}
		if err := db.Ping(); err != nil {
			f.Fatalf("encrypt=%s: %v", enc, err)
		}
		db.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seeds) != 4 {
		f.Fatalf("captured %d PRELOGIN messages, want 4", len(seeds))
	}
	for _, b := range seeds {
		opts, err := tdstest.DecodePrelogin(b)
		if err != nil || len(opts[1]) != 1 {
			f.Fatalf("a captured PRELOGIN decodes to %v, %v", opts, err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		opts, err := tdstest.DecodePrelogin(b)
		if err != nil {
			return
		}
		if len(opts[1]) != 1 {
			t.Fatalf("accepted without a one-byte ENCRYPTION option: %v", opts)
		}
		for tok, v := range opts {
			if len(v) > len(b) {
				t.Fatalf("option %#x of %d bytes from %d input bytes", tok, len(v), len(b))
			}
		}
	})
}
