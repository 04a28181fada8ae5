package analysis_test

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

func facts(steps []analysis.NextStep) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Fact)
	}
	return out
}

func TestNextStepsFollowWhatIsMissing(t *testing.T) {
	all := map[string]string{"device_kind": store.DeviceLocal, "ifi": "enabled", "loaded_modules": "none",
		"io_alignment": "512", "instance_build": "15.0.4236.7", "cpu_count": "8"}
	side := func(n int, m map[string]string) []map[string]string { return slices.Repeat([]map[string]string{m}, n) }
	// Everything the warehouse records is known: only what it never
	// records is left, the share last for a local backup.
	got := facts(analysis.NextSteps(analysis.NextStepFacts{Instance: "SQL1", Database: "O'Brien", Before: side(5, all), After: side(5, all)}))
	if want := []string{"filter_drivers", "vlfs", "file_growth", "share_latency"}; !slices.Equal(got, want) {
		t.Errorf("all recorded: steps %q, want %q", got, want)
	}
	// Seed 001: backups on a share, IFI known only before the change, no
	// module list: the share comes first, then what is missing.
	unc := map[string]string{"device_kind": store.DeviceUNC, "io_alignment": "512", "instance_build": "15.0.4236.7", "cpu_count": "8"}
	before := map[string]string{"device_kind": store.DeviceUNC, "ifi": "enabled", "io_alignment": "512", "instance_build": "15.0.4236.7", "cpu_count": "8"}
	steps := analysis.NextSteps(analysis.NextStepFacts{Instance: "DWH-SQL02", Database: "O'Brien", Before: side(4, before), After: side(6, unc)})
	got = facts(steps)
	if want := []string{"share_latency", "filter_drivers", "loaded_modules", "ifi", "vlfs", "file_growth"}; !slices.Equal(got, want) {
		t.Errorf("seed 001: steps %q, want %q", got, want)
	}
	for _, s := range steps {
		switch s.Fact {
		case "ifi":
			if s.Missing != "known for 4 of 4 restores before the change and 0 of 6 since" || !strings.Contains(s.Command, "instant_file_initialization_enabled") {
				t.Errorf("ifi step %+v", s)
			}
		case "vlfs":
			if !strings.Contains(s.Command, "sys.dm_db_log_info(DB_ID(N'O''Brien'))") {
				t.Errorf("vlf query %q does not quote the database's name", s.Command)
			}
		case "loaded_modules":
			if !strings.Contains(s.Command, "sys.dm_os_loaded_modules") || s.Where != "on DWH-SQL02" {
				t.Errorf("modules step %+v", s)
			}
		}
	}
}

// TestRegressionNextStepsOnAGeneratedRegression: a series that slowed to
// 0.4× with every recorded factor the same gets next steps; the facts its
// restores record (IFI, from the host; alignment, from trace flag 3213) are
// not asked for, those they lack (loaded modules) are.
func TestRegressionNextStepsOnAGeneratedRegression(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "steps.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	im, err := db.NewImport(ctx, "test", "steps")
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	zero, on, cores := 0, true, int64(8)
	start := time.Date(2025, 3, 1, 2, 0, 0, 0, time.UTC)
	must(im.Host(store.HostSnapshot{Instance: "FS-SQL01", ObservedAt: start.AddDate(0, 0, -1), UTCOffset: &zero,
		Version: "15.0.4236.7", IFI: &on, Cores: &cores, Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: 1}}))
	size := int64(200) << 30
	for d := range 24 {
		at := start.AddDate(0, 0, d)
		secs := 4*3600 + float64(d%4*60)
		if d >= 12 {
			secs = 10*3600 + float64(d%4*60) // seed 001: 4 h became 10 h
		}
		lsn := strconv.Itoa(1000000 + d*10)
		must(im.History(store.HistoryRow{Instance: "FS-SQL01", RestoreHistoryID: int64(d + 1), RestoreDate: at, Database: "Sales",
			RestoreType: "D", BackupType: "D", FirstLSN: lsn, LastLSN: lsn + "5", BackupSize: &size, SourceServer: "PROD",
			Devices: []string{`\\filer\sql\Sales_` + lsn + ".bak"}, Origin: store.Origin{Source: "history", File: "h.csv", Line: d + 2}}))
		must(im.LogRestore(store.LogRestore{Instance: "FS-SQL01", Database: "Sales", Kind: store.KindFull, MessageID: 18267,
			CompletedAt: at.Add(time.Duration(secs * float64(time.Second))), UTCOffset: &zero, FirstLSN: lsn, LastLSN: lsn + "5",
			Has3014: true, Pages: size / 8192, Seconds: secs, MBps: 10,
			Buffer: &store.BufferConfig{BufferCount: 7, MaxTransferKiB: 1024, IOAlignment: 512},
			Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: 100 + d}}))
	}
	if _, err := im.CommitAndReconcile(); err != nil {
		t.Fatal(err)
	}
	if _, err := analysis.Run(ctx, db, nil, analysis.Options{Now: start.AddDate(0, 1, 0)}); err != nil {
		t.Fatal(err)
	}
	regs, err := db.ListRegressions(ctx, store.RegressionFilter{})
	if err != nil || len(regs) != 1 {
		t.Fatalf("regressions %+v, %v; want the one", regs, err)
	}
	if len(regs[0].ChangedFactors) != 0 {
		t.Fatalf("changed factors %+v; the generated series changes none", regs[0].ChangedFactors)
	}
	steps, err := analysis.RegressionNextSteps(ctx, db, &regs[0])
	if err != nil {
		t.Fatal(err)
	}
	got := facts(steps)
	if want := []string{"share_latency", "filter_drivers", "loaded_modules", "vlfs", "file_growth"}; !slices.Equal(got, want) {
		t.Errorf("steps %q, want %q", got, want)
	}
	if steps[0].Where != "on FS-SQL01 while a restore runs" || !strings.Contains(steps[0].Why, "network share (UNC)") || strings.Contains(steps[0].Why, store.DeviceUNC) {
		t.Errorf("share step %+v", steps[0])
	}
}

// TestFactorNextSteps: a regression whose restores differ in a recorded
// factor has a next step about that factor (issue 38): the share measured,
// the buffers set back (one step for both settings, with the values that
// ran before), the builds compared with the rollback's evidence.
func TestFactorNextSteps(t *testing.T) {
	for _, tc := range []struct {
		factors []store.FactorChange
		fact    string
		want    []string
	}{
		{[]store.FactorChange{{Factor: "device_kind", Before: "local", After: "unc_share", Score: 1}}, "share_latency",
			[]string{"a local disk to a network share (UNC)", "Get-Counter"}},
		{[]store.FactorChange{{Factor: "buffer_count", Before: "64", After: "7", Score: 1}, {Factor: "max_transfer_size", Before: "4096", After: "1024", Score: 1}},
			"buffers", []string{"BUFFERCOUNT = 64, MAXTRANSFERSIZE = 4194304", "BUFFERCOUNT 64 and MAXTRANSFERSIZE 4096 KiB", "[O]]rders]"}},
		{[]store.FactorChange{{Factor: "instance_build", Before: "15.0.4236.7", After: "15.0.4355.3", Score: 1}}, "instance_build",
			[]string{"roll back, or move past 15.0.4355.3", "restores on 15.0.4236.7 ran at 251 MiB/s", "ProductVersion"}},
		{[]store.FactorChange{{Factor: "cpu_count", Before: "8", After: "32", Score: 1}}, "cpu_count", []string{"Set the cpu count back", "8 before the change and 32 since"}},
	} {
		r := &store.Regression{Instance: "SQL01", Database: "O]rders", BaselineMiBps: 251, CurrentMiBps: 127, ChangedFactors: tc.factors}
		steps := analysis.FactorNextSteps(r)
		if len(steps) != 1 || steps[0].Fact != tc.fact {
			t.Errorf("%v: steps %+v, want one %s", tc.factors, steps, tc.fact)
			continue
		}
		all := steps[0].Name + " " + steps[0].Why + " " + steps[0].Command
		for _, w := range tc.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: %q lacks %q", tc.fact, all, w)
			}
		}
	}
	if analysis.FactorNextSteps(&store.Regression{}) != nil {
		t.Error("next steps about factors for a regression with none")
	}
}
