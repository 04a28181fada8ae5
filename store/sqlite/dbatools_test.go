package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/csv"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/sqlite"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// The dbatools fixtures (testdata/realworld/dbatools, whose README cites
// their sources) and the same restores as the published export.
var (
	dbatoolsDir = filepath.Join("..", "..", "testdata", "realworld", "dbatools")
	published   = filepath.Join("testdata", "dbatools", "published_billing.csv")
)

const billing = `SQLPROD01\BILLING`

// importFile parses one CSV file into db through a real Import and returns
// its summary.
func importFile(t *testing.T, db *sqlite.DB, path string) store.ImportSummary {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	im, err := db.NewImport(ctx, "history", filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := csv.Parse(ctx, f, csv.Options{File: filepath.Base(path)}, im); err != nil {
		t.Fatal(err)
	}
	sum, err := im.CommitAndReconcile()
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Rejects) > 0 {
		t.Fatalf("%s: rejects %v", path, sum.Rejects)
	}
	return sum
}

// restoreLine is what these tests compare of a restore.
type restoreLine struct {
	DB       string
	Kind     store.Kind
	At       string
	Duration string
	Source   string
	HistID   int64
}

func restoreLines(t *testing.T, db *sqlite.DB) []restoreLine {
	t.Helper()
	ctx := context.Background()
	rs, _, err := db.ListRestores(ctx, store.RestoreFilter{Sort: "at", Asc: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []restoreLine
	for _, r := range rs {
		d, err := db.GetRestoreDetail(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		l := restoreLine{DB: r.Database, Kind: r.Kind, At: r.At.UTC().Format("2006-01-02 15:04:05.000"),
			Duration: "-", Source: r.DurationSource}
		if r.DurationS != nil {
			l.Duration = fmt.Sprint(*r.DurationS)
		}
		if d.History != nil {
			l.HistID = d.History.RestoreHistoryID
		}
		out = append(out, l)
	}
	return out
}

// TestHistoryWithoutIDSameSecond: two restores of different databases on one
// instance in the same second, from an export without restore_history_id,
// are two restores (the duplicate check keyed them on the time alone: added
// 1, duplicates 1); importing them again adds nothing.
func TestHistoryWithoutIDSameSecond(t *testing.T) {
	db := storetest.Open(t)
	at := local("2026-11-14 01:30:05.000")
	row := func(dbName, dev string) store.HistoryRow {
		return store.HistoryRow{Instance: billing, RestoreDate: at, Database: dbName, RestoreType: "D", BackupType: "D",
			FirstLSN: "39000000115200001", LastLSN: "39000000117600001", Devices: []string{dev},
			Origin: store.Origin{Source: "history", File: "dbatools.csv", Line: 2}}
	}
	a, b := row("A", `\\nas01\sql\A.bak`), row("B", `\\nas01\sql\B.bak`)
	if sum := importAll(t, db, a, b); sum.Added != 2 || sum.Duplicates != 0 {
		t.Fatalf("first import: added %d, duplicates %d; want 2, 0", sum.Added, sum.Duplicates)
	}
	if sum := importAll(t, db, a, b); sum.Added != 0 || sum.Duplicates != 2 {
		t.Errorf("again: added %d, duplicates %d; want 0, 2", sum.Added, sum.Duplicates)
	}
	if rs := list(t, db); len(rs) != 2 {
		t.Errorf("%d restores, want 2", len(rs))
	}
	// Same database and second, another backup set (a log restore after
	// a tiny one): still two.
	c := row("A", `\\nas01\sql\A.trn`)
	c.RestoreType, c.FirstLSN, c.LastLSN = "L", "39000000117600001", "39000000117600009"
	if sum := importAll(t, db, c); sum.Added != 1 {
		t.Errorf("a log restore in the same second: added %d, want 1", sum.Added)
	}
}

// TestOneRestoreWithAndWithoutID: the same restores from a culture rendering
// of dbatools' export (seconds, no restore_history_id), the invariant one
// (milliseconds) and the published export (milliseconds and
// restore_history_id) are one restore each, whatever the order of the
// imports; the restore cites the published row, whose id and milliseconds
// it keeps.
func TestOneRestoreWithAndWithoutID(t *testing.T) {
	culture := filepath.Join(dbatoolsDir, "restorehistory_ps51_en-GB_utf16.csv")
	invariant := filepath.Join(dbatoolsDir, "restorehistory_ps7_invariant.csv")
	want := []restoreLine{
		{"Sales", store.KindFull, "2026-11-03 23:45:59.000", "-", store.DurationUnknown, 1202},
		{"Billing", store.KindFull, "2026-11-14 01:30:05.123", "-", store.DurationUnknown, 1203},
		{"Billing", store.KindDiff, "2026-11-14 02:05:17.000", "-", store.DurationUnknown, 1204},
		{"Billing", store.KindLog, "2026-11-14 02:06:40.000", "-", store.DurationUnknown, 1205},
	}
	for _, order := range [][]string{{culture, invariant, published}, {published, culture, invariant}, {invariant, published, culture}} {
		db := storetest.Open(t)
		for _, f := range order {
			importFile(t, db, f)
		}
		if got := restoreLines(t, db); !reflect.DeepEqual(got, want) {
			t.Errorf("order %v:\n got %v\nwant %v", order, got, want)
		}
		if sum := importFile(t, db, culture); sum.Added != 0 {
			t.Errorf("order %v: the culture file again added %d", order, sum.Added)
		}
	}
	// Without the published export the restores come from the invariant
	// rendering (milliseconds) and have no restore_history_id to show.
	db := storetest.Open(t)
	importFile(t, db, culture)
	importFile(t, db, invariant)
	got := restoreLines(t, db)
	if len(got) != 4 || got[1].At != "2026-11-14 01:30:05.123" || got[1].HistID != 0 {
		t.Errorf("dbatools renderings alone: %v, want 4 restores, Billing's full at .123 without an id", got)
	}
}

// TestRestoreDbaDatabasePairs: Restore-DbaDatabase rows carry no time: each
// is paired with the history row of the same database and backup files,
// which places it and gives its kind, and it gives the restore its
// duration (FileRestoreTime). Imported before the history, the rows are
// kept and counted as untimed, not dropped; the history then dates them.
func TestRestoreDbaDatabasePairs(t *testing.T) {
	ctx := context.Background()
	restores := filepath.Join(dbatoolsDir, "restoredbadatabase_ps7_en-GB.csv")
	db := storetest.Open(t)
	sum := importFile(t, db, restores)
	if sum.Added != 3 || sum.Untimed != 3 {
		t.Errorf("Restore-DbaDatabase alone: added %d, untimed %d; want 3, 3", sum.Added, sum.Untimed)
	}
	if rs := list(t, db); len(rs) != 0 {
		t.Errorf("%d restores from rows without a time, want none", len(rs))
	}
	u, err := db.Untimed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(u) != 1 || u[0].Source != csv.SourceDbatools || u[0].Records != 3 || u[0].Instances != 1 || u[0].Remedy() == "" {
		t.Errorf("Untimed = %+v, want 3 dbatools records on 1 instance", u)
	}

	sum = importFile(t, db, filepath.Join(dbatoolsDir, "restorehistory_ps51_de-DE_semicolon.csv"))
	if sum.Untimed != 0 {
		t.Errorf("after the history: untimed %d, want 0", sum.Untimed)
	}
	want := []restoreLine{
		{"Sales", store.KindFull, "2026-11-03 23:45:59.000", "-", store.DurationUnknown, 0},
		{"Billing", store.KindFull, "2026-11-14 01:30:05.000", "2052", store.DurationDbatools, 0},
		{"Billing", store.KindDiff, "2026-11-14 02:05:17.000", "63", store.DurationDbatools, 0},
		{"Billing", store.KindLog, "2026-11-14 02:06:40.000", "4", store.DurationDbatools, 0},
	}
	if got := restoreLines(t, db); !reflect.DeepEqual(got, want) {
		t.Errorf("paired:\n got %v\nwant %v", got, want)
	}
	if u, err := db.Untimed(ctx); err != nil || len(u) != 0 {
		t.Errorf("Untimed after the history = %+v, %v; want none", u, err)
	}
	rs, _, err := db.ListRestores(ctx, store.RestoreFilter{Database: "Billing", Kind: store.KindFull})
	if err != nil || len(rs) != 1 {
		t.Fatalf("Billing full: %v, %v", rs, err)
	}
	d, err := db.GetRestoreDetail(ctx, rs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Sources != "history+dbatools" || len(d.Logs) != 1 || d.Logs[0].Source != csv.SourceDbatools {
		t.Errorf("Billing full cites %q and %+v, want the history and the dbatools row", rs[0].Sources, d.Logs)
	}
}

// TestUntimedRestoresAreCounted: a log record that nothing places in time
// (client output without a completion stamp or --at; a Restore-DbaDatabase
// row whose backup files fit several history rows) is kept and counted by
// source, never silently dropped.
func TestUntimedRestoresAreCounted(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	msg := store.LogRestore{Instance: "SQL01", Database: "Sales", Kind: store.KindFull, Has3014: true,
		Statement: "RESTORE DATABASE", Pages: 1000, Seconds: 2.5, MBps: 3.1,
		Origin: store.Origin{Source: "messages", File: "out.txt", Line: 4}}
	h := func(id int64, day string) store.HistoryRow {
		return store.HistoryRow{Instance: "SQL01", RestoreHistoryID: id, RestoreDate: local(day + " 02:00:00.000"),
			Database: "Nightly", RestoreType: "D", BackupType: "D", Devices: []string{`D:\b\Nightly.bak`},
			Origin: store.Origin{Source: "history", File: "h.csv", Line: int(id)}}
	}
	dba := store.LogRestore{Instance: "SQL01", Database: "Nightly", Kind: store.KindFull, UpperBoundS: 30,
		Devices: []string{`d:\B\nightly.bak`}, Origin: store.Origin{Source: "dbatools", File: "r.csv", Line: 2}}
	sum := importAll(t, db, msg, h(1, "2026-11-01"), h(2, "2026-11-02"), dba)
	if sum.Untimed != 2 {
		t.Errorf("summary untimed %d, want 2", sum.Untimed)
	}
	u, err := db.Untimed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Untimed{{Source: "dbatools", Records: 1, Instances: 1}, {Source: "messages", Records: 1, Instances: 1}}
	if !reflect.DeepEqual(u, want) {
		t.Errorf("Untimed = %+v, want %+v", u, want)
	}
	for _, r := range list(t, db) {
		if r.DurationS != nil {
			t.Errorf("%s at %s: duration %v from an ambiguous Restore-DbaDatabase row", r.Database, r.At, *r.DurationS)
		}
	}
	// With one nightly restore the row fits one history row, and pairs.
	db = storetest.Open(t)
	sum = importAll(t, db, h(2, "2026-11-02"), dba, msg)
	if sum.Untimed != 1 {
		t.Errorf("one nightly restore: untimed %d, want 1 (the messages)", sum.Untimed)
	}
	rs := list(t, db)
	if len(rs) != 1 || rs[0].DurationSource != store.DurationDbatools || rs[0].DurationS == nil || *rs[0].DurationS != 30 {
		t.Errorf("restores %+v, want one of 30 s from dbatools", rs)
	}
}
