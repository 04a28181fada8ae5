package ingest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// folderFixture lays out a DBA's hand-over folder from the parsers' own
// attributed fixtures: a sub-folder per server, error logs in UTF-16LE and
// UTF-8, one log that names its server and others that do not, captured
// output, a history CSV at the top, a stray note, and one log at the top that
// names no server and sits in no server's folder.
func folderFixture(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	put := func(dst, src string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("..", src))
		if err != nil {
			t.Fatal(err)
		}
		dst = filepath.Join(root, dst)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("SRVA/ERRORLOG", "ingest/errorlog/testdata/synthetic_windows_full_diff_log.utf16le.log") // says "Server name is"
	put("SRVB/ERRORLOG.1", "ingest/errorlog/testdata/full_diff_log_norecovery_2023.cut.utf16le.log")
	put("SRVB/ERRORLOG", "ingest/errorlog/testdata/sql2008_restore_pssql.log")
	put("SRVC/restore-output.txt", "ingest/messages/testdata/ssms_completion.txt")
	put("history/restore-history.csv", "ingest/csv/testdata/sqlcmd_w.csv")
	put("ERRORLOG.7", "ingest/errorlog/testdata/export_lito.log")
	if err := os.WriteFile(filepath.Join(root, "SRVC", "notes.md"), []byte("# copied from the share on Monday\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// restoreSet lists every restore of a warehouse in a comparable form.
func restoreSet(t *testing.T, db store.Warehouse) []string {
	t.Helper()
	var out []string
	err := storetest.EachRestore(context.Background(), db, store.RestoreFilter{}, func(r *store.Restore) error {
		d := "?"
		if r.DurationS != nil {
			d = fmt.Sprintf("%.3f %s", *r.DurationS, r.DurationSource)
		}
		out = append(out, fmt.Sprintf("%s|%s|%s|%s|%s|%s", r.Instance, r.Database, r.Kind, r.At.UTC().Format("2006-01-02T15:04:05.000"), d, r.SourceServer))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func TestFolderImportDetectsKindsAndNamesInstances(t *testing.T) {
	ctx := context.Background()
	root := folderFixture(t)
	files, err := ingest.ExpandPaths([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 7 {
		t.Fatalf("expanded %d files, want 7: %+v", len(files), files)
	}
	db := storetest.OpenEngine(t)
	l := ingest.NewLoader(db, ingest.LoaderOptions{})
	run, err := l.StoreFiles(ctx, files, ingest.FilesOptions{InstanceFromDir: true, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Derive(ctx); err != nil {
		t.Fatal(err)
	}
	type want struct {
		kind             ingest.FileKind
		instance, source string
		skipped, failed  bool
	}
	wants := map[string]want{
		"SRVA/ERRORLOG":               {kind: ingest.ErrorLog, source: "file"},
		"SRVB/ERRORLOG.1":             {kind: ingest.ErrorLog, instance: "SRVB", source: "folder"},
		"SRVB/ERRORLOG":               {kind: ingest.ErrorLog, instance: "SRVB", source: "folder"},
		"SRVC/restore-output.txt":     {kind: ingest.Messages, instance: "SRVC", source: "folder"},
		"SRVC/notes.md":               {skipped: true},
		"history/restore-history.csv": {kind: ingest.History, source: "file"},
		"ERRORLOG.7":                  {kind: ingest.ErrorLog, failed: true}, // names no server, in no server's folder
	}
	for _, r := range run.Files {
		rel, _ := filepath.Rel(root, r.Path)
		w, ok := wants[filepath.ToSlash(rel)]
		if !ok {
			t.Errorf("unexpected file %s", rel)
			continue
		}
		switch {
		case w.skipped:
			if r.Skipped == "" {
				t.Errorf("%s: imported as %s, want it skipped with a reason", rel, r.Kind)
			}
			continue
		case r.Skipped != "":
			t.Errorf("%s: skipped (%s), want %s", rel, r.Skipped, w.kind)
			continue
		}
		if r.Kind != w.kind {
			t.Errorf("%s: detected %s (%s), want %s", rel, r.Kind, r.KindWhy, w.kind)
		}
		if w.failed {
			if r.Err == nil || !strings.Contains(r.Err.Error(), "instance name") {
				t.Errorf("%s: want an error naming the missing instance name, got %v", rel, r.Err)
			}
			continue
		}
		if r.Err != nil {
			t.Errorf("%s: %v", rel, r.Err)
		}
		if w.instance != "" && r.Instance != w.instance {
			t.Errorf("%s: instance %q, want %q", rel, r.Instance, w.instance)
		}
		if r.InstanceSource != w.source {
			t.Errorf("%s: instance source %q, want %q", rel, r.InstanceSource, w.source)
		}
	}

	// The same files imported one at a time with their kind and instance
	// given, the way the README did it before, give the same restores.
	one := storetest.OpenEngine(t)
	for _, f := range []struct {
		path     string
		kind     ingest.FileKind
		instance string
	}{
		{"SRVA/ERRORLOG", ingest.ErrorLog, ""},
		{"SRVB/ERRORLOG.1", ingest.ErrorLog, "SRVB"},
		{"SRVB/ERRORLOG", ingest.ErrorLog, "SRVB"},
		{"SRVC/restore-output.txt", ingest.Messages, "SRVC"},
		{"history/restore-history.csv", ingest.History, ""},
	} {
		if _, err := ingest.ImportFile(ctx, one, f.kind, filepath.Join(root, f.path), ingest.Options{Instance: f.instance}); err != nil {
			t.Fatalf("%s: %v", f.path, err)
		}
	}
	got, byFile := restoreSet(t, db), restoreSet(t, one)
	if len(byFile) == 0 {
		t.Fatal("the fixture holds no restores")
	}
	if !slices.Equal(got, byFile) {
		t.Errorf("folder import:\n%s\nfile by file:\n%s", strings.Join(got, "\n"), strings.Join(byFile, "\n"))
	}

	t.Logf("%d restores:\n%s", len(got), strings.Join(got, "\n"))
	tot := run.Sum()
	if tot.Files != 7 || tot.Skipped != 1 || tot.Failed != 1 || tot.Imported != 5 {
		t.Errorf("totals %+v", tot)
	}
	if tot.Kinds[ingest.ErrorLog] != 4 || tot.Kinds[ingest.History] != 1 || tot.Kinds[ingest.Messages] != 1 {
		t.Errorf("kinds %v", tot.Kinds)
	}
	if tot.InstanceSources["folder"] != 3 {
		t.Errorf("instance sources %v, want 3 from the folder", tot.InstanceSources)
	}

	// Importing the folder again reads nothing: every file it read whole
	// is unchanged (the unnamed log failed, so it is read again). Read
	// again with Reread, it adds nothing either.
	again := func(reread bool) ingest.Totals {
		l := ingest.NewLoader(db, ingest.LoaderOptions{})
		run, err := l.StoreFiles(ctx, files, ingest.FilesOptions{InstanceFromDir: true, Reread: reread})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Derive(ctx); err != nil {
			t.Fatal(err)
		}
		return run.Sum()
	}
	if t2 := again(false); t2.Unchanged != 5 || t2.Added != 0 || t2.Read != 0 || t2.Failed != 1 {
		t.Errorf("re-import: %d unchanged, read %d, added %d, failed %d; want 5 unchanged, nothing read or added, the unnamed log failing again",
			t2.Unchanged, t2.Read, t2.Added, t2.Failed)
	}
	if t3 := again(true); t3.Unchanged != 0 || t3.Added != 0 || t3.Duplicates != tot.Added+tot.Duplicates {
		t.Errorf("re-read: %d unchanged, added %d, duplicates %d; want 0, 0 and %d", t3.Unchanged, t3.Added, t3.Duplicates, tot.Added+tot.Duplicates)
	}
	// A file that changed (an error log that grew) is read again.
	grown := filepath.Join(root, "SRVB", "ERRORLOG")
	f, err := os.OpenFile(grown, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("2008-01-23 09:00:00.00 spid51      Starting up database 'dbPerf_MAIN'.\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if t4 := again(false); t4.Unchanged != 4 || t4.Imported != 1 || t4.Read == 0 {
		t.Errorf("after one log grew: %d unchanged, %d read again (%d records); want 4 and 1", t4.Unchanged, t4.Imported, t4.Read)
	}
	if again := restoreSet(t, db); !slices.Equal(again, got) {
		t.Errorf("re-import changed the restores: %d → %d", len(got), len(again))
	}
}

func TestDetect(t *testing.T) {
	for _, c := range []struct {
		file string
		want ingest.FileKind
	}{
		{"ingest/errorlog/testdata/linux_2019_cu16_gdr.log", ingest.ErrorLog},
		{"ingest/errorlog/testdata/windows_2019_express_errorlog_bak.utf16le.log", ingest.ErrorLog},
		{"ingest/errorlog/testdata/export_xp_readerrorlog.log", ingest.ErrorLog},
		{"ingest/csv/testdata/exportcsv_ps5_utf16.csv", ingest.History},
		{"ingest/csv/testdata/ssms_noquote.csv", ingest.History},
		{"ingest/messages/testdata/sqlcmd_headers.txt", ingest.Messages},
		{"ingest/messages/testdata/agent_success.txt", ingest.Messages},
		{"ingest/messages/testdata/ssms_completion_utf16.txt", ingest.Messages},
	} {
		f, err := os.Open(filepath.Join("..", c.file))
		if err != nil {
			t.Fatal(err)
		}
		got, why, err := ingest.Detect(f)
		f.Close()
		if err != nil || got != c.want {
			t.Errorf("%s: %s (%s) %v, want %s", c.file, got, why, err, c.want)
		}
	}
	for _, text := range []string{"", "hello world\n", "a,b,c\n1,2,3\n"} {
		if k, _, err := ingest.Detect(strings.NewReader(text)); err == nil {
			t.Errorf("%q detected as %s, want an error", text, k)
		}
	}
}
