package tdstest_test

import (
	"bytes"
	"math/big"
	"strings"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
)

// allTypes is a result set with one column of every supported type, one
// row of values and one row of NULLs.
var allTypesCols = []tdstest.Column{
	{Name: "i", Type: tdstest.Int},
	{Name: "bi", Type: tdstest.BigInt},
	{Name: "ti", Type: tdstest.TinyInt},
	{Name: "si", Type: tdstest.SmallInt},
	{Name: "b", Type: tdstest.Bit},
	{Name: "f", Type: tdstest.Float},
	{Name: "r", Type: tdstest.Real},
	{Name: "dt", Type: tdstest.DateTime},
	{Name: "dt2", Type: tdstest.DateTime2},
	{Name: "dto", Type: tdstest.DateTimeOffset},
	{Name: "d", Type: tdstest.Date},
	{Name: "n20", Type: tdstest.Numeric, Precision: 20},
	{Name: "n25", Type: tdstest.Numeric, Precision: 25},
	{Name: "n25big", Type: tdstest.Numeric, Precision: 25},
	{Name: "n10_2", Type: tdstest.Numeric, Precision: 10, Scale: 2},
	{Name: "c", Type: tdstest.Char, Size: 1},
	{Name: "vc", Type: tdstest.VarChar, Size: 20},
	{Name: "nv", Type: tdstest.NVarChar, Size: 128},
	{Name: "nvmax", Type: tdstest.NVarChar, Size: tdstest.Max},
	{Name: "g", Type: tdstest.UniqueIdentifier},
	{Name: "vb", Type: tdstest.VarBinary, Size: 16},
	{Name: "vbmax", Type: tdstest.VarBinary, Size: tdstest.Max},
	{Name: "c3", Type: tdstest.Char, Size: 3},
}

var (
	plus2      = time.FixedZone("", 2*3600)
	dtIn       = time.Date(2024, 3, 18, 9, 30, 5, 123_000_000, time.UTC)
	dt2In      = time.Date(2024, 3, 18, 9, 30, 5, 123_456_789, time.UTC)
	dtoIn      = time.Date(2024, 3, 18, 11, 30, 5, 123_456_700, plus2)
	bigNumeric = "1234567890123456789012345" // 25 digits, beyond int64
	longText   = strings.Repeat("héllo wörld 🚀 ", 700)
	guidText   = "6F9619FF-8B86-D011-B42D-00C04FC964FF"
)

var allTypesRow = []any{
	int32(-2147483648), int64(9223372036854775807), uint8(255), int16(-32768), true,
	3.141592653589793, float32(1.5), dtIn, dt2In, dtoIn,
	time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
	int64(39000000115200001), big.NewInt(39000000115200001), bigNumeric, "-12.5",
	"D", "café €", "restorewatch ✓", longText, strings.ToLower(guidText),
	[]byte{0, 1, 2, 0xFF}, bytes.Repeat([]byte{0xAB}, 9000), "L",
}

func TestAllTypes(t *testing.T) {
	nulls := make([]any, len(allTypesCols))
	_, d := startServer(t, byQuery{"select types": {{Columns: allTypesCols, Rows: [][]any{allTypesRow, nulls}}}})
	db := openDB(t, d)
	rows, err := db.QueryContext(ctxT(t), "select types")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()

	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{"INT", "BIGINT", "TINYINT", "SMALLINT", "BIT", "FLOAT", "REAL", "DATETIME",
		"DATETIME2", "DATETIMEOFFSET", "DATE", "DECIMAL", "DECIMAL", "DECIMAL", "DECIMAL", "CHAR",
		"VARCHAR", "NVARCHAR", "NVARCHAR", "UNIQUEIDENTIFIER", "VARBINARY", "VARBINARY", "CHAR"}
	for i, ct := range cts {
		if ct.Name() != allTypesCols[i].Name || ct.DatabaseTypeName() != wantNames[i] {
			t.Errorf("column %d: %s %s, want %s %s", i, ct.Name(), ct.DatabaseTypeName(), allTypesCols[i].Name, wantNames[i])
		}
	}
	if p, s, ok := cts[14].DecimalSize(); !ok || p != 10 || s != 2 {
		t.Errorf("numeric(10,2) DecimalSize = %d,%d,%v", p, s, ok)
	}
	if n, ok := cts[17].Length(); !ok || n != 128 {
		t.Errorf("nvarchar(128) Length = %d,%v", n, ok)
	}

	var (
		i, bi, ti, si     int64
		b                 bool
		f, r              float64
		dt, dt2, dto, day time.Time
		n20               int64
		n25               string
		n25big            []byte
		n10               string
		c, vc, nv, nvmax  string
		g                 mssql.UniqueIdentifier
		vb, vbmax         []byte
		c3                string
	)
	if !rows.Next() {
		t.Fatalf("no first row: %v", rows.Err())
	}
	if err := rows.Scan(&i, &bi, &ti, &si, &b, &f, &r, &dt, &dt2, &dto, &day, &n20, &n25, &n25big, &n10,
		&c, &vc, &nv, &nvmax, &g, &vb, &vbmax, &c3); err != nil {
		t.Fatal(err)
	}
	check := func(name string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("int", i, int64(-2147483648))
	check("bigint", bi, int64(9223372036854775807))
	check("tinyint", ti, int64(255))
	check("smallint", si, int64(-32768))
	check("bit", b, true)
	check("float", f, 3.141592653589793)
	check("real", r, 1.5)
	// datetime keeps .123 (37 ticks of 1/300 s = 123.33 ms, shown as .123).
	check("datetime", dt.Format(time.RFC3339Nano), "2024-03-18T09:30:05.123Z")
	// datetime2(7) rounds to 100 ns: .123456789 -> .1234568.
	check("datetime2", dt2.Format(time.RFC3339Nano), "2024-03-18T09:30:05.1234568Z")
	check("datetimeoffset instant", dto.Equal(dtoIn), true)
	_, off := dto.Zone()
	check("datetimeoffset offset", off, 7200)
	check("date", day.Format(time.DateOnly), "2024-02-29")
	check("numeric(20,0)", n20, int64(39000000115200001))
	check("numeric(25,0) as string", n25, "39000000115200001")
	check("numeric(25,0) 25 digits", string(n25big), bigNumeric)
	check("numeric(10,2)", n10, "-12.50")
	check("char(1)", c, "D")
	check("varchar", vc, "café €")
	check("nvarchar", nv, "restorewatch ✓")
	check("nvarchar(max)", nvmax == longText, true)
	check("uniqueidentifier", g.String(), guidText)
	check("varbinary", string(vb), string([]byte{0, 1, 2, 0xFF}))
	check("varbinary(max)", bytes.Equal(vbmax, allTypesRow[21].([]byte)), true)
	check("char(3) padded", c3, "L  ")

	if !rows.Next() {
		t.Fatalf("no NULL row: %v", rows.Err())
	}
	vals := make([]any, len(allTypesCols))
	ptrs := make([]any, len(vals))
	for k := range vals {
		vals[k] = "not scanned"
		ptrs[k] = &vals[k]
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	for k, v := range vals {
		if v != nil {
			t.Errorf("column %s: got %v, want NULL", allTypesCols[k].Name, v)
		}
	}
	if rows.Next() {
		t.Error("unexpected third row")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestDateTimeRounding checks that legacy datetime values come back as
// SQL Server would store them: rounded to 1/300 s (.000/.003/.007).
func TestDateTimeRounding(t *testing.T) {
	cases := []struct{ in, want string }{
		{"2024-03-18T09:30:05.123Z", "2024-03-18T09:30:05.123Z"},
		{"2024-03-18T09:30:05.125Z", "2024-03-18T09:30:05.127Z"},
		{"2024-03-18T09:30:05.001Z", "2024-03-18T09:30:05Z"},
		{"2024-03-18T09:30:05.002Z", "2024-03-18T09:30:05.003Z"},
		{"2024-12-31T23:59:59.999Z", "2025-01-01T00:00:00Z"},
		{"1753-01-01T00:00:00Z", "1753-01-01T00:00:00Z"},
		{"9999-12-31T23:59:59.997Z", "9999-12-31T23:59:59.997Z"},
	}
	var rowsIn [][]any
	for _, c := range cases {
		tm, err := time.Parse(time.RFC3339Nano, c.in)
		if err != nil {
			t.Fatal(err)
		}
		rowsIn = append(rowsIn, []any{tm})
	}
	_, d := startServer(t, byQuery{"q": {{Columns: []tdstest.Column{{Name: "d", Type: tdstest.DateTime}}, Rows: rowsIn}}})
	rows, err := openDB(t, d).QueryContext(ctxT(t), "q")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for k := 0; rows.Next(); k++ {
		var got time.Time
		if err := rows.Scan(&got); err != nil {
			t.Fatal(err)
		}
		if s := got.Format(time.RFC3339Nano); s != cases[k].want {
			t.Errorf("%s -> %s, want %s", cases[k].in, s, cases[k].want)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestBadCannedValue checks that a value that does not fit its column is
// reported to the client as an error naming the column, not sent corrupt.
func TestBadCannedValue(t *testing.T) {
	cases := map[string]tdstest.ResultSet{
		"tinyint range": {Columns: []tdstest.Column{{Name: "x", Type: tdstest.TinyInt}}, Rows: [][]any{{256}}},
		"numeric range": {Columns: []tdstest.Column{{Name: "x", Type: tdstest.Numeric, Precision: 20}}, Rows: [][]any{{bigNumeric}}},
		"char length":   {Columns: []tdstest.Column{{Name: "x", Type: tdstest.Char, Size: 1}}, Rows: [][]any{{"DB"}}},
		"wrong Go type": {Columns: []tdstest.Column{{Name: "x", Type: tdstest.DateTime}}, Rows: [][]any{{"2024-01-01"}}},
		"row width":     {Columns: []tdstest.Column{{Name: "x", Type: tdstest.Int}}, Rows: [][]any{{1, 2}}},
		"bad guid":      {Columns: []tdstest.Column{{Name: "x", Type: tdstest.UniqueIdentifier}}, Rows: [][]any{{"nope"}}},
		"not cp1252":    {Columns: []tdstest.Column{{Name: "x", Type: tdstest.VarChar}}, Rows: [][]any{{"日本"}}},
	}
	h := byQuery{}
	for name, rs := range cases {
		h[name] = []tdstest.ResultSet{rs}
	}
	_, d := startServer(t, h)
	db := openDB(t, d)
	for name := range cases {
		var v any
		err := db.QueryRowContext(ctxT(t), name).Scan(&v)
		var me mssql.Error
		if !asMSSQL(err, &me) || me.Number != 50000 || !strings.Contains(me.Message, "tdstest:") {
			t.Errorf("%s: got %v, want a tdstest error 50000", name, err)
		}
	}
}
