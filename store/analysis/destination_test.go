package analysis_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

// TestRegressionOnMovedDataFiles: a restore that slows when its data files
// go to another volume (msdb's restorefile) names the destination as what
// changed.
func TestRegressionOnMovedDataFiles(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	im, err := db.NewImport(ctx, "test", "moved")
	if err != nil {
		t.Fatal(err)
	}
	zero, size := 0, int64(50)<<30
	start := time.Date(2025, 3, 1, 2, 0, 0, 0, time.UTC)
	for d := range 20 {
		at := start.AddDate(0, 0, d)
		secs := 200 + float64(d%3)
		files := []string{`D:\Data\Sales.mdf`, `L:\Log\Sales_log.ldf`}
		if d >= 12 {
			secs /= 0.4
			files = []string{`S:\Slow\Sales.mdf`, `L:\Log\Sales_log.ldf`}
		}
		lsn := strconv.Itoa(1000000 + d*10)
		if err := im.History(store.HistoryRow{Instance: "SQL01", RestoreHistoryID: int64(d + 1), RestoreDate: at, Database: "Sales",
			RestoreType: "D", BackupType: "D", FirstLSN: lsn, LastLSN: lsn + "5", BackupSize: &size, DestinationFiles: files,
			Origin: store.Origin{Source: "history", File: "h.csv", Line: d + 2}}); err != nil {
			t.Fatal(err)
		}
		if err := im.LogRestore(store.LogRestore{Instance: "SQL01", Database: "Sales", Kind: store.KindFull, MessageID: 18267,
			CompletedAt: at.Add(time.Duration(secs * float64(time.Second))), UTCOffset: &zero, FirstLSN: lsn, LastLSN: lsn + "5",
			Has3014: true, Pages: size / 8192, Seconds: secs, MBps: 100,
			Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: 100 + d}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := im.CommitAndReconcile(); err != nil {
		t.Fatal(err)
	}
	if _, err := analysis.Run(ctx, db, nil, analysis.Options{Now: start.AddDate(0, 1, 0)}); err != nil {
		t.Fatal(err)
	}
	regs, err := db.ListRegressions(ctx, store.RegressionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(regs) != 1 {
		t.Fatalf("%d regressions, want 1", len(regs))
	}
	fc := regs[0].ChangedFactors
	if len(fc) == 0 || fc[0].Factor != "destination" || fc[0].Before != `D:\Data\ | L:\Log\` || fc[0].After != `L:\Log\ | S:\Slow\` {
		t.Errorf("changed factors %+v: want destination D:\\Data\\ | L:\\Log\\ → L:\\Log\\ | S:\\Slow\\ first", fc)
	}
}
