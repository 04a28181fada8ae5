package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/sqlite"
	"github.com/restorewatch/restorewatch/store/storetest"
)

func local(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05.000", s)
	if err != nil {
		panic(err)
	}
	return t
}

func i64(v int64) *int64 { return &v }
func b(v bool) *bool     { return &v }
func off(v int) *int     { return &v }

// fixture: SQLTestDB's full restore (reference §4.7) seen by msdb and the error log,
// plus a startup banner stating the instance's offset and build.
func fixture() (store.HistoryRow, store.LogRestore, store.HostSnapshot) {
	h := store.HistoryRow{
		Instance: "SQL01", RestoreHistoryID: 7, RestoreDate: local("2023-11-24 13:03:10.000"), Database: "SQLTestDB",
		RestoreType: "D", SourceServer: "SRC01", SourceDatabase: "SQLTestDB", BackupType: "D",
		FirstLSN: "39000000100000001", LastLSN: "39000000102400001", BackupSize: i64(100 << 20),
		CompressedSize: i64(40 << 20), SoftwareMajor: i64(13), SoftwareMinor: i64(0), SoftwareBuild: i64(4474),
		MediaFamilies: i64(2), Devices: []string{`\\nas\b\a.bak`, `\\nas\b\b.bak`}, HasChecksums: b(true),
		Origin: store.Origin{Source: "history", File: "h.csv", Line: 2},
	}
	l := store.LogRestore{
		Instance: "sql01", Database: "SQLTestDB", Kind: store.KindFull, MessageID: 18267,
		CompletedAt: local("2023-11-24 13:04:00.470"), UTCOffset: off(-300),
		FirstLSN: "39000000100000001", LastLSN: "39000000102400001", DeviceCount: 2, DeviceType: "DISK",
		Devices: []string{`\\nas\b\a.bak`, `\\nas\b\b.bak`}, Has3014: true, Statement: "RESTORE DATABASE",
		Pages: 12800, Seconds: 50, MBps: 2.0,
		Buffer: &store.BufferConfig{BufferCount: 7, MaxTransferKiB: 1024, IOAlignment: 4096},
		Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: 40},
	}
	hs := store.HostSnapshot{Instance: "SQL01", ObservedAt: local("2023-11-01 08:00:00.000"), UTCOffset: off(-300),
		Version: "13.0.4474.0", Cores: i64(8), Origin: store.Origin{Source: "errorlog", File: "ERRORLOG", Line: 1}}
	return h, l, hs
}

func importAll(t *testing.T, db *sqlite.DB, recs ...any) store.ImportSummary {
	t.Helper()
	im, err := db.NewImport(context.Background(), "test", "t")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		switch r := r.(type) {
		case store.HistoryRow:
			err = im.History(r)
		case store.LogRestore:
			err = im.LogRestore(r)
		case store.HostSnapshot:
			err = im.Host(r)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	sum, err := im.CommitAndReconcile()
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func list(t *testing.T, db *sqlite.DB) []store.Restore {
	t.Helper()
	rs, _, err := db.ListRestores(context.Background(), store.RestoreFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		rs[i].ID = 0
	}
	return rs
}

func TestMatchingIsOrderIndependentAndIdempotent(t *testing.T) {
	h, l, hs := fixture()
	a := storetest.Open(t)
	importAll(t, a, h)
	importAll(t, a, l, hs)
	b := storetest.Open(t)
	importAll(t, b, hs, l)
	importAll(t, b, h)
	sum := importAll(t, b, h, l, hs)
	if sum.Added != 0 || sum.Duplicates != 3 {
		t.Errorf("re-import: added %d duplicates %d, want 0 and 3", sum.Added, sum.Duplicates)
	}
	ra, rb := list(t, a), list(t, b)
	if !reflect.DeepEqual(ra, rb) {
		t.Fatalf("order changed the warehouse:\n%+v\n%+v", ra, rb)
	}
	if len(ra) != 1 {
		t.Fatalf("got %d restores, want 1 (history row and log line are the same restore)", len(ra))
	}
	r := ra[0]
	if r.DurationSource != store.DurationEngine || *r.DurationS != 50 {
		t.Errorf("duration = %v from %s, want 50 s from the 3014 line", *r.DurationS, r.DurationSource)
	}
	wantEnd := time.Date(2023, 11, 24, 18, 4, 0, 470e6, time.UTC) // 13:04 local at UTC-5
	if !r.FinishedAt.Equal(wantEnd) || !r.StartedAt.Equal(wantEnd.Add(-50*time.Second)) {
		t.Errorf("finished %v started %v, want %v and 50 s earlier", r.FinishedAt, r.StartedAt, wantEnd)
	}
	if got := *r.LogicalMiBps; got != 2.0 {
		t.Errorf("logical MiB/s = %v, want 100 MiB / 50 s = 2", got)
	}
	if got := *r.ReadMiBps; got != 0.8 {
		t.Errorf("read MiB/s = %v, want 40 MiB / 50 s = 0.8", got)
	}
	if *r.Stripes != 2 || *r.BackupBytes != 100<<20 {
		t.Errorf("striped backup: stripes %v bytes %v, want 2 stripes counted once", *r.Stripes, *r.BackupBytes)
	}
	if r.DeviceKind != store.DeviceUNC || r.InstanceBuild != "13.0.4474.0" || r.SourceBuild != "13.0.4474" || !*r.Compressed {
		t.Errorf("factors: device %q build %q source build %q compressed %v", r.DeviceKind, r.InstanceBuild, r.SourceBuild, *r.Compressed)
	}
	if *r.BufferCount != 7 || *r.IOAlignment != 4096 {
		t.Errorf("buffer settings lost: %+v", r)
	}
	if r.Sources != "history+errorlog" {
		t.Errorf("sources = %q", r.Sources)
	}
}

func TestHistoryOnlyKeepsUnknownDuration(t *testing.T) {
	h, _, _ := fixture()
	db := storetest.Open(t)
	importAll(t, db, h)
	rs := list(t, db)
	if len(rs) != 1 {
		t.Fatalf("got %d restores", len(rs))
	}
	if rs[0].DurationS != nil || rs[0].DurationSource != store.DurationUnknown || rs[0].LogicalMiBps != nil {
		t.Errorf("a restore whose error log is gone must keep an unknown duration, got %+v", rs[0])
	}
	if rs[0].OffsetKnown {
		t.Errorf("no source states the offset, yet it is marked known")
	}
}

func TestVerifyOnlyIsNotARestore(t *testing.T) {
	h, _, _ := fixture()
	h.RestoreType = "V"
	db := storetest.Open(t)
	importAll(t, db, h)
	if rs := list(t, db); len(rs) != 0 {
		t.Fatalf("VERIFYONLY row became a restore: %+v", rs)
	}
}

func TestZeroSecondsIsUnknown(t *testing.T) {
	_, l, _ := fixture()
	l.Seconds = 0
	db := storetest.Open(t)
	importAll(t, db, l)
	rs := list(t, db)
	if len(rs) != 1 || rs[0].DurationS != nil {
		t.Fatalf("0 s must be unknown, got %+v", rs)
	}
}

func TestRestoreDateSemanticsMeasured(t *testing.T) {
	db := storetest.Open(t)
	var recs []any
	for i := 0; i < 4; i++ {
		h, l, _ := fixture()
		h.RestoreHistoryID = int64(10 + i)
		h.RestoreDate = local("2023-11-24 13:03:10.000").Add(time.Duration(i) * 24 * time.Hour)
		l.CompletedAt = h.RestoreDate.Add(50 * time.Second)
		recs = append(recs, h, l)
	}
	// A fifth history row without an error-log line: with restore_date known
	// to be the start, it still has no duration (no end is known).
	h, _, _ := fixture()
	h.RestoreHistoryID = 99
	h.FirstLSN, h.LastLSN = "1", "2"
	h.RestoreDate = local("2023-12-24 13:00:00.000")
	recs = append(recs, h)
	importAll(t, db, recs...)
	rs := list(t, db)
	if len(rs) != 5 {
		t.Fatalf("got %d restores, want 5", len(rs))
	}
	if rs[0].StartedAt == nil || rs[0].DurationS != nil {
		t.Errorf("history-only restore on a start-semantics instance: started %v duration %v", rs[0].StartedAt, rs[0].DurationS)
	}
}

func TestLSNConversion(t *testing.T) {
	for _, c := range []struct{ log, num string }{
		{"39:1152:1", "39000000115200001"},
		{"53:29688:1", "53000002968800001"},
		{"582441:259880:1", "582441000025988000001"},
		{"0:0:0", "0"},
	} {
		got, err := store.LSNFromLog(c.log)
		if err != nil || got != c.num {
			t.Errorf("LSNFromLog(%s) = %s, %v; want %s", c.log, got, err, c.num)
		}
		back, err := store.LSNToLog(c.num)
		if err != nil || back != c.log {
			t.Errorf("LSNToLog(%s) = %s, %v; want %s", c.num, back, err, c.log)
		}
	}
	for _, bad := range []string{"1:2", "a:b:c", "1:2:100000", "1:99999999999:1"} {
		if _, err := store.LSNFromLog(bad); err == nil {
			t.Errorf("LSNFromLog(%q) accepted", bad)
		}
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := sqlite.MarkSchemaForTest(path, sqlite.SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(context.Background(), path); store.ErrorCode(err) != store.ECONFLICT {
		t.Fatalf("opening a newer warehouse: err = %v, want a conflict", err)
	}
}

// TestOverlappingHistoryImport re-imports a larger file over a partial one:
// history rows go in several rows per statement, across instances, so the
// counts and the reconciled restores must come out per row all the same.
func TestOverlappingHistoryImport(t *testing.T) {
	rows := make([]any, 0, 100)
	for i := 0; i < 100; i++ {
		h, _, _ := fixture()
		h.Instance = []string{"SQL01", "sql02", "SQL03"}[i%3]
		h.RestoreHistoryID = int64(i + 1)
		h.RestoreDate = h.RestoreDate.Add(time.Duration(i) * time.Hour)
		h.FirstLSN, h.LastLSN = "", ""
		h.Origin.Line = i + 2
		rows = append(rows, h)
	}
	db := storetest.Open(t)
	first := append(append([]any{}, rows[:60]...), rows[0]) // a duplicate inside the file too
	if sum := importAll(t, db, first...); sum.Added != 60 || sum.Duplicates != 1 {
		t.Errorf("first import: added %d duplicates %d, want 60 and 1", sum.Added, sum.Duplicates)
	}
	if n := len(list(t, db)); n != 60 {
		t.Errorf("after the first import: %d restores, want 60", n)
	}
	sum := importAll(t, db, rows...)
	if sum.Added != 40 || sum.Duplicates != 60 {
		t.Errorf("overlapping import: added %d duplicates %d, want 40 and 60", sum.Added, sum.Duplicates)
	}
	checkThirds(t, db)
}

// TestOverlappingLogImport is TestOverlappingHistoryImport for error-log
// lines, which go 16 to a statement too: a statement of new lines and
// duplicates must count each, and reconcile the instances of the new ones.
func TestOverlappingLogImport(t *testing.T) {
	lines := make([]any, 0, 100)
	for i := 0; i < 100; i++ {
		_, l, _ := fixture()
		l.Instance = []string{"SQL01", "sql02", "SQL03"}[i%3]
		l.CompletedAt = l.CompletedAt.Add(time.Duration(i) * time.Hour)
		l.FirstLSN, l.LastLSN = fmt.Sprint(1000*i), fmt.Sprint(1000*i+500)
		l.Origin.Line = 40 + i
		lines = append(lines, l)
	}
	db := storetest.Open(t)
	first := append(append([]any{}, lines[:60:60]...), lines[0]) // a duplicate inside the file too
	if sum := importAll(t, db, first...); sum.Added != 60 || sum.Duplicates != 1 {
		t.Errorf("first import: added %d duplicates %d, want 60 and 1", sum.Added, sum.Duplicates)
	}
	if n := len(list(t, db)); n != 60 {
		t.Errorf("after the first import: %d restores, want 60", n)
	}
	// The new lines come between old ones: every statement holds both.
	mixed := make([]any, 0, 100)
	for i := range 40 {
		mixed = append(mixed, lines[i], lines[60+i])
	}
	mixed = append(mixed, lines[40:60]...)
	sum := importAll(t, db, mixed...)
	if sum.Added != 40 || sum.Duplicates != 60 {
		t.Errorf("overlapping import: added %d duplicates %d, want 40 and 60", sum.Added, sum.Duplicates)
	}
	checkThirds(t, db)
}

// checkThirds checks the restores of the overlapping imports: 100 spread
// over three instances in turn.
func checkThirds(t *testing.T, db *sqlite.DB) {
	t.Helper()
	per := map[string]int{}
	for _, r := range list(t, db) {
		per[strings.ToUpper(r.Instance)]++
	}
	if want := map[string]int{"SQL01": 34, "SQL02": 33, "SQL03": 33}; !reflect.DeepEqual(per, want) {
		t.Errorf("restores per instance = %v, want %v", per, want)
	}
}
