package backups_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/backups"
	"github.com/restorewatch/restorewatch/store"
)

func parseFile(t *testing.T, name string, opt backups.Options) ([]store.BackupSet, backups.Stats, error) {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opt.File = name
	return backups.Parse(context.Background(), f, opt)
}

func TestExportSqlcmd(t *testing.T) {
	sets, st, err := parseFile(t, "export_sqlcmd.csv", backups.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Rejects) != 0 || st.Rows != 5 || len(sets) != 4 {
		t.Fatalf("rows %d, sets %d, rejects %v", st.Rows, len(sets), st.Rejects)
	}
	full := sets[0]
	if full.Instance != `SQL01\PROD` || full.Database != "Sales, EU" || full.Type != "D" || full.Families != 2 || !full.Checksums {
		t.Errorf("full %+v", full)
	}
	// time_zone 4 = UTC+1: 22:00 local is 21:00 UTC.
	if !full.Start.Equal(time.Date(2026, 11, 1, 21, 0, 0, 0, time.UTC)) || full.UTCOffset == nil || *full.UTCOffset != 60 {
		t.Errorf("start %v offset %v", full.Start, full.UTCOffset)
	}
	if len(full.Media) != 2 || full.Media[1].Device != `\\backup01\sql\Sales_EU_FULL_2.bak` || full.Media[1].Family != 2 || full.Media[0].DeviceType != 2 {
		t.Errorf("media %+v", full.Media)
	}
	if len(full.Files) != 2 || full.Files[0].PhysicalName != `D:\Data\Sales, EU.mdf` || full.Files[1].Type != "L" || full.Files[0].Filegroup != "PRIMARY" {
		t.Errorf("files %+v", full.Files)
	}
	if full.Size != 42949672960 || full.CompressedSize != 12884901888 || full.SoftwareBuild != "15.0.4153" || full.DiffBaseLSN != "" {
		t.Errorf("sizes %+v", full)
	}
	diff := sets[1]
	if diff.Type != "I" || diff.DiffBaseGUID != full.UUID || diff.DiffBaseLSN != full.CheckpointLSN || len(diff.Files) != 0 {
		t.Errorf("diff %+v", diff)
	}
	if sets[2].Media[0].DeviceType != 9 || !strings.HasPrefix(sets[2].Media[0].Device, "https://") {
		t.Errorf("log %+v", sets[2].Media)
	}
	cp := sets[3]
	if !cp.CopyOnly || cp.UTCOffset != nil || !cp.Finish.Equal(time.Date(2026, 11, 2, 22, 20, 2, 0, time.UTC)) || cp.CompressedSize != 0 {
		t.Errorf("copy-only log %+v", cp)
	}
}

func TestDbatoolsRawCultures(t *testing.T) {
	var first []store.BackupSet
	for _, name := range []string{"dbatools_raw_en-US.csv", "dbatools_raw_de-DE.csv"} {
		sets, st, err := parseFile(t, name, backups.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Rejects) != 0 || len(sets) != 3 {
			t.Fatalf("%s: %d sets, rejects %v", name, len(sets), st.Rejects)
		}
		full := sets[0]
		if full.Instance != "SQL02" || full.Type != "D" || full.Families != 2 || len(full.Media) != 2 || full.Media[1].Family != 2 ||
			full.Media[1].Device != `G:\Backup\Sales_FULL_2.bak` || full.Media[0].DeviceType != 2 {
			t.Errorf("%s: full %+v", name, full)
		}
		if !full.Finish.Equal(time.Date(2026, 11, 13, 22, 14, 7, 0, time.UTC)) || full.UTCOffset != nil {
			t.Errorf("%s: finish %v", name, full.Finish)
		}
		if sets[1].Type != "I" || sets[1].DatabaseBackupLSN != full.CheckpointLSN || sets[2].Type != "L" || full.Size != 21474836480 {
			t.Errorf("%s: %+v", name, sets[1:])
		}
		if first == nil {
			first = sets
			continue
		}
		for i := range sets {
			if sets[i].UUID != first[i].UUID || !sets[i].Start.Equal(first[i].Start) || sets[i].LastLSN != first[i].LastLSN {
				t.Errorf("%s differs from en-US at set %d", name, i)
			}
		}
	}
}

func TestDbatoolsDefaultExportRefused(t *testing.T) {
	_, _, err := parseFile(t, "dbatools_default.csv", backups.Options{})
	if !errors.Is(err, backups.ErrDefaultExport) || !strings.Contains(err.Error(), "-Raw") || !strings.Contains(err.Error(), "dbatools_default.csv:2") {
		t.Fatalf("err %v", err)
	}
	// A raw header with a System.String[] path (a default object piped
	// through Select-Object) is refused row by row, never stored.
	raw, _ := os.ReadFile("testdata/dbatools_raw_en-US.csv")
	bad := strings.Replace(string(raw), `"G:\Backup\Sales_DIFF.bak"`, `"System.String[]"`, 1)
	sets, st, err := backups.Parse(context.Background(), strings.NewReader(bad), backups.Options{File: "x.csv"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sets {
		for _, m := range s.Media {
			if strings.Contains(m.Device, "System.") {
				t.Errorf("kept %q", m.Device)
			}
		}
	}
	if len(st.Rejects) != 1 || st.Rejects[0].Line != 4 || !strings.Contains(st.Rejects[0].Reason, "-Raw") {
		t.Errorf("rejects %v", st.Rejects)
	}
}

func TestDateOrder(t *testing.T) {
	csv := "\"Database\",\"server\",\"Start\",\"End\",\"Path\",\"Type\",\"MediaSetId\",\"BackupSetId\",\"first_lsn\",\"last_lsn\"\n" +
		"\"D\",\"S\",\"03/04/2026 10:00:00\",\"03/04/2026 10:10:00\",\"x.bak\",\"Full\",\"1\",\"1\",\"1\",\"2\"\n"
	for _, c := range []struct {
		format string
		month  time.Month
	}{{"DMY", time.April}, {"dd/MM/yyyy", time.April}, {"MDY", time.March}, {"02/01/2006", time.April}} {
		sets, st, err := backups.Parse(context.Background(), strings.NewReader(csv), backups.Options{DateFormat: c.format})
		if err != nil || len(sets) != 1 {
			t.Fatalf("%q: %v %v", c.format, err, st.Rejects)
		}
		if sets[0].Start.Month() != c.month {
			t.Errorf("%q: %v", c.format, sets[0].Start)
		}
	}
	// Nothing in the file tells 03/04 apart: a question, never a guess.
	if _, _, err := backups.Parse(context.Background(), strings.NewReader(csv), backups.Options{}); store.ErrorCode(err) != store.EINVALID || !strings.Contains(err.Error(), "--date-format") {
		t.Errorf("ambiguous dates without --date-format: %v", err)
	}
	if _, _, err := backups.Parse(context.Background(), strings.NewReader(csv), backups.Options{DateFormat: "weird"}); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("bad --date-format: %v", err)
	}
	// A day above 12 anywhere in the file settles the order.
	gb := strings.Replace(csv, "03/04/2026 10:10:00", "13/04/2026 10:10:00", 1)
	sets, _, _ := backups.Parse(context.Background(), strings.NewReader(gb), backups.Options{})
	if len(sets) != 1 || sets[0].Start.Month() != time.April {
		t.Errorf("inferred: %+v", sets)
	}
}

func TestBadRowsAreRejectsWithLines(t *testing.T) {
	raw, _ := os.ReadFile("testdata/export_sqlcmd.csv")
	lines := strings.Split(string(raw), "\r\n")
	lines[4] = strings.Replace(lines[4], "39000000011000001", "39:1:1", 1)     // the differential's first_lsn
	lines[5] = strings.Replace(lines[5], "2026-11-02 22:15:04.000", "soon", 1) // the log's finish
	sets, st, err := backups.Parse(context.Background(), strings.NewReader(strings.Join(lines, "\r\n")), backups.Options{File: "b.csv"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 2 || len(st.Rejects) != 2 {
		t.Fatalf("%d sets, rejects %v", len(sets), st.Rejects)
	}
	if r := st.Rejects[0]; r.File != "b.csv" || r.Line != 5 || !strings.Contains(r.Reason, "first_lsn") {
		t.Errorf("reject %v", r)
	}
	if r := st.Rejects[1]; r.Line != 6 || !strings.Contains(r.Reason, "backup_finish_date") {
		t.Errorf("reject %v", r)
	}
	if _, _, err := backups.Parse(context.Background(), strings.NewReader("a,b,c\n1,2,3\n"), backups.Options{File: "c.csv"}); store.ErrorCode(err) != store.EINVALID ||
		!strings.Contains(err.Error(), "c.csv:1") {
		t.Errorf("unknown header: %v", err)
	}
}
