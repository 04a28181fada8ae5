package sqlite_test

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/restorewatch/restorewatch/ingest/csv"
	"github.com/restorewatch/restorewatch/ingest/errorlog"
	"github.com/restorewatch/restorewatch/ingest/messages"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

func TestNames(t *testing.T) {
	const nfc, nfd = "SQLPR\u00c9D01\\PROD", "SQLPRE\u0301D01\\PROD"
	for _, c := range []struct{ in, instance, database string }{
		{"SQL01", "SQL01", "SQL01"},
		{"SQL01\x00\x00\x00", "SQL01", "SQL01"},
		{"SQL\x0101\r\n", "SQL01", "SQL01"},
		{"SQL01\u0085\u009b", "SQL01", "SQL01"},
		{"SQL01\x7f", "SQL01", "SQL01"},
		{"\ufeff SQL01\u00a0", "SQL01", "\ufeff SQL01\u00a0"},
		{"SQL\u200b01\u200e", "SQL01", "SQL\u200b01\u200e"},
		{nfd, nfc, nfd}, // composed once, for instances only
		{"SQL01\xff", "SQL01\ufffd", "SQL01\ufffd"},
		// What SQL Server allows in a database name stays as it is.
		{` O'Brien, "Ltd" [x] `, `O'Brien, "Ltd" [x]`, ` O'Brien, "Ltd" [x] `},
		{"\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", "\u0645\u06cc\u062e\u0648\u0627\u0647\u0645", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"},
		{"Données\tclients", "Donnéesclients", "Donnéesclients"},
	} {
		if got := store.InstanceName(c.in); got != c.instance {
			t.Errorf("InstanceName(%+q) = %+q; want %+q", c.in, got, c.instance)
		}
		if got := store.DatabaseName(c.in); got != c.database {
			t.Errorf("DatabaseName(%+q) = %+q; want %+q", c.in, got, c.database)
		}
	}
}

// TestOneServerOneInstance names one server differently in each reader — a
// NUL-padded, decomposed name in an ERRORLOG's banner, control characters
// in a history CSV's cell, a BOM and a zero-width space given to the
// messages importer, a leading space and NULs in the collector's
// configuration — and finds one instance holding every restore and every
// collector record.
func TestOneServerOneInstance(t *testing.T) {
	ctx := context.Background()
	const want = "SQLPR\u00c9D01\\PROD"
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	read := func(path string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "..", "ingest", path))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	imp := func(name string, parse func(store.Sink) error) store.ImportSummary {
		t.Helper()
		im, err := db.NewImport(ctx, name, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := parse(im); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sum, err := im.CommitAndReconcile()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if sum.Added == 0 {
			t.Fatalf("%s: added nothing, rejected %v", name, sum.Rejects)
		}
		return sum
	}
	// The error log's banner names SQLPROD01\PROD: NUL-padded, decomposed.
	elog := bytes.Replace(read("errorlog/testdata/synthetic_windows_full_diff_log.log"),
		[]byte(`'SQLPROD01\PROD'`), []byte("'SQLPRE\u0301D01\\PROD\x00\x00'"), 1)
	var seen store.Collect
	if _, err := errorlog.Parse(ctx, bytes.NewReader(elog), errorlog.Options{File: "ERRORLOG"}, &seen); err != nil || len(seen.LogRestores) == 0 {
		t.Fatalf("errorlog: %v, %d restores", err, len(seen.LogRestores))
	}
	if got := seen.LogRestores[0].Instance; got == want {
		t.Fatalf("the errorlog reader already gives %+q: the test would not test the warehouse", got)
	}
	imp("errorlog", func(s store.Sink) error {
		_, err := errorlog.Parse(ctx, bytes.NewReader(elog), errorlog.Options{File: "ERRORLOG"}, s)
		return err
	})
	// The history CSV's instance cell holds control characters.
	hist := bytes.ReplaceAll(read("csv/testdata/spec_order.csv"), []byte(`"SQLPROD01\BILLING"`), []byte("\"\x01SQLPR\u00c9D01\\PROD\x1b\""))
	imp("history", func(s store.Sink) error {
		_, err := csv.Parse(ctx, bytes.NewReader(hist), csv.Options{File: "spec_order.csv"}, s)
		return err
	})
	// Captured messages, named by the user: a BOM and a zero-width space.
	imp("messages", func(s store.Sink) error {
		_, err := messages.Parse(ctx, bytes.NewReader(read("messages/testdata/batches.txt")),
			messages.Options{File: "batches.txt", Instance: "\ufeffSQLPR\u00c9D01\u200b\\PROD", At: time.Date(2024, 3, 18, 9, 30, 5, 0, time.UTC)}, s)
		return err
	})
	// The collector's records, named by its configuration.
	live := " SQLPR\u00c9D01\\PROD\x00"
	if err := db.SetInstanceTags(ctx, live, map[string]string{"env": "prod"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.StartRun(ctx, live, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := db.SetWatermark(ctx, live, "history", `{"id":1}`); err != nil {
		t.Fatal(err)
	}
	if err := db.AddInflightSamples(ctx, live, []store.InflightSample{{Database: "Billing\x00", SessionID: 55,
		Start: time.Date(2024, 3, 18, 9, 0, 0, 0, time.UTC), SampledAt: time.Date(2024, 3, 18, 9, 1, 0, 0, time.UTC),
		Percent: 10, Command: "RESTORE DATABASE"}}); err != nil {
		t.Fatal(err)
	}

	is, err := db.ListInstances(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range is {
		names = append(names, i.Name)
	}
	if !slices.Equal(names, []string{want}) {
		t.Fatalf("instances %+q; want one, %+q", names, want)
	}
	if is[0].Tags["env"] != "prod" {
		t.Errorf("tags %v: the collector's configuration went elsewhere", is[0].Tags)
	}
	n, err := db.CountAllRestores(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no restores")
	}
	for _, name := range []string{"SQLPR\u00c9D01\\PROD\x00", "sqlpr\u00c9d01\\prod", "SQLPRE\u0301D01\\PROD"} {
		if _, err := db.GetInstance(ctx, name); err != nil {
			t.Errorf("GetInstance(%+q): %v", name, err)
		}
	}
	if runs, err := db.Runs(ctx, "SQLPRE\u0301D01\\PROD", 10); err != nil || len(runs) != 1 || runs[0].Instance != want {
		t.Errorf("runs %+v, %v; want one of %+q", runs, err, want)
	}
	if _, ok, err := db.Watermark(ctx, want, "history"); err != nil || !ok {
		t.Errorf("watermark of %+q: %v, %v; want it found", want, ok, err)
	}
	curves, err := db.InflightCurves(ctx, time.Time{})
	if err != nil || len(curves) != 1 || curves[0].Instance != want || curves[0].Database != "Billing" {
		t.Errorf("in-flight curves %+v, %v; want one of %s/Billing", curves, err, want)
	}
	// The messages' database names keep their quotes, comma and spaces.
	dbs := map[string]bool{}
	rs, _, err := db.ListRestores(ctx, store.RestoreFilter{Instance: "SQLPRE\u0301D01\\PROD ", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(rs)) != n {
		t.Errorf("%d restores listed under the decomposed name; want all %d", len(rs), n)
	}
	for _, r := range rs {
		dbs[r.Database] = true
	}
	if !dbs[`O'Brien, "Ltd"`] || strings.Contains(strings.Join(slices.Collect(maps.Keys(dbs)), ""), "\x00") {
		t.Errorf("databases %v: want O'Brien, \"Ltd\" as the messages named it", dbs)
	}
}

// FuzzNames: a normalised name is normalised already (reading it back and
// storing it again changes nothing), and holds no control character; an
// instance name no invisible one and no surrounding space.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"SQL01", "SQL01\x00", " SQLPRE\u0301D01\\PROD\u00a0", "\ufeffA\u200bB", "\xff\xfe", "e\u0301\u0327", "\u2000x\u3000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		in, db := store.InstanceName(s), store.DatabaseName(s)
		if again := store.InstanceName(in); again != in {
			t.Errorf("InstanceName(%+q) = %+q, then %+q", s, in, again)
		}
		if again := store.DatabaseName(db); again != db {
			t.Errorf("DatabaseName(%+q) = %+q, then %+q", s, db, again)
		}
		for _, r := range db {
			if r < 0x20 || r >= 0x7f && r <= 0x9f {
				t.Errorf("DatabaseName(%+q) = %+q keeps %U", s, db, r)
			}
		}
		for _, r := range in {
			if r < 0x20 || r >= 0x7f && r <= 0x9f || unicode.Is(unicode.Cf, r) {
				t.Errorf("InstanceName(%+q) = %+q keeps %U", s, in, r)
			}
		}
		if strings.TrimFunc(in, unicode.IsSpace) != in {
			t.Errorf("InstanceName(%+q) = %+q keeps surrounding space", s, in)
		}
	})
}
