package errorlog_test

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/errorlog"
	"github.com/restorewatch/restorewatch/store"
)

// The fixtures of testdata/realworld/errorlog are built from the real logs
// of testdata/ (see the README there for how and from what).
const realworld = "../../testdata/realworld/errorlog"

func realFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(realworld, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fact is what a restore says, without where in which file it was read.
type fact struct {
	Database, Kind   string
	MessageID        int
	At               string
	FirstLSN, Last   string
	Pages            int64
	Seconds          float64
	Recovery         bool
	Devices          int
	HasThe3014, Name bool
}

func facts(rs []store.LogRestore) []fact {
	var out []fact
	for _, l := range rs {
		out = append(out, fact{l.Database, string(l.Kind), l.MessageID, l.CompletedAt.Format("2006-01-02 15:04:05.00"),
			l.FirstLSN, l.LastLSN, l.Pages, l.Seconds, l.Recovery != nil, len(l.Devices), l.Has3014, l.Instance != ""})
	}
	return out
}

// parts parses the source fixtures one by one, as the user would have, and
// returns their restores and the builds their startups name.
func parts(t *testing.T, names ...string) (restores []fact, hosts []string) {
	t.Helper()
	for _, n := range names {
		r := parseBytes(t, n, fixture(t, n), "SQL01")
		if r.err != nil || len(r.got.Rejects) != 0 {
			t.Fatalf("%s: %v %v", n, r.err, r.got.Rejects)
		}
		restores = append(restores, facts(r.got.LogRestores)...)
		hosts = append(hosts, versions(r.got.Hosts)...)
	}
	return restores, hosts
}

func versions(hs []store.HostSnapshot) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Version+" "+h.ObservedAt.Format("2006-01-02 15:04:05"))
	}
	return out
}

// TestMixedEncodingFiles: logs concatenated or pasted across encodings give
// the records their parts give, with no reject: "cat ERRORLOG.1 ERRORLOG" of
// two UTF-16 logs (a byte-order mark in mid-file, before the second log's
// banner), a UTF-16 log appended to a UTF-8 one and the reverse.
func TestMixedEncodingFiles(t *testing.T) {
	for _, tc := range []struct {
		file           string
		parts          []string
		switches, boms int64
	}{
		{"concat_two_utf16_logs.log", []string{"full_diff_log_norecovery_2023.log", "windows_2019_express_errorlog_bak.log"}, 0, 1},
		{"utf16_log_pasted_into_utf8.log", []string{"restore_with_recovery_2024.log", "full_diff_log_norecovery_2023.log"}, 1, 1},
		{"utf8_log_appended_to_utf16.log", []string{"restore_with_recovery_2024.log", "full_diff_log_norecovery_2023.log"}, 1, 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			want, wantHosts := parts(t, tc.parts...)
			r := parseBytes(t, tc.file, realFixture(t, tc.file), "SQL01")
			if r.err != nil {
				t.Fatal(r.err)
			}
			if len(r.got.Rejects) != 0 {
				t.Errorf("rejects %v", r.got.Rejects)
			}
			if got := facts(r.got.LogRestores); !reflect.DeepEqual(got, want) {
				t.Errorf("restores\n got %+v\nwant %+v", got, want)
			}
			if got := versions(r.got.Hosts); !reflect.DeepEqual(got, wantHosts) {
				t.Errorf("startups %q, want %q (the banner after the second byte-order mark)", got, wantHosts)
			}
			if r.stats.Switches != tc.switches || r.stats.Ignored[errorlog.RuleMidFileBOM] != tc.boms {
				t.Errorf("switches %d (want %d), ignored %v (want %d mid-file BOMs)", r.stats.Switches, tc.switches, r.stats.Ignored, tc.boms)
			}
		})
	}
}

// TestJunkBeforeTimestamp: a byte-order mark and replacement characters
// before a timestamp (a copy from a log viewer) no longer turn the entry
// into a silent continuation line: the completion line is read with its
// LSNs instead of an anonymous restore rebuilt from the 3014 line.
func TestJunkBeforeTimestamp(t *testing.T) {
	want, _ := parts(t, "restore_with_recovery_2024.log")
	r := parseBytes(t, "viewer_copy_bom_fffd.log", realFixture(t, "viewer_copy_bom_fffd.log"), "SQL01")
	if r.err != nil || len(r.got.Rejects) != 0 {
		t.Fatalf("err %v rejects %v", r.err, r.got.Rejects)
	}
	if got := facts(r.got.LogRestores); !reflect.DeepEqual(got, want) {
		t.Errorf("restores\n got %+v\nwant %+v", got, want)
	}
	if r.stats.Ignored[errorlog.RuleBOM] != 1 || r.stats.Ignored[errorlog.RuleMidFileBOM] != 1 {
		t.Errorf("ignored %v, want one of each rule", r.stats.Ignored)
	}
	// Junk before a bad timestamp: the line is rejected, not skipped.
	r = parseBytes(t, "x.log", []byte("2024-11-01 16:27:05.06 spid62      Synchronize Database 'A' (5) with Resource Database.\n\uFFFD2024-13-01 16:27:05.08 Backup      Restore is complete on database 'A'.\n"), "SQL01")
	if len(r.got.Rejects) != 1 || r.got.Rejects[0].Line != 2 || !strings.Contains(r.got.Rejects[0].Reason, "month") {
		t.Errorf("rejects %v, want line 2 (month out of range)", r.got.Rejects)
	}
}

// TestRecoveryStepIsNoRestore: "RESTORE DATABASE d WITH RECOVERY" after a
// NORECOVERY chain writes a 4356 line and a 0-page 3014 line, but no
// completion line: no restore (the old parser made one of 0 pages from the
// 4356 line).
func TestRecoveryStepIsNoRestore(t *testing.T) {
	want, _ := parts(t, "full_diff_log_norecovery_2023.log")
	r := parseBytes(t, "norecovery_chain_then_recovery_step.log", realFixture(t, "norecovery_chain_then_recovery_step.log"), "SQL01")
	if r.err != nil || len(r.got.Rejects) != 0 {
		t.Fatalf("err %v rejects %v", r.err, r.got.Rejects)
	}
	if got := facts(r.got.LogRestores); !reflect.DeepEqual(got, want) {
		t.Errorf("restores\n got %+v\nwant %+v", got, want)
	}
	if r.stats.Ignored[errorlog.RuleRecoveryStep] != 1 {
		t.Errorf("ignored %v", r.stats.Ignored)
	}
}

// TestLocalizedRealworld runs the parser over H4b's localized error-log
// lines: each RESTORE 3014 line is read (rewritten into English) and, since
// these excerpts hold no completion line naming the database, reported as a
// 3014 line without one, never skipped in silence; each "stat" line of
// unrecognised.txt that carries a timestamp is rejected as an unrecognised
// language.
func TestLocalizedRealworld(t *testing.T) {
	dir := "../../testdata/realworld/localized"
	f, err := os.Open(filepath.Join(dir, "expect.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		col := strings.Split(sc.Text(), "\t")
		if len(col) >= 5 && strings.HasSuffix(col[0], ".errorlog.txt") && col[3] == "3014" && strings.HasPrefix(col[4], "RESTORE ") {
			want[col[0]]++
		}
	}
	if len(want) == 0 {
		t.Fatal("expect.tsv lists no error-log restores")
	}
	for name, n := range want {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		r := parseBytes(t, name, b, "SQL01")
		got := 0
		for _, rj := range r.got.Rejects {
			if strings.Contains(rj.Reason, "RESTORE DATABASE 3014 line without a restore completion line") {
				got++
			}
		}
		if got != n {
			t.Errorf("%s: %d 3014 lines reported, want %d; rejects %v", name, got, n, r.got.Rejects)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "unrecognised.txt"))
	if err != nil {
		t.Fatal(err)
	}
	r := parseBytes(t, "unrecognised.txt", b, "SQL01")
	stamped := 0
	for _, l := range strings.Split(string(b), "\n") {
		if len(l) > 4 && l[4] == '-' && strings.Contains(l, "RESTORE") || len(l) > 4 && l[4] == '-' && strings.Contains(l, "BACKUP") {
			stamped++
		}
	}
	got := 0
	for _, rj := range r.got.Rejects {
		if strings.Contains(rj.Reason, "unrecognised language") {
			got++
		}
	}
	if stamped == 0 || got != stamped {
		t.Errorf("unrecognised-language rejects %d, want %d: %v", got, stamped, r.got.Rejects)
	}
}
