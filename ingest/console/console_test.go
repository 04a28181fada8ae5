package console_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/console"
	"github.com/restorewatch/restorewatch/store"
)

const dir = "../../testdata/issue39/dbatools"

func parse(t *testing.T, name string, opt console.Options) (*store.Collect, console.Stats) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	shape, ok := console.Sniff(b)
	if !ok {
		t.Fatalf("%s: Sniff found no dbatools console output", name)
	}
	opt.File = name
	var c store.Collect
	st, err := console.Parse(context.Background(), strings.NewReader(string(b)), opt, &c)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if st.Shape != shape {
		t.Errorf("%s: Parse saw %v, Sniff %v", name, st.Shape, shape)
	}
	return &c, st
}

// TestRestoreListThenHistoryTable: Restore-DbaDatabase's default output
// (Format-List, Script and paths wrapped at the console's width) and
// Get-DbaDbRestoreHistory | Format-Table with its last column cut: the two
// timings and the two history rows, at the console's lines.
func TestRestoreListThenHistoryTable(t *testing.T) {
	c, st := parse(t, "en-US_restore_formatlist_then_history_formattable.txt", console.Options{})
	if st.Shape != (console.Shape{Command: console.RestoreDbaDatabase, Layout: console.List}) {
		t.Errorf("shape %v", st.Shape)
	}
	if len(c.Rejects) != 0 {
		t.Errorf("rejects %+v", c.Rejects)
	}
	type timing struct {
		line   int
		kind   store.Kind
		device string
		secs   float64
	}
	var got []timing
	for _, l := range c.LogRestores {
		got = append(got, timing{l.Origin.Line, l.Kind, strings.Join(l.Devices, ","), l.UpperBoundS})
		if l.Instance != "SQLPROD02" || l.Database != "Orders" {
			t.Errorf("restore %+v", l)
		}
	}
	want := []timing{
		{3, store.KindFull, `\\nas02\sql\Orders\FULL\SQLPROD02_Orders_FULL_20261113_230000.bak`, 702},
		{24, store.KindLog, `\\nas02\sql\Orders\LOG\SQLPROD02_Orders_LOG_20261114_020000.trn`, 4},
	}
	if !slices.Equal(got, want) {
		t.Errorf("timings\n got %+v\nwant %+v", got, want)
	}
	if len(c.Histories) != 2 {
		t.Fatalf("histories %+v", c.Histories)
	}
	h := c.Histories[0]
	if h.Origin.Line != 49 || h.Database != "Orders" || h.RestoreType != "D" || !h.RestoreDate.Equal(time.Date(2026, 11, 14, 1, 30, 5, 0, time.UTC)) ||
		strings.Join(h.Devices, ",") != `\\nas02\sql\Orders\FULL\SQLPROD02_Orders_FULL_20261113_230000.bak` || len(h.DestinationFiles) != 0 {
		t.Errorf("history %+v", h)
	}
	if c.Histories[1].RestoreType != "L" || c.Histories[1].Origin.Line != 50 {
		t.Errorf("history %+v", c.Histories[1])
	}
}

// TestSpanishConsole: es-ES prints sizes with a decimal comma and dates day
// first; a day above 12 tells the order.
func TestSpanishConsole(t *testing.T) {
	c, _ := parse(t, "es-ES_restore_and_history_formatlist.txt", console.Options{})
	if len(c.Rejects) != 0 || len(c.LogRestores) != 1 || len(c.Histories) != 1 {
		t.Fatalf("got %+v", c)
	}
	if l := c.LogRestores[0]; l.Instance != "SQLES01" || l.Database != "Ventas" || l.UpperBoundS != 3 || l.Origin.Line != 3 {
		t.Errorf("restore %+v", l)
	}
	h := c.Histories[0]
	if h.Origin.Line != 27 || !h.RestoreDate.Equal(time.Date(2026, 11, 14, 1, 30, 5, 0, time.UTC)) ||
		h.BackupStart == nil || !h.BackupStart.Equal(time.Date(2026, 11, 13, 23, 0, 1, 0, time.UTC)) {
		t.Errorf("history %+v", h)
	}
}

// TestBackupHistoryAndRestoreTestsRejected: what cannot be used is rejected
// object by object, saying what it said and what to run instead.
func TestBackupHistoryAndRestoreTestsRejected(t *testing.T) {
	c, _ := parse(t, "backuphistory_formattable_ps51.txt", console.Options{})
	if len(c.Rejects) != 2 || c.Rejects[0].Line != 5 || !strings.Contains(c.Rejects[0].Reason, "-Raw | Export-Csv") ||
		!strings.Contains(c.Rejects[0].Reason, "Full backup of Orders started 2026-11-13 23:00:00.000") {
		t.Errorf("rejects %+v", c.Rejects)
	}
	c, _ = parse(t, "testlastbackup_formatlist_ps51.txt", console.Options{})
	if len(c.Rejects) != 1 || c.Rejects[0].Line != 3 {
		t.Fatalf("rejects %+v", c.Rejects)
	}
	for _, want := range []string{"2026-11-15 03:00:04.120 to 2026-11-15 03:12:01.450 (00:11:57, Success)", "DBCC CHECKDB 2026-11-15 03:12:01.460",
		"2 backup files", "Get-DbaDbRestoreHistory -SqlInstance SQLTEST01"} {
		if !strings.Contains(c.Rejects[0].Reason, want) {
			t.Errorf("reason %q lacks %q", c.Rejects[0].Reason, want)
		}
	}
}

// TestTableThatLostAColumn: a Format-Table that dropped FileRestoreTime or
// cut a backup path short is rejected per object with the way out.
func TestTableThatLostAColumn(t *testing.T) {
	text := "SqlInstance Database BackupFile                     RestoreComplete\n" +
		"----------- -------- ----------                     ---------------\n" +
		"SQL1        Sales    \\\\nas\\sql\\Sales_FULL_2026111… True\n"
	var c store.Collect
	if _, err := console.Parse(context.Background(), strings.NewReader(text), console.Options{File: "t.txt"}, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Rejects) != 1 || c.Rejects[0].Line != 3 || !strings.Contains(c.Rejects[0].Reason, "leaves out FileRestoreTime") ||
		len(c.LogRestores) != 0 {
		t.Errorf("got %+v", c)
	}
}

// TestReadShapes: Windows PowerShell 5.1 cuts a table cell with "...",
// Format-Table -Wrap carries a long cell over the next lines, and a capture
// pasted into a Markdown fence or quote reads the same, at the same lines.
func TestReadShapes(t *testing.T) {
	text := strings.Join([]string{
		"```powershell",
		"PS C:\\> Get-DbaDbRestoreHistory -SqlInstance SQL9 | Format-Table -Wrap SqlInstance, Database, RestoreType, Date, From",
		"",
		"SqlInstance Database RestoreType Date                From",
		"----------- -------- ----------- ----                ----",
		"SQL9        Sales    Database    14/11/2026 01:30:05 \\\\nas\\sql\\Sales_FULL_",
		"                                                     20261113.bak",
		"SQL9        Sales    Log         14/11/2026 01:45:00 \\\\nas\\sql\\Sales_L...",
		"```",
	}, "\n")
	recs := console.Read(strings.Split(text, "\n"))
	if len(recs) != 2 {
		t.Fatalf("records %+v", recs)
	}
	if recs[0].Line != 6 || recs[0].Layout != console.Table || recs[0].Get("From") != `\\nas\sql\Sales_FULL_20261113.bak` {
		t.Errorf("first %+v", recs[0])
	}
	if recs[1].Line != 8 || !recs[1].Cut["from"] || recs[1].Cut["date"] {
		t.Errorf("second %+v", recs[1])
	}
	var c store.Collect
	if _, err := console.Parse(context.Background(), strings.NewReader(text), console.Options{File: "md"}, &c); err != nil {
		t.Fatal(err)
	}
	// Both rows are history rows (From is not needed); the cut path is
	// left out rather than stored short.
	if len(c.Histories) != 2 || len(c.Rejects) != 0 || len(c.Histories[1].Devices) != 0 || c.Histories[0].Origin.Line != 6 {
		t.Errorf("got %+v", c)
	}
}

// TestSniffUTF16: Windows PowerShell 5.1 writes "> file" in UTF-16LE.
func TestSniffUTF16(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(dir, "testlastbackup_formatlist_ps51.txt"))
	if err != nil {
		t.Fatal(err)
	}
	u := []byte{0xFF, 0xFE}
	for _, r := range string(b) {
		u = append(u, byte(r), byte(r>>8))
	}
	if sh, ok := console.Sniff(u); !ok || sh.Command != console.TestDbaLastBackup {
		t.Errorf("UTF-16: %v %v", sh, ok)
	}
	if _, ok := console.Sniff([]byte("2025-03-01 02:00:01.23 spid51 Starting up database 'x'.\n")); ok {
		t.Error("an error log taken for console output")
	}
}

// TestEachCommandEachLayout: every command in the layout the fixtures do
// not show: imported, or rejected with a reason.
func TestEachCommandEachLayout(t *testing.T) {
	for _, tc := range []struct {
		name, text    string
		restores, rej int
		reason        string
	}{
		{"Restore-DbaDatabase | Format-Table", "" +
			"SqlInstance Database BackupFile                  FileRestoreTime RestoreComplete\n" +
			"----------- -------- ----------                  --------------- ---------------\n" +
			"SQL1        Sales    \\\\nas\\sql\\Sales_FULL_1.bak   00:02:10        True\n", 1, 0, ""},
		{"Get-DbaDbBackupHistory | Format-List", "\n" +
			"SqlInstance : SQL1\nDatabase    : Sales\nType        : Full\nTotalSize   : 2.95 GB\nDeviceType  : Disk\n" +
			"Start       : 2026-11-13 23:00:00.000\nDuration    : 00:20:41\nEnd         : 2026-11-13 23:20:41.000\n", 0, 1, "-Raw | Export-Csv"},
		{"Test-DbaLastBackup | Format-Table", "" +
			"SourceServer TestServer Database RestoreResult DbccResult RestoreElapsed DbccElapsed\n" +
			"------------ ---------- -------- ------------- ---------- -------------- -----------\n" +
			"SQL1         SQLTEST    Sales    Success       Success    00:02:11       00:00:40\n", 0, 1, "Get-DbaDbRestoreHistory -SqlInstance SQLTEST"},
	} {
		var c store.Collect
		if _, err := console.Parse(context.Background(), strings.NewReader(tc.text), console.Options{File: "t"}, &c); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(c.LogRestores) != tc.restores || len(c.Rejects) != tc.rej || tc.rej > 0 && !strings.Contains(c.Rejects[0].Reason, tc.reason) {
			t.Errorf("%s: %+v", tc.name, c)
		}
	}
}

// TestCultures: the same history row printed by a German (dd.MM.yyyy,
// Format-Table) and a Japanese (yyyy/MM/dd, Format-List) PowerShell.
func TestCultures(t *testing.T) {
	for name, text := range map[string]string{
		"de-DE": "SqlInstance Database RestoreType Date                From\n" +
			"----------- -------- ----------- ----                ----\n" +
			"SQL1        Sales    Database    14.11.2026 01:30:05 \\\\nas\\sql\\Sales_FULL_1.bak\n",
		"ja-JP": "\nDatabase    : Sales\nDate        : 2026/11/14 1:30:05\nFrom        : \\\\nas\\sql\\Sales_FULL_1.bak\n" +
			"RestoreType : Database\nSqlInstance : SQL1\n",
	} {
		var c store.Collect
		if _, err := console.Parse(context.Background(), strings.NewReader(text), console.Options{File: name}, &c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(c.Histories) != 1 || len(c.Rejects) != 0 || !c.Histories[0].RestoreDate.Equal(time.Date(2026, 11, 14, 1, 30, 5, 0, time.UTC)) ||
			c.Histories[0].Instance != "SQL1" {
			t.Errorf("%s: %+v", name, c)
		}
	}
}
