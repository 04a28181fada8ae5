package messages_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/messages"
	"github.com/restorewatch/restorewatch/store"
)

// sampleAt dates the restores of files without "Completion time:" stamps in
// the tests that are about something else: untimed restores are rejected.
var sampleAt = time.Date(2024, 3, 18, 2, 0, 0, 0, time.UTC)

// parseFile parses testdata/name, dating unstamped restores at sampleAt
// unless opt says otherwise (undated: pass noAt).
func parseFile(t *testing.T, name string, opt messages.Options) (*store.Collect, messages.Stats) {
	t.Helper()
	switch {
	case opt.At.IsZero():
		opt.At = sampleAt
	case opt.At.Equal(noAt):
		opt.At = time.Time{}
	}
	return parsePath(t, filepath.Join("testdata", name), name, opt)
}

// noAt asks parseFile for no --at.
var noAt = time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC)

func parsePath(t *testing.T, path, name string, opt messages.Options) (*store.Collect, messages.Stats) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opt.File = name
	if opt.Instance == "" {
		opt.Instance = `SQL01\PROD`
	}
	var c store.Collect
	st, err := messages.Parse(context.Background(), f, opt, &c)
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	return &c, st
}

// brief is the part of a LogRestore the table below checks.
type brief struct {
	Line      int
	Database  string
	Kind      store.Kind
	Statement string
	Pages     int64
	Seconds   float64
	MBps      float64
}

func briefs(ls []store.LogRestore) []brief {
	var out []brief
	for _, l := range ls {
		out = append(out, brief{l.Origin.Line, l.Database, l.Kind, l.Statement, l.Pages, l.Seconds, l.MBps})
	}
	return out
}

func TestSamples(t *testing.T) {
	for _, tc := range []struct {
		file string
		opt  messages.Options
		want []brief
	}{
		{"full_then_logs.txt", messages.Options{}, []brief{
			{9, "demirtest", store.KindFullOrDiff, "RESTORE DATABASE", 482, 0.028, 134.225},
			{13, "demirtest", store.KindLog, "RESTORE LOG", 4, 0.003, 8.626},
		}},
		{"commented.txt", messages.Options{}, []brief{
			{9, "demirtest", store.KindFullOrDiff, "RESTORE DATABASE", 482, 0.028, 134.225},
			{13, "demirtest", store.KindLog, "RESTORE LOG", 4, 0.003, 8.626},
		}},
		{"stopat_log.txt", messages.Options{}, []brief{
			{7, "EP1", store.KindLog, "RESTORE LOG", 55554, 1.778, 244.101},
		}},
		{"ssms_completion.txt", messages.Options{}, []brief{
			{3, "IronOreSilicaPrediction_2", store.KindFullOrDiff, "RESTORE DATABASE", 51650, 6.543, 61.670},
		}},
		{"ssms_completion_utf16.txt", messages.Options{}, []brief{
			{3, "IronOreSilicaPrediction_2", store.KindFullOrDiff, "RESTORE DATABASE", 51650, 6.543, 61.670},
		}},
		{"upgrade_steps.txt", messages.Options{}, []brief{
			{2, "WideWorldImporters", store.KindFullOrDiff, "RESTORE DATABASE", 58455, 18.069, 25.273},
		}},
		{"kb224071_bare.txt", messages.Options{Database: "kbdb"}, []brief{
			{1, "kbdb", store.KindFullOrDiff, "RESTORE DATABASE", 315, 0.372, 6.604},
		}},
		{"agent_success.txt", messages.Options{}, []brief{
			{1, "x", store.KindFullOrDiff, "RESTORE DATABASE", 482, 0.028, 134.225},
		}},
		{"agent_localized.txt", messages.Options{}, []brief{
			{1, "Lager", store.KindFullOrDiff, "RESTORE DATABASE", 1203, 0.150, 62.657},
			{2, "Склад", store.KindLog, "RESTORE LOG", 40, 0.010, 31.250},
		}},
		{"sqlcmd_headers.txt", messages.Options{}, []brief{
			{8, "Payroll", store.KindFullOrDiff, "RESTORE DATABASE", 298, 0.064, 36.376},
		}},
		{"backup_stats.txt", messages.Options{}, nil},
		{"agent_failed.txt", messages.Options{}, nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			c, _ := parseFile(t, tc.file, tc.opt)
			if len(c.Rejects) != 0 {
				t.Errorf("rejects %v", c.Rejects)
			}
			if got := briefs(c.LogRestores); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("\n got %+v\nwant %+v", got, tc.want)
			}
			for _, l := range c.LogRestores {
				if err := l.Validate(); err != nil {
					t.Errorf("line %d: %v", l.Origin.Line, err)
				}
				if !l.Has3014 || l.Instance != `SQL01\PROD` || l.Origin.Source != "messages" || l.Origin.File != tc.file {
					t.Errorf("restore %+v", l)
				}
			}
		})
	}
}

func TestCompletionTime(t *testing.T) {
	c, st := parseFile(t, "ssms_completion.txt", messages.Options{})
	l := c.LogRestores[0]
	want := time.Date(2020, 4, 13, 23, 49, 21, 160098600, time.UTC)
	if !l.CompletedAt.Equal(want) || l.CompletedAt.Location() != time.UTC || l.UTCOffset == nil || *l.UTCOffset != -420 {
		t.Errorf("completed %v offset %v, want wall %v offset -420", l.CompletedAt, l.UTCOffset, want)
	}
	if st.Untimed != 0 || st.Restores != 1 || st.Lines != 5 {
		t.Errorf("stats %+v", st)
	}
	// Without a stamp, --at dates the restores; without it they stay undated.
	at := time.Date(2024, 3, 18, 9, 30, 0, 0, time.FixedZone("", 5*3600+30*60))
	c, st = parseFile(t, "full_then_logs.txt", messages.Options{At: at})
	for _, l := range c.LogRestores {
		if l.CompletedAt != time.Date(2024, 3, 18, 9, 30, 0, 0, time.UTC) || *l.UTCOffset != 330 {
			t.Errorf("at: completed %v offset %v", l.CompletedAt, *l.UTCOffset)
		}
	}
	if st.Untimed != 0 {
		t.Errorf("untimed = %d", st.Untimed)
	}
	// Without a stamp and without --at nothing dates them: they are
	// rejected with the advice, not stored where no list shows them (the
	// old expectation, "kept without a time", was the bug of issue 17).
	c, st = parseFile(t, "full_then_logs.txt", messages.Options{At: noAt})
	if len(c.LogRestores) != 0 {
		t.Errorf("undated restores stored: %+v", c.LogRestores)
	}
	if st.Untimed != 2 || st.UntimedAdvice != messages.UntimedAdvice || st.Rejects != 2 || len(c.Rejects) != 2 {
		t.Errorf("untimed = %d, advice %q, rejects %v", st.Untimed, st.UntimedAdvice, c.Rejects)
	}
	for i, want := range []int{9, 13} {
		if i < len(c.Rejects) && (c.Rejects[i].Line != want || !strings.Contains(c.Rejects[i].Reason, "--at 2025-03-01T02:00:00Z")) {
			t.Errorf("reject %d = %v, want line %d with the --at advice", i, c.Rejects[i], want)
		}
	}
}

// TestBatches covers several SSMS batches: each stamp dates the statements
// since the previous one, a failed statement is no restore and no reject, a
// file restore is told by its statement, and a database name with quotes and
// a comma survives.
func TestBatches(t *testing.T) {
	c, st := parseFile(t, "batches.txt", messages.Options{})
	got := briefs(c.LogRestores)
	want := []brief{
		{6, `O'Brien, "Ltd"`, store.KindFull, "RESTORE DATABASE", 1005, 2, 3.925},
		{9, `O'Brien, "Ltd"`, store.KindLog, "RESTORE LOG", 12, 0.005, 18.75},
		{19, "Sales", store.KindFile, "RESTORE DATABASE ... FILE=Sales_Archive", 64, 0.1, 5},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
	stamps := []struct {
		at  time.Time
		off int
	}{
		{time.Date(2024, 3, 18, 9, 30, 5, 123456700, time.UTC), 60},
		{time.Date(2024, 3, 18, 9, 30, 5, 123456700, time.UTC), 60},
		{time.Date(2024, 10, 27, 2, 30, 0, 0, time.UTC), 0},
	}
	for i, l := range c.LogRestores {
		if i < len(stamps) && (!l.CompletedAt.Equal(stamps[i].at) || *l.UTCOffset != stamps[i].off) {
			t.Errorf("restore %d completed %v offset %d, want %v %d", i, l.CompletedAt, *l.UTCOffset, stamps[i].at, stamps[i].off)
		}
	}
	if len(c.LogRestores) > 0 && len(c.LogRestores[0].Phases) != 2 {
		t.Errorf("phases of the first restore = %+v, want its two Processed lines", c.LogRestores[0].Phases)
	}
	if len(c.Rejects) != 1 || c.Rejects[0].Line != 20 || !strings.Contains(c.Rejects[0].Reason, "no database") {
		t.Errorf("rejects %v, want the unnamed log restore on line 20", c.Rejects)
	}
	if st.Failed != 1 || st.Restores != 3 || st.Backups != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestNotRestores(t *testing.T) {
	_, st := parseFile(t, "backup_stats.txt", messages.Options{Database: "x"})
	if st.Backups != 1 || st.Restores != 0 {
		t.Errorf("backup: stats %+v", st)
	}
	_, st = parseFile(t, "agent_failed.txt", messages.Options{Database: "x"})
	if st.Failed != 1 || st.Restores != 0 {
		t.Errorf("failed job: stats %+v", st)
	}
}

func TestMissingDatabase(t *testing.T) {
	c, _ := parseFile(t, "missing_db.txt", messages.Options{})
	if got := briefs(c.LogRestores); len(got) != 1 || got[0].Line != 3 || got[0].Database != "named" {
		t.Errorf("restores %+v", got)
	}
	// A database is never carried from one statement to the next.
	if len(c.Rejects) != 2 || c.Rejects[0].Line != 1 || c.Rejects[1].Line != 4 || c.Rejects[0].File != "missing_db.txt" {
		t.Errorf("rejects %v, want lines 1 and 4", c.Rejects)
	}
	c, _ = parseFile(t, "missing_db.txt", messages.Options{Database: "given"})
	var dbs []string
	for _, l := range c.LogRestores {
		dbs = append(dbs, l.Database)
	}
	if !reflect.DeepEqual(dbs, []string{"given", "named", "given"}) || len(c.Rejects) != 0 {
		t.Errorf("with a database given: %v, rejects %v", dbs, c.Rejects)
	}
}

func TestUpgradePhase(t *testing.T) {
	c, _ := parseFile(t, "upgrade_steps.txt", messages.Options{})
	ph := c.LogRestores[0].Phases
	if len(ph) != 1 || ph[0].Text != "Database 'WideWorldImporters' running the upgrade step from version 868 to version 869." {
		t.Errorf("phases %+v", ph)
	}
}

func TestNeedsInstance(t *testing.T) {
	_, err := messages.Parse(context.Background(), strings.NewReader("x"), messages.Options{File: "f"}, &store.Collect{})
	if store.ErrorCode(err) != store.EINVALID {
		t.Errorf("err = %v, want invalid", err)
	}
}

func TestLongLine(t *testing.T) {
	in := strings.Repeat("x", 3<<20) + "\nProcessed 1 pages for database 'd', file 'f' on file 1.\n" +
		"RESTORE LOG successfully processed 1 pages in 0.001 seconds (7.812 MB/sec).\n"
	var c store.Collect
	st, err := messages.Parse(context.Background(), strings.NewReader(in), messages.Options{Instance: "S", At: sampleAt}, &c)
	if err != nil || len(c.LogRestores) != 1 || c.LogRestores[0].Origin.Line != 3 || st.Lines != 3 {
		t.Errorf("err %v restores %+v stats %+v", err, c.LogRestores, st)
	}
}
