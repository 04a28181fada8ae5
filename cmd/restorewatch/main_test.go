package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
)

// TestMain lets the test binary act as restorewatch itself when RW_AS_MAIN
// is set, so crash tests can kill a real import process.
func TestMain(m *testing.M) {
	if os.Getenv("RW_AS_MAIN") == "1" {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(pgtest.Main(m)) // stops the PostgreSQL tests' cluster, if they started one
}

// runMain runs the program in-process and returns stdout, stderr and the
// exit status.
func runMain(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	m := NewMain()
	m.Stdout, m.Stderr, m.IsTerminal, m.Width = &out, &errb, false, 0
	code := 0
	if err := m.ParseFlags(args); err != nil {
		if err == errHelpShown {
			return out.String(), errb.String(), 0
		}
		return out.String(), err.Error(), 2
	}
	err := m.Run(context.Background())
	if cerr := m.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		errb.WriteString(err.Error())
		code = 1
		if errors.As(err, new(usageError)) {
			code = 2
		}
	}
	return out.String(), errb.String(), code
}

func TestImportThenListAsJSON(t *testing.T) {
	db := newDB(t, "w.db")
	logs, _ := filepath.Glob("../../ingest/errorlog/testdata/full_diff_log_norecovery_2023.log")
	out, stderr, code := runMain(t, "import", "errorlog", "--db", db, "--instance", "LNX01", logs[0])
	if code != 0 {
		t.Fatalf("import exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "added 3") {
		t.Errorf("summary does not say 3 restores were added: %s", out)
	}
	out, stderr, code = runMain(t, "restores", "--db", db, "--format", "json")
	if code != 0 {
		t.Fatalf("restores exit %d: %s", code, stderr)
	}
	for _, field := range []string{`"instance"`, `"database"`, `"kind"`, `"started_at"`, `"finished_at"`, `"duration_s"`,
		`"duration_source"`, `"backup_bytes"`, `"compressed_bytes"`, `"logical_mibps"`, `"read_mibps"`, `"instance_build"`,
		`"source_server"`, `"source_build"`, `"compressed"`, `"devices"`, `"stripes"`, `"buffer_count"`,
		`"max_transfer_kib"`, `"io_alignment"`} {
		if !strings.Contains(out, field) {
			t.Errorf("restores JSON lacks %s", field)
		}
	}
	if !strings.Contains(out, `"SQLTestDB"`) || !strings.Contains(out, `"engine_3014"`) {
		t.Errorf("restores JSON lacks the imported restore: %s", out)
	}
}

func TestExitCodes(t *testing.T) {
	db := newDB(t, "w.db")
	if _, _, code := runMain(t, "import", "bogus", "x", "--db", db); code != 2 {
		t.Errorf("unknown kind: exit %d, want 2", code)
	}
	if _, _, code := runMain(t, "restores", "--format", "xml", "--db", db); code != 2 {
		t.Errorf("bad format: exit %d, want 2", code)
	}
	_, stderr, code := runMain(t, "import", "history", "--db", db, filepath.Join(t.TempDir(), "missing.csv"))
	if code != 1 || !strings.Contains(stderr, "could not be imported") {
		t.Errorf("missing file: exit %d, stderr %q; want 1 and a clear sentence", code, stderr)
	}
	bad := "../../ingest/csv/testdata/bad_rows.csv"
	if _, _, code := runMain(t, "import", "history", "--db", db, bad); code != 0 {
		t.Errorf("file with some bad rows: exit %d, want 0 (rejects listed, rest imported)", code)
	}
	if _, _, code := runMain(t, "import", "history", "--strict", "--db", db, bad); code != 1 {
		t.Errorf("--strict with rejects: exit %d, want 1", code)
	}
}

// The running command's analysis options are found where the warehouse is
// opened (issue 41: each command once had to set them before opening it,
// or an interrupted run was completed with the defaults): a command's
// flags, and the defaults for a command without any.
func TestAnalysisOptionsOfTheRunningCommand(t *testing.T) {
	for _, c := range []struct {
		args  []string
		ratio float64
	}{
		{[]string{"analyze", "--ratio", "0.8"}, 0.8},
		{[]string{"import", "--ratio", "0.5", "history", "x.csv"}, 0.5},
		{[]string{"plan", "--instance", "a", "--database", "b"}, 0.67},
		{[]string{"restores"}, 0.67},
	} {
		m := NewMain()
		m.Stdout, m.Stderr = io.Discard, io.Discard
		if err := m.ParseFlags(c.args); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		opt, err := m.analysisOptions()
		if err != nil || opt.Config.Ratio != c.ratio {
			t.Errorf("%v: ratio %v (%v), want %v", c.args, opt.Config.Ratio, err, c.ratio)
		}
	}
}
