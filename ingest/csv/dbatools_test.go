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

// realworld is the dbatools fixtures' folder; its README says where every
// column comes from and how each file was made.
var realworld = filepath.Join("..", "..", "testdata", "realworld", "dbatools")

func parseReal(t *testing.T, name string, opt csv.Options) *store.Collect {
	t.Helper()
	f, err := os.Open(filepath.Join(realworld, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opt.File = name
	var c store.Collect
	if _, err := csv.Parse(context.Background(), f, opt, &c); err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	return &c
}

// dbaRestore is one restore of the history fixtures, as msdb holds it.
type dbaRestore struct {
	db, rtype             string
	date                  string
	from, to              []string
	first, last           string
	start, finish, stopAt string
}

var dbaRestores = []dbaRestore{
	{"Sales", "V", "2026-11-03 22:10:00", []string{`\\nas01\sql\Sales_full.bak`}, nil,
		"52000000040000001", "52000000042400001", "2026-11-03 21:00:00", "2026-11-03 21:09:47", ""},
	{"Sales", "D", "2026-11-03 23:45:59", []string{`\\nas01\sql\Sales_full.bak`}, []string{`E:\Data\Sales.mdf`, `F:\Log\Sales_log.ldf`},
		"52000000040000001", "52000000042400001", "2026-11-03 21:00:00", "2026-11-03 21:09:47", ""},
	{"Billing", "D", "2026-11-14 01:30:05.123", []string{`\\nas01\sql\Billing_1.bak`, `\\nas01\sql\Billing_2.bak`},
		[]string{`D:\Data\Billing.mdf`, `L:\Log\Billing_log.ldf`},
		"39000000115200001", "39000000117600001", "2026-11-13 23:00:00", "2026-11-13 23:20:41", ""},
	{"Billing", "I", "2026-11-14 02:05:17", []string{`\\nas01\sql\Billing_diff.bak`}, []string{`D:\Data\Billing.mdf`, `L:\Log\Billing_log.ldf`},
		"39000000120800001", "39000000121600001", "2026-11-14 00:00:00", "2026-11-14 00:03:12", ""},
	// The ampersand went through FOR XML PATH('') as &amp;.
	{"Billing", "L", "2026-11-14 02:06:40", []string{`\\nas01\sql\Logs&Archive\Billing_0200.trn`}, []string{`D:\Data\Billing.mdf`, `L:\Log\Billing_log.ldf`},
		"39000000121600001", "39000000122400001", "2026-11-14 02:00:00", "2026-11-14 02:00:09", "2026-11-14 01:55:00"},
}

// TestDbatoolsRestoreHistory reads Get-DbaDbRestoreHistory | Export-Csv as
// each PowerShell and culture writes it: every file holds the same five
// restores and must import as exactly those, with dates in the instance's
// wall-clock time (an export states no offset; the warehouse converts).
func TestDbatoolsRestoreHistory(t *testing.T) {
	for _, tc := range []struct {
		file      string
		firstLine int
		millis    bool // the culture form drops milliseconds; the recipe keeps them
	}{
		{"restorehistory_ps51_en-GB_utf16.csv", 3, false},
		{"restorehistory_ps51_en-US_utf8bom.csv", 3, false},
		{"restorehistory_ps51_de-DE_semicolon.csv", 3, false},
		{"restorehistory_ps7_ja-JP.csv", 2, false},
		{"restorehistory_ps7_invariant.csv", 2, true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			c := parseReal(t, tc.file, csv.Options{})
			if len(c.Rejects) != 0 || len(c.LogRestores) != 0 {
				t.Fatalf("rejects %v, log restores %d", c.Rejects, len(c.LogRestores))
			}
			if len(c.Histories) != len(dbaRestores) {
				t.Fatalf("histories = %d, want %d", len(c.Histories), len(dbaRestores))
			}
			for i, w := range dbaRestores {
				date := w.date
				if !tc.millis {
					date = strings.TrimSuffix(date, ".123")
				}
				var stop *time.Time
				if w.stopAt != "" {
					stop = p(at(w.stopAt))
				}
				want := store.HistoryRow{
					Instance: `SQLPROD01\BILLING`, Database: w.db, UserName: `CORP\svc_restore`, RestoreType: w.rtype,
					RestoreDate: at(date), Devices: w.from, DestinationFiles: w.to, FirstLSN: w.first, LastLSN: w.last,
					BackupStart: p(at(w.start)), BackupFinish: p(at(w.finish)), StopAt: stop,
					Origin: store.Origin{Source: "history", File: tc.file, Line: tc.firstLine + i},
				}
				got := c.Histories[i]
				if !reflect.DeepEqual(got, want) {
					t.Errorf("row %d:\n got %+v\nwant %+v", i+1, got, want)
				}
				if err := got.Validate(); err != nil {
					t.Errorf("row %d: %v", i+1, err)
				}
			}
		})
	}
}

// TestDbatoolsRestoreDatabase reads Restore-DbaDatabase | Export-Csv: one
// restore per statement dbatools ran, timed by dbatools' FileRestoreTime.
func TestDbatoolsRestoreDatabase(t *testing.T) {
	const file = "restoredbadatabase_ps7_en-GB.csv"
	c := parseReal(t, file, csv.Options{})
	if len(c.Rejects) != 0 || len(c.Histories) != 0 || len(c.LogRestores) != 3 {
		t.Fatalf("rejects %v, histories %d, log restores %d", c.Rejects, len(c.Histories), len(c.LogRestores))
	}
	want := []struct {
		devices []string
		secs    float64
	}{
		{[]string{`\\nas01\sql\Billing_1.bak`, `\\nas01\sql\Billing_2.bak`}, 34*60 + 12},
		{[]string{`\\nas01\sql\Billing_diff.bak`}, 63},
		{[]string{`\\nas01\sql\Logs&Archive\Billing_0200.trn`}, 4},
	}
	for i, w := range want {
		l := c.LogRestores[i]
		if l.Instance != `SQLPROD01\BILLING` || l.Database != "Billing" || !reflect.DeepEqual(l.Devices, w.devices) ||
			l.DeviceCount != len(w.devices) || l.DeviceType != "DISK" || l.UpperBoundS != w.secs ||
			l.Origin != (store.Origin{Source: csv.SourceDbatools, File: file, Line: i + 2}) || !l.CompletedAt.IsZero() || l.Has3014 {
			t.Errorf("restore %d = %+v, want devices %q and %v s from dbatools", i+1, l, w.devices, w.secs)
		}
		if err := l.Validate(); err != nil {
			t.Errorf("restore %d: %v", i+1, err)
		}
	}
}

// TestDbatoolsRestoreDatabaseValues checks the row-level rules: a failed
// restore is no restore, the statement text gives the kind when dbatools
// kept it, a span over a day reads, a bad span is rejected.
func TestDbatoolsRestoreDatabaseValues(t *testing.T) {
	hdr := `"SqlInstance","Database","RestoreComplete","BackupFile","BackupFilesCount","Script","FileRestoreTime","DatabaseRestoreTime"` + "\n"
	in := hdr +
		`"S1","A","False","\\n\a.bak","1","System.Collections.Specialized.StringCollection","00:00:02","00:00:02"` + "\n" +
		`"S1","A","True","\\n\a.trn","1","EXECUTE AS LOGIN='x'; RESTORE LOG [A] FROM  DISK = N'\\n\a.trn' WITH  NORECOVERY","1.02:03:04.5000000","1.02:03:05"` + "\n" +
		`"S1","A","True","https://acct.blob.core.windows.net/c/a.bak","1","","00:01:00","00:01:00"` + "\n" +
		`"S1","A","True","\\n\a.bak","1","","abc","00:01:00"` + "\n" +
		`"S1","A","True","\\n\a.bak","1","",,` + "\n"
	var c store.Collect
	if _, err := csv.Parse(context.Background(), strings.NewReader(in), csv.Options{File: "r.csv"}, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.LogRestores) != 2 {
		t.Fatalf("restores %+v, rejects %v", c.LogRestores, c.Rejects)
	}
	if l := c.LogRestores[0]; l.Kind != store.KindLog || l.Statement != "RESTORE LOG" || l.UpperBoundS != 93784.5 || l.Origin.Line != 3 {
		t.Errorf("log restore = %+v", l)
	}
	if l := c.LogRestores[1]; l.DeviceType != "URL" || l.UpperBoundS != 60 {
		t.Errorf("URL restore = %+v", l)
	}
	want := []struct {
		line int
		has  string
	}{{2, "RestoreComplete is False"}, {5, `FileRestoreTime "abc": not a time span`}, {6, "FileRestoreTime is empty"}}
	if len(c.Rejects) != len(want) {
		t.Fatalf("rejects = %v", c.Rejects)
	}
	for i, w := range want {
		if r := c.Rejects[i]; r.Line != w.line || !strings.Contains(r.Reason, w.has) {
			t.Errorf("reject %d = %s, want line %d: %s", i, r, w.line, w.has)
		}
	}
}

// TestUnknownExport checks that a header of no known export fails the file
// with an error that shows the header found and names every accepted export.
func TestUnknownExport(t *testing.T) {
	for name, in := range map[string]string{
		// Get-DbaDbBackupHistory shares SqlInstance and Database.
		"backup history": "#TYPE Dataplat.Dbatools.Database.BackupHistory\r\n\"SqlInstance\",\"Database\",\"Type\",\"Start\",\"End\"\r\n\"S\",\"d\",\"Full\",\"x\",\"y\"\r\n",
		// Restore-DbaDatabase -VerifyOnly passes strings on: Export-Csv writes their Length.
		"verify only": "\"Length\"\r\n\"17\"\r\n",
	} {
		_, err := csv.Parse(context.Background(), strings.NewReader(in), csv.Options{File: "u.csv"}, &store.Collect{})
		if err == nil || store.ErrorCode(err) != store.EINVALID {
			t.Fatalf("%s: err = %v, want invalid", name, err)
		}
		msg := err.Error()
		for _, has := range []string{"u.csv", "no header row", "restore_history_export.sql", "Get-DbaDbRestoreHistory | Export-Csv",
			"Restore-DbaDatabase | Export-Csv", "SqlInstance, Database, RestoreType, Date"} {
			if !strings.Contains(msg, has) {
				t.Errorf("%s: error %q lacks %q", name, msg, has)
			}
		}
		if name == "backup history" && !strings.Contains(msg, `line 2, names ["SqlInstance" "Database" "Type" "Start" "End"]`) {
			t.Errorf("%s: error %q does not show the header found", name, msg)
		}
	}
}

const dbaHdr = `"SqlInstance","Database","Username","RestoreType","Date","From","To"` + "\r\n"

func dbaRow(date string) string {
	return `"S1","d","u","Database","` + date + `","\\n\x.bak",""` + "\r\n"
}

func parseDba(t *testing.T, body string, opt csv.Options) (*store.Collect, error) {
	t.Helper()
	var c store.Collect
	opt.File = "d.csv"
	_, err := csv.Parse(context.Background(), strings.NewReader(dbaHdr+body), opt, &c)
	return &c, err
}

func dates(c *store.Collect) []string {
	var out []string
	for _, h := range c.Histories {
		out = append(out, h.RestoreDate.Format("2006-01-02 15:04:05"))
	}
	return out
}

// TestCultureDateOrder checks how the order of day and month is settled:
// by DateFormat, else by the file's own dates, and never by a guess.
func TestCultureDateOrder(t *testing.T) {
	ambiguous := dbaRow("03/11/2026 22:10:00") + dbaRow("05/11/2026 08:00:00")

	_, err := parseDba(t, ambiguous, csv.Options{})
	if err == nil || store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "d.csv:2") ||
		!strings.Contains(err.Error(), "--date-format") || !strings.Contains(err.Error(), `"03/11/2026 22:10:00"`) {
		t.Errorf("dates that read both ways: err = %v, want an invalid file naming d.csv:2 and --date-format", err)
	}
	for _, tc := range []struct {
		format string
		want   []string
	}{
		{"dd/MM/yyyy", []string{"2026-11-03 22:10:00", "2026-11-05 08:00:00"}},
		{"DMY", []string{"2026-11-03 22:10:00", "2026-11-05 08:00:00"}},
		{"M/d/yyyy h:mm:ss tt", []string{"2026-03-11 22:10:00", "2026-05-11 08:00:00"}},
		{"01/02/2006 15:04:05", []string{"2026-03-11 22:10:00", "2026-05-11 08:00:00"}},
	} {
		c, err := parseDba(t, ambiguous, csv.Options{DateFormat: tc.format})
		if err != nil || len(c.Rejects) != 0 || !reflect.DeepEqual(dates(c), tc.want) {
			t.Errorf("--date-format %q: dates %v rejects %v err %v, want %v", tc.format, dates(c), c.Rejects, err, tc.want)
		}
	}

	// The third row settles day/month; the two before it wait for it and
	// keep their lines and order.
	c, err := parseDba(t, ambiguous+dbaRow("14/11/2026 01:30:05"), csv.Options{})
	if err != nil || len(c.Rejects) != 0 {
		t.Fatalf("err %v rejects %v", err, c.Rejects)
	}
	if got, want := dates(c), []string{"2026-11-03 22:10:00", "2026-11-05 08:00:00", "2026-11-14 01:30:05"}; !reflect.DeepEqual(got, want) {
		t.Errorf("dates = %v, want %v", got, want)
	}
	for i, h := range c.Histories {
		if h.Origin.Line != i+2 {
			t.Errorf("row %d on line %d", i+1, h.Origin.Line)
		}
	}

	// A date that contradicts the order the file showed is rejected, not
	// read the other way.
	c, err = parseDba(t, dbaRow("14/11/2026 01:30:05")+dbaRow("11/15/2026 01:30:05")+dbaRow("16/11/2026 01:30:05"), csv.Options{})
	if err != nil || len(c.Histories) != 2 || len(c.Rejects) != 1 || c.Rejects[0].Line != 3 ||
		!strings.Contains(c.Rejects[0].Reason, "day/month/year order that line 2") {
		t.Errorf("contradiction: histories %v rejects %v err %v", dates(c), c.Rejects, err)
	}
	c, err = parseDba(t, dbaRow("14/11/2026 01:30:05"), csv.Options{DateFormat: "MDY"})
	if err != nil || len(c.Histories) != 0 || len(c.Rejects) != 1 || !strings.Contains(c.Rejects[0].Reason, "month/day/year order of --date-format") {
		t.Errorf("against --date-format: histories %v rejects %v err %v", dates(c), c.Rejects, err)
	}

	if _, err := parseDba(t, ambiguous, csv.Options{DateFormat: "dd/MM"}); err == nil || store.ErrorCode(err) != store.EINVALID {
		t.Errorf("bad --date-format: err = %v", err)
	}
}

// TestCultureDateForms reads the forms .NET cultures write.
func TestCultureDateForms(t *testing.T) {
	for in, want := range map[string]string{
		"11/14/2026 12:00:00 AM":        "2026-11-14 00:00:00", // en-US midnight
		"11/14/2026 12:30:00 PM":        "2026-11-14 12:30:00",
		"11/14/2026 1:45:12\u202fPM":    "2026-11-14 13:45:12", // ICU's narrow no-break space
		"14.11.2026 13:45:12":           "2026-11-14 13:45:12", // de-DE
		"14-11-2026 9:05:00":            "2026-11-14 09:05:00", // nl-NL
		"2026/11/14 9:05:00":            "2026-11-14 09:05:00", // ja-JP
		"2026-11-14 09:05:00.1234567":   "2026-11-14 09:05:00", // ISO with 7 digits
		"14/11/2026 1:45:12 p.m.":       "2026-11-14 13:45:12",
		"2026. 11. 14. 13:45:12":        "",
		"14/11/26 13:45:12":             "",
		"13/14/2026 10:00:00":           "",
		"11/14/2026 13:00:00 PM":        "",
		"11/14/2026 10:00":              "",
		"11/14/2026 10:00:00 nachm.":    "",
		"11/14/2026 10:00:00.123456789": "",
	} {
		c, err := parseDba(t, dbaRow(in), csv.Options{})
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if want == "" {
			if len(c.Histories) != 0 || len(c.Rejects) != 1 || !strings.Contains(c.Rejects[0].Reason, "not a date") {
				t.Errorf("%q: histories %v rejects %v, want a reject", in, dates(c), c.Rejects)
			}
			continue
		}
		if got := dates(c); len(got) != 1 || got[0] != want {
			t.Errorf("%q: got %v %v, want %s", in, got, c.Rejects, want)
		}
	}
}

func TestCheckDateFormat(t *testing.T) {
	for _, ok := range []string{"", "DMY", "mdy", "YMD", "dd.MM.yyyy", "d/M/yyyy h:mm:ss tt", "yyyy-MM-dd HH:mm:ss", "02/01/2006 15:04:05", "2006-01-02"} {
		if err := csv.CheckDateFormat(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"DM", "dd/MM", "yyyy/dd/MM", "MMM d yyyy", "dd/MM/yyyy/MM", "x"} {
		if err := csv.CheckDateFormat(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
