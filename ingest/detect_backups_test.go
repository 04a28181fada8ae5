package ingest_test

import (
	"os"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest"
)

// A backup export is told from a restore history by its header, whichever
// exporter wrote it; restore histories stay histories.
func TestDetectBackupExports(t *testing.T) {
	for path, want := range map[string]ingest.FileKind{
		"backups/testdata/export_sqlcmd.csv":      ingest.Backups,
		"backups/testdata/dbatools_raw_en-US.csv": ingest.Backups,
		"backups/testdata/dbatools_raw_de-DE.csv": ingest.Backups,
		"backups/testdata/dbatools_default.csv":   ingest.Backups, // refused by the parser, with the -Raw advice
		"csv/testdata/sqlcmd_w.csv":               ingest.History,
		"csv/testdata/exportcsv_ps5_utf16.csv":    ingest.History,
	} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		kind, why, err := ingest.Detect(f)
		f.Close()
		if err != nil || kind != want {
			t.Errorf("%s: %q (%s), %v; want %q", path, kind, why, err, want)
		}
		if want == ingest.Backups && !strings.Contains(why, "backup history") {
			t.Errorf("%s: why %q", path, why)
		}
	}
	if k, err := ingest.ParseKind("backups"); err != nil || k != ingest.Backups {
		t.Errorf("ParseKind: %q %v", k, err)
	}
}
