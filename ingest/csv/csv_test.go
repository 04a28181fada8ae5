package csv_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/csv"
	"github.com/restorewatch/restorewatch/store"
)

func parseFile(t *testing.T, name string, opt csv.Options) (*store.Collect, csv.Stats) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if opt.File == "" {
		opt.File = name
	}
	var c store.Collect
	st, err := csv.Parse(context.Background(), f, opt, &c)
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	return &c, st
}

func p[T any](v T) *T { return &v }

func at(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05.999999999", s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestSpecOrder checks every field of the reference fixture: the export
// query's output as SSMS saves it, columns in SPEC order, NULL as the word.
func TestSpecOrder(t *testing.T) {
	c, st := parseFile(t, "spec_order.csv", csv.Options{})
	if len(c.Rejects) != 0 {
		t.Fatalf("rejects: %v", c.Rejects)
	}
	if st.Rows != 4 || len(c.Histories) != 4 {
		t.Fatalf("rows = %d, histories = %d, want 4", st.Rows, len(c.Histories))
	}
	if fi, _ := os.Stat("testdata/spec_order.csv"); st.Bytes != fi.Size() {
		t.Errorf("bytes = %d, want %d", st.Bytes, fi.Size())
	}
	want := store.HistoryRow{
		Instance: `SQLPROD01\BILLING`, RestoreHistoryID: 1041, RestoreDate: at("2024-03-18 09:30:05.123"),
		Database: "Billing", UserName: `CORP\svc_restore`, RestoreType: "D", Replace: p(true), Recovery: p(false),
		DeviceCount: p(int64(2)), BackupSetUUID: "6F9619FF-8B86-D011-B42D-00C04FC964FF",
		FamilyGUID: "1B6C3F2A-0D4E-4C4B-9D7E-2F1A8B3C4D5E", SourceServer: `SQLPROD02\BILLING`,
		SourceMachine: "SQLPROD02", SourceDatabase: "Billing", BackupType: "D",
		BackupStart: p(at("2024-03-17 01:00:00")), BackupFinish: p(at("2024-03-17 01:20:41.537")),
		FirstLSN: "39000000115200001", LastLSN: "39000000117600001",
		BackupSize: p(int64(10737418240)), CompressedSize: p(int64(2147483648)),
		SoftwareMajor: p(int64(13)), SoftwareMinor: p(int64(0)), SoftwareBuild: p(int64(4474)),
		IsCopyOnly: p(false), HasChecksums: p(true), MediaFamilies: p(int64(2)), DeviceType: p(int64(2)),
		Devices: []string{`\\nas01\sql\Billing_1.bak`, `\\nas01\sql\Billing_2.bak`},
		Origin:  store.Origin{Source: "history", File: "spec_order.csv", Line: 2},
	}
	if got := c.Histories[0]; !reflect.DeepEqual(got, want) {
		t.Errorf("row 1:\n got %+v\nwant %+v", got, want)
	}
	log := c.Histories[1]
	if log.RestoreType != "L" || log.StopAt == nil || !log.StopAt.Equal(at("2024-03-18 06:00:00")) || log.Origin.Line != 3 {
		t.Errorf("log row = %+v", log)
	}
	// VERIFYONLY rows are passed on; the warehouse keeps them apart.
	if v := c.Histories[2]; v.RestoreType != "V" || v.Database != "Billing_verify" {
		t.Errorf("verify row = %+v", v)
	}
	// A restore whose backup set was purged keeps only restorehistory's facts.
	purged := c.Histories[3]
	if purged.BackupSetUUID != "" || purged.BackupSize != nil || purged.Devices != nil || purged.FirstLSN != "" ||
		purged.RestoreType != "I" || purged.RestoreDate != at("2024-03-19 23:59:59.997") {
		t.Errorf("purged row = %+v", purged)
	}
	for _, h := range c.Histories {
		if err := h.Validate(); err != nil {
			t.Errorf("line %d: %v", h.Origin.Line, err)
		}
	}
}

// TestClientsAgree checks that every client's rendering of the same export
// yields the same rows as the reference fixture.
func TestClientsAgree(t *testing.T) {
	ref, _ := parseFile(t, "spec_order.csv", csv.Options{})
	for _, tc := range []struct{ file, why string }{
		{"shuffled_extra.csv", "any column order, extra columns, UTF-8 BOM, padded upper-case header, empty = NULL"},
		{"ssms_noquote.csv", "SSMS Save Results As of @quote_text = 0: no quotes, NULL strings"},
		{"sqlcmd_w.csv", `sqlcmd -s"," -W: dashed underline and (N rows affected)`},
		{"exportcsv_ps5_utf16.csv", "Export-Csv -Encoding Unicode: UTF-16LE BOM, #TYPE, all quoted twice, True/False, lower-case GUIDs"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			c, st := parseFile(t, tc.file, csv.Options{})
			if len(c.Rejects) != 0 {
				t.Fatalf("%s: rejects %v", tc.why, c.Rejects)
			}
			if st.Rows != 4 || len(c.Histories) != len(ref.Histories) {
				t.Fatalf("%s: rows = %d, histories = %d", tc.why, st.Rows, len(c.Histories))
			}
			for i := range ref.Histories {
				got, want := c.Histories[i], ref.Histories[i]
				got.Origin, want.Origin = store.Origin{}, store.Origin{}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: row %d\n got %+v\nwant %+v", tc.why, i+1, got, want)
				}
			}
		})
	}
}

func TestLineNumbers(t *testing.T) {
	c, _ := parseFile(t, "sqlcmd_w.csv", csv.Options{})
	if got := c.Histories[0].Origin.Line; got != 3 {
		t.Errorf("first sqlcmd row on line %d, want 3 (after the dashes)", got)
	}
	c, _ = parseFile(t, "exportcsv_ps5_utf16.csv", csv.Options{})
	if got := c.Histories[0].Origin.Line; got != 3 {
		t.Errorf("first Export-Csv row on line %d, want 3 (after #TYPE and the header)", got)
	}
}

func TestBadRows(t *testing.T) {
	c, st := parseFile(t, "bad_rows.csv", csv.Options{})
	want := []struct {
		line int
		has  string
	}{
		{3, `restore_date "2024-13-45 10:00:00": not a date`},
		{5, `backup_size "12ab": not a whole number`},
		{7, "row has 12 fields, the header has 31"},
		{9, "destination_database_name is empty"},
		{10, `first_lsn "39:1152:1": not a numeric LSN`},
		{11, `replace "yes": not a bit`},
	}
	if len(c.Rejects) != len(want) {
		t.Fatalf("rejects = %v", c.Rejects)
	}
	for i, w := range want {
		r := c.Rejects[i]
		if r.File != "bad_rows.csv" || r.Line != w.line || !strings.Contains(r.Reason, w.has) {
			t.Errorf("reject %d = %s, want bad_rows.csv:%d: %s", i, r, w.line, w.has)
		}
	}
	var got []string
	for _, h := range c.Histories {
		got = append(got, h.Database)
	}
	if want := []string{"ok1", "ok2", "ok3", "ok4", "ok5"}; !reflect.DeepEqual(got, want) {
		t.Errorf("imported %v, want %v", got, want)
	}
	if st.Rows != 11 {
		t.Errorf("rows = %d, want 11", st.Rows)
	}
}

// TestMultiLine checks that a row is reported at the physical line where it
// starts, after quoted fields that span lines.
func TestMultiLine(t *testing.T) {
	c, _ := parseFile(t, "multiline.csv", csv.Options{})
	var lines []int
	for _, h := range c.Histories {
		lines = append(lines, h.Origin.Line)
	}
	if want := []int{2, 3, 7}; !reflect.DeepEqual(lines, want) {
		t.Errorf("row lines = %v, want %v", lines, want)
	}
	if got := c.Histories[1].Database; got != "multi\nline\nname" {
		t.Errorf("multi-line name = %q", got)
	}
	if got := c.Histories[2].UserName; got != "user\nwith crlf" {
		t.Errorf("multi-line user = %q", got)
	}
	if len(c.Rejects) != 2 || c.Rejects[0].Line != 6 || c.Rejects[1].Line != 9 ||
		!strings.Contains(c.Rejects[0].Reason, "2024-02-30") || !strings.Contains(c.Rejects[1].Reason, "restore_history_id") {
		t.Errorf("rejects = %v, want lines 6 and 9", c.Rejects)
	}
}

// TestHostileNames checks that names are kept byte for byte: escaping is the
// pages' job, and a mangled name would split one database's series in two.
func TestHostileNames(t *testing.T) {
	c, _ := parseFile(t, "hostile.csv", csv.Options{})
	want := []string{"<script>alert(1)</script>", `O'Brien "Ltd", Inc.`, "=cmd|' /C calc'!A0",
		"Robert'); DROP TABLE restore;--", "Café_日本_Ünïcödé", " leading and trailing ", `"quoted"`, "x,y,z"}
	if len(c.Rejects) != 0 || len(c.Histories) != len(want) {
		t.Fatalf("histories = %d, rejects = %v", len(c.Histories), c.Rejects)
	}
	for i, h := range c.Histories {
		if h.Database != want[i] || h.UserName != want[i] || h.SourceDatabase != want[i] {
			t.Errorf("row %d: database %q user %q source %q, want %q", i+1, h.Database, h.UserName, h.SourceDatabase, want[i])
		}
		if len(h.Devices) != 1 || !strings.HasPrefix(h.Devices[0], `\\srv\share,1\`) {
			t.Errorf("row %d: devices %q", i+1, h.Devices)
		}
	}
}

// TestExportCsvDoubleQuoted runs hostile names through the query's quoting
// and then Export-Csv's, the path where the importer must undo one level.
func TestExportCsvDoubleQuoted(t *testing.T) {
	q := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	names := []string{`"quoted"`, `a "b" c`, `x,y`, "multi\nline", `""`, `'`}
	var b strings.Builder
	b.WriteString("\"instance\",\"restore_date\",\"destination_database_name\",\"stop_at\"\r\n")
	for _, n := range names {
		b.WriteString(q(q("SRV1")) + "," + q("2024-01-02 03:04:05.000") + "," + q(q(n)) + `,""` + "\r\n")
	}
	var c store.Collect
	if _, err := csv.Parse(context.Background(), strings.NewReader(b.String()), csv.Options{File: "x"}, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Rejects) != 0 || len(c.Histories) != len(names) {
		t.Fatalf("histories = %d, rejects = %v", len(c.Histories), c.Rejects)
	}
	for i, h := range c.Histories {
		if h.Instance != "SRV1" || h.Database != names[i] || h.StopAt != nil {
			t.Errorf("row %d: instance %q database %q, want SRV1 %q", i+1, h.Instance, h.Database, names[i])
		}
	}
}

func TestValues(t *testing.T) {
	hdr := "instance,restore_date,destination_database_name,first_lsn,backup_size,replace,restore_type\n"
	for _, tc := range []struct {
		row   string
		check func(store.HistoryRow) bool
	}{
		{"S,2024-01-02T03:04:05,d,39000000115200001.0,1024.0,True,d",
			func(h store.HistoryRow) bool {
				return h.RestoreDate == at("2024-01-02 03:04:05") && h.FirstLSN == "39000000115200001" &&
					*h.BackupSize == 1024 && *h.Replace && h.RestoreType == "D"
			}},
		{"S,2024-01-02 03:04:05.1234567,d,00012,NULL,false,L",
			func(h store.HistoryRow) bool {
				return h.RestoreDate == at("2024-01-02 03:04:05.1234567") && h.FirstLSN == "12" && h.BackupSize == nil && !*h.Replace
			}},
		{"S,2024-02-29 23:59:59.9,d,,,,",
			func(h store.HistoryRow) bool { return h.RestoreDate == at("2024-02-29 23:59:59.9") && h.Replace == nil }},
		{"  S  ,2024-01-02 03:04:05,d,,,,V",
			func(h store.HistoryRow) bool { return h.Instance == "S" && h.RestoreType == "V" }},
	} {
		var c store.Collect
		if _, err := csv.Parse(context.Background(), strings.NewReader(hdr+tc.row), csv.Options{}, &c); err != nil {
			t.Fatal(err)
		}
		if len(c.Histories) != 1 || !tc.check(c.Histories[0]) {
			t.Errorf("%q: got %+v rejects %v", tc.row, c.Histories, c.Rejects)
		}
	}
	for _, row := range []string{
		"S,2023-02-29 00:00:00,d,,,,", "S,2024-01-02 24:00:00,d,,,,", "S,2024-01-02 03:04:05.12345678,d,,,,",
		"S,2024-01-02,d,,,,", "S,2024-01-02 03:04:05,d,1.5,,,", "S,2024-01-02 03:04:05,d,,1.5,,",
		"S,2024-01-02 03:04:05,d,,,2,", "S,2024-01-02 03:04:05,d,,,,X", "S,NULL,d,,,,", ",2024-01-02 03:04:05,d,,,,",
	} {
		var c store.Collect
		if _, err := csv.Parse(context.Background(), strings.NewReader(hdr+row), csv.Options{File: "f"}, &c); err != nil {
			t.Fatal(err)
		}
		if len(c.Histories) != 0 || len(c.Rejects) != 1 || c.Rejects[0].Line != 2 {
			t.Errorf("%q: want one reject on line 2, got %+v %v", row, c.Histories, c.Rejects)
		}
	}
}

func TestInstanceOption(t *testing.T) {
	in := "restore_date,destination_database_name\n2024-01-02 03:04:05,d\n"
	var c store.Collect
	if _, err := csv.Parse(context.Background(), strings.NewReader(in), csv.Options{Instance: "HOST\\I1"}, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Histories) != 1 || c.Histories[0].Instance != `HOST\I1` {
		t.Errorf("got %+v", c.Histories)
	}
	in = "instance,restore_date,destination_database_name\n,2024-01-02 03:04:05,d\nOTHER,2024-01-02 03:04:05,d\n"
	c = store.Collect{}
	if _, err := csv.Parse(context.Background(), strings.NewReader(in), csv.Options{Instance: "DEF"}, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Histories) != 2 || c.Histories[0].Instance != "DEF" || c.Histories[1].Instance != "OTHER" {
		t.Errorf("got %+v", c.Histories)
	}
}

func TestHeaderErrors(t *testing.T) {
	for _, tc := range []struct{ in, has string }{
		{"instance,restore_date\nS,2024-01-02 03:04:05\n", "destination_database_name"},
		{"restore_date,destination_database_name\n2024-01-02 03:04:05,d\n", "instance"},
		{"a,b,c\n1,2,3\n", "no header row"},
		{"", "no header row"},
		{"instance,instance,restore_date,destination_database_name\n", "twice"},
	} {
		_, err := csv.Parse(context.Background(), strings.NewReader(tc.in), csv.Options{File: "h.csv"}, &store.Collect{})
		if err == nil || store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), tc.has) ||
			!strings.Contains(err.Error(), "h.csv") {
			t.Errorf("%q: err = %v, want invalid naming %q and the file", tc.in, err, tc.has)
		}
	}
}

// TestUnpaddedQuotes checks the hint for sqlcmd output saved without -W,
// where padding after a closing quote makes the row unreadable.
func TestUnpaddedQuotes(t *testing.T) {
	in := "instance,restore_date,destination_database_name\n" +
		`"S1"   ,2024-01-02 03:04:05,"d"   ` + "\n" + `"S1",2024-01-02 03:04:05,"d"` + "\n"
	var c store.Collect
	if _, err := csv.Parse(context.Background(), strings.NewReader(in), csv.Options{File: "f"}, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Histories) != 1 || len(c.Rejects) != 1 || c.Rejects[0].Line != 2 || !strings.Contains(c.Rejects[0].Reason, "-W") {
		t.Errorf("histories %+v rejects %v", c.Histories, c.Rejects)
	}
}

func TestProgressAndCancel(t *testing.T) {
	data := genCSV(20000)
	var last int64
	calls := 0
	st, err := csv.Parse(context.Background(), strings.NewReader(data),
		csv.Options{Progress: func(n int64) { last = n; calls++ }}, discard{})
	if err != nil {
		t.Fatal(err)
	}
	if last != int64(len(data)) || st.Bytes != last || calls < 2 || st.Rows != 20000 {
		t.Errorf("progress last=%d calls=%d bytes=%d rows=%d, want %d bytes", last, calls, st.Bytes, st.Rows, len(data))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := csv.Parse(ctx, strings.NewReader(data), csv.Options{}, discard{}); err != context.Canceled {
		t.Errorf("cancelled parse: err = %v", err)
	}
}

// TestResultsToText reads SSMS "Results to Text" with comma-delimited output:
// dashes, a row count and the completion stamp around the rows, while a
// stray one-field line is still reported.
func TestResultsToText(t *testing.T) {
	in := "instance,restore_date,destination_database_name\r\n--------,------------,----\r\n" +
		"S1,2024-01-02 03:04:05.000,d1\r\nstray\r\nS1,2024-01-02 03:04:06.000,d2\r\n\r\n(2 rows affected)\r\n\r\n" +
		"Completion time: 2024-01-02T03:05:00.1234567+01:00\r\n"
	var c store.Collect
	st, err := csv.Parse(context.Background(), strings.NewReader(in), csv.Options{File: "t"}, &c)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Histories) != 2 || st.Rows != 3 || len(c.Rejects) != 1 || c.Rejects[0].Line != 4 {
		t.Errorf("histories %d rows %d rejects %v", len(c.Histories), st.Rows, c.Rejects)
	}
}

// TestUTF16 reads UTF-16 files: big-endian with a BOM, and little-endian
// that lost its BOM (recognised by the zero high bytes of ASCII).
func TestUTF16(t *testing.T) {
	text := "instance,restore_date,destination_database_name\r\nS1,2024-01-02 03:04:05,Café\r\n"
	var le, be []byte
	be = append(be, 0xFE, 0xFF)
	for _, r := range text {
		le = append(le, byte(r), byte(r>>8))
		be = append(be, byte(r>>8), byte(r))
	}
	for name, in := range map[string][]byte{"le-no-bom": le, "be-bom": be} {
		var c store.Collect
		if _, err := csv.Parse(context.Background(), strings.NewReader(string(in)), csv.Options{}, &c); err != nil {
			t.Fatal(err)
		}
		if len(c.Histories) != 1 || c.Histories[0].Database != "Café" {
			t.Errorf("%s: %+v %v", name, c.Histories, c.Rejects)
		}
	}
}

// TestDestinationFiles reads the export's destination_files extension
// (msdb.dbo.restorefile's paths, '|'-joined); NULL leaves it empty.
func TestDestinationFiles(t *testing.T) {
	c, _ := parseFile(t, "sqlcmd_w_destination.csv", csv.Options{})
	if len(c.Rejects) != 0 || len(c.Histories) != 2 {
		t.Fatalf("histories = %d, rejects = %v", len(c.Histories), c.Rejects)
	}
	want := []string{`D:\Data\Billing.mdf`, `L:\Log\Billing_log.ldf`, `D:\Data\Billing_2.ndf`}
	if got := c.Histories[0].DestinationFiles; !reflect.DeepEqual(got, want) {
		t.Errorf("destination files = %q, want %q", got, want)
	}
	if got := c.Histories[1].DestinationFiles; got != nil {
		t.Errorf("NULL destination files = %q, want none", got)
	}
}
