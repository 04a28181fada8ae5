package ingest_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// An out-of-range instant (issue 28 item 2) is refused at every door with
// its reason and file:line, and the rest of the file is imported: the
// store's record validation is the one check every parser's records pass.
// Each case is a real fixture with one date made extreme.
func TestOutOfRangeInstantsRejectedAtEveryDoor(t *testing.T) {
	edit := func(path string, line int, from, to string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		if !strings.Contains(lines[line-1], from) {
			t.Fatalf("%s:%d does not hold %q", path, line, from)
		}
		lines[line-1] = strings.Replace(lines[line-1], from, to, 1)
		return strings.Join(lines, "\n")
	}
	for _, tc := range []struct {
		kind ingest.FileKind
		text string
		line int
		opt  ingest.Options
	}{
		// A history row on the last day SQL Server's datetime holds.
		{ingest.History, edit("csv/testdata/spec_order.csv", 2, "2024-03-18 09:30:05.123", "9999-12-31 23:59:59.000"), 2, ingest.Options{}},
		// A restore before the first SQL Server (the error log's year).
		{ingest.ErrorLog, edit("errorlog/testdata/synthetic_windows_full_diff_log.log", 82, "2024-03-02 08:10:07.01", "1899-03-02 08:10:07.01"), 82, ingest.Options{}},
		// Captured client output stamped in the year 2500.
		{ingest.Messages, edit("messages/testdata/ssms_completion.txt", 5, "2020-04-13T23:49:21", "2500-04-13T23:49:21"), 3, ingest.Options{Instance: "SQL01"}}, // the 3014 line cites the restore
		// A backup set finished in 9999.
		{ingest.Backups, edit("backups/testdata/export_sqlcmd.csv", 3, "2026-11-01 22:20:31.000", "9999-12-31 23:59:59.000"), 3, ingest.Options{}},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			db := storetest.OpenEngine(t)
			l := ingest.NewLoader(db, ingest.LoaderOptions{})
			st, err := l.Store(context.Background(), ingest.Input{Kind: tc.kind, Name: "in." + string(tc.kind), R: strings.NewReader(tc.text), Options: tc.opt})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, r := range st.Rejects {
				if r.File == "in."+string(tc.kind) && r.Line == tc.line && strings.Contains(r.Reason, "outside") {
					found = true
				}
			}
			if !found {
				t.Errorf("no reject of line %d naming the range; rejects: %v", tc.line, st.Rejects)
			}
		})
	}
}
