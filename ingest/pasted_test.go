package ingest_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/ingest/unwrap"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// TestPastedFolder imports testdata/pasted — real output in the wrappers
// DBAs paste it in, one folder per source — in one run, kinds detected,
// instances named by the text or its folder, and checks every file's kind,
// wrapper and instance, then the restores a DBA reading them counts.
func TestPastedFolder(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join("..", "testdata", "pasted")
	files, err := ingest.ExpandPaths([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	db := storetest.OpenEngine(t)
	l := ingest.NewLoader(db, ingest.LoaderOptions{})
	run, err := l.StoreFiles(ctx, files, ingest.FilesOptions{InstanceFromDir: true,
		Options: ingest.Options{At: time.Date(2025, 3, 1, 2, 0, 0, 0, time.UTC)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Derive(ctx); err != nil {
		t.Fatal(err)
	}
	type want struct {
		kind     ingest.FileKind
		wrapper  string // one of the wrappers removed; "" for none
		instance string
		rejects  int
	}
	wants := map[string]want{
		"README.md":                                                  {},
		"handover/sqlcmd_m1_tabs_sahsuland.txt":                      {ingest.Messages, unwrap.SQLCmdM1, `PETER-PC\SAHSU`, 0},
		"clinic-sqlserver/compose_logs_clinicdb.md":                  {ingest.Messages, unwrap.Compose, "clinic-sqlserver", 0},
		"mssql-docker-690/issue690_fenced_errorlog.md":               {ingest.ErrorLog, unwrap.Fence, "mssql-docker-690", 0},
		"aks-sql01/kubectl_timestamps_errorlog.log":                  {ingest.ErrorLog, unwrap.Stamps, "aks-sql01", 0},
		"kb940126/kb940126_placeholders.txt":                         {ingest.ErrorLog, "", "", 1},
		"W10-VILA22/alura_dbvendas_ptbr.txt":                         {ingest.Messages, "", "W10-VILA22", 0},
		"Windows1/snapshot_metadata_only_tpcc100.md":                 {ingest.Messages, unwrap.Verbose, "Windows1", 1},
		"issue875/issue875_fenced_3014.md":                           {ingest.Messages, unwrap.Fence, "issue875", 1},
		"mikefrobbins-sqlexpress/northwind_post.html":                {ingest.Messages, unwrap.HTML, "mikefrobbins-sqlexpress", 0},
		"mikefrobbins-sqlexpress/empty_log_backup_then_recovery.txt": {ingest.Messages, "", "mikefrobbins-sqlexpress", 0},
	}
	seen := map[string]bool{}
	for _, r := range run.Files {
		rel, _ := filepath.Rel(root, r.Path)
		rel = filepath.ToSlash(rel)
		seen[rel] = true
		w, ok := wants[rel]
		switch {
		case !ok:
			t.Errorf("%s: not expected", rel)
			continue
		case rel == "README.md":
			if r.Skipped == "" {
				t.Errorf("README.md read as %s", r.Kind)
			}
			continue
		case r.Err != nil || r.Skipped != "":
			t.Errorf("%s: err %v, skipped %q", rel, r.Err, r.Skipped)
			continue
		}
		if r.Kind != w.kind {
			t.Errorf("%s: kind %s (%s), want %s", rel, r.Kind, r.KindWhy, w.kind)
		}
		if w.wrapper != "" && (!strings.Contains(strings.Join(r.Wrappers, "|"), w.wrapper) || !strings.Contains(r.KindWhy, w.wrapper)) {
			t.Errorf("%s: wrappers %q (detection: %s), want %q", rel, r.Wrappers, r.KindWhy, w.wrapper)
		}
		if w.wrapper == "" && len(r.Wrappers) != 0 {
			t.Errorf("%s: wrappers %q, want none", rel, r.Wrappers)
		}
		if w.instance != "" && r.Instance != w.instance {
			t.Errorf("%s: instance %q (from the %s), want %q", rel, r.Instance, r.InstanceSource, w.instance)
		}
		if len(r.Rejects) != w.rejects {
			t.Errorf("%s: rejects %v, want %d", rel, r.Rejects, w.rejects)
		}
		for _, rj := range r.Rejects {
			if rj.File == "" || rj.Line == 0 {
				t.Errorf("%s: reject without file:line: %+v", rel, rj)
			}
		}
	}
	for rel := range wants {
		if !seen[rel] {
			t.Errorf("%s: not in the run", rel)
		}
	}

	got := map[string]*store.Restore{}
	n := map[string]int{}
	err = storetest.EachRestore(ctx, db, store.RestoreFilter{}, func(r *store.Restore) error {
		k := r.Instance + "|" + r.Database + "|" + string(r.Kind)
		n[k]++
		c := *r
		got[k] = &c
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]int{
		`PETER-PC\SAHSU|sahsuland|full_or_diff`: 1, "clinic-sqlserver|ClinicDB|full_or_diff": 1,
		"mssql-docker-690|db02|log": 3, "aks-sql01|db02|log": 3,
		"W10-VILA22|dbVendas|full": 1, "W10-VILA22|dbVendas|diff": 1,
		"mikefrobbins-sqlexpress|Northwind|full_or_diff": 1, "mikefrobbins-sqlexpress|Northwind|log": 3,
	} {
		if n[k] != want {
			t.Errorf("%s: %d restores, want %d (all: %v)", k, n[k], want, n)
		}
	}
	// The stated 102544 MB/sec is not what 1169 pages in 0.089 s give: the
	// restore carries the computed rate and says so.
	if r := got["W10-VILA22|dbVendas|full"]; r != nil {
		if r.ThroughputSource != store.ThroughputRecomputed || r.LogicalMiBps == nil || *r.LogicalMiBps < 102 || *r.LogicalMiBps > 103.5 ||
			r.EngineMBps == nil || *r.EngineMBps != 102544 {
			t.Errorf("dbVendas full: source %q, logical %v, engine %v", r.ThroughputSource, r.LogicalMiBps, r.EngineMBps)
		}
	}
	if r := got["W10-VILA22|dbVendas|diff"]; r != nil && r.ThroughputSource == store.ThroughputRecomputed {
		t.Errorf("dbVendas diff recomputed though its rate agrees: %+v", r)
	}
}
