package ingest_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/plan"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// TestDetectReadsThroughClientPrefixes: detection reads a file as the
// messages parser does (unwrap.Text), so output behind impacket's
// INFO(S): Line N: prefixes or Command N: labels is captured output, not a
// file to skip.
func TestDetectReadsThroughClientPrefixes(t *testing.T) {
	for _, rel := range []string{"HRSQL/impacket_mssqlclient_restore.txt", "HRSQL/command_labels_full_bak.txt",
		"SQL01/invoke_sqlcmd_two_statements.txt", "SQL01/empty_log_after_chain.txt"} {
		f, err := os.Open(filepath.Join("..", "testdata", "issue39", rel))
		if err != nil {
			t.Fatal(err)
		}
		kind, why, err := ingest.Detect(f)
		f.Close()
		if err != nil || kind != ingest.Messages {
			t.Errorf("%s: kind %q (%s), err %v", rel, kind, why, err)
		}
	}
}

// TestIssue39Folder imports testdata/issue39 as a DBA would, one command
// over the folder: dbatools console captures are read (or rejected object
// by object, with the way out), batches and prefixed output give each
// restore its own database, and the warehouse holds exactly these restores.
func TestIssue39Folder(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join("..", "testdata", "issue39")
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
	rejects := map[string]int{}
	for _, r := range run.Files {
		rel, _ := filepath.Rel(root, r.Path)
		rel = filepath.ToSlash(rel)
		if r.Err != nil {
			t.Errorf("%s: %v", rel, r.Err)
		}
		if r.Skipped != "" && rel != "README.md" {
			t.Errorf("%s skipped: %s", rel, r.Skipped)
		}
		if len(r.Rejects) > 0 {
			rejects[rel] = len(r.Rejects)
		}
	}
	wantRejects := map[string]int{"dbatools/backuphistory_formattable_ps51.txt": 2, "dbatools/testlastbackup_formatlist_ps51.txt": 1,
		"SQL01/invoke_sqlcmd_unpairable.txt": 2}
	if !maps.Equal(rejects, wantRejects) {
		t.Errorf("rejects %v, want %v", rejects, wantRejects)
	}
	got := map[string]int{}
	timed := 0
	err = storetest.EachRestore(ctx, db, store.RestoreFilter{}, func(r *store.Restore) error {
		got[r.Instance+"|"+r.Database+"|"+string(r.Kind)]++
		if r.DurationSource == "dbatools_file_restore_time" {
			timed++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{
		"SQLPROD02|Orders|full": 1, "SQLPROD02|Orders|log": 1, "SQLES01|Ventas|full": 1,
		"SQL01|SalesA|full_or_diff": 1, "SQL01|SalesB|full_or_diff": 1,
		"SQL01|Ledger|full_or_diff": 1, "SQL01|Ledger|log": 2,
		"HRSQL|HR|full": 1, "HRSQL|HR|log": 2, "HRSQL|Payroll|full": 1, "HRSQL|Payroll|diff": 1,
	}
	if !maps.Equal(got, want) {
		t.Errorf("restores\n got %v\nwant %v", got, want)
	}
	if timed != 3 {
		t.Errorf("%d restores timed by dbatools, want 3", timed)
	}
}

// TestConsoleWhateverKindNamed: import messages (or history) on a dbatools
// console capture reads it as such, and says so.
func TestConsoleWhateverKindNamed(t *testing.T) {
	ctx := context.Background()
	db := storetest.OpenEngine(t)
	for _, k := range []ingest.FileKind{ingest.Messages, ingest.History} {
		f, err := os.Open(filepath.Join("..", "testdata", "issue39", "dbatools", "es-ES_restore_and_history_formatlist.txt"))
		if err != nil {
			t.Fatal(err)
		}
		l := ingest.NewLoader(db, ingest.LoaderOptions{})
		st, err := l.Store(ctx, ingest.Input{Kind: k, Name: "es.txt", R: f})
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if len(st.Wrappers) != 1 || !strings.Contains(st.Wrappers[0], "Format-List of Restore-DbaDatabase") || st.Read == 0 {
			t.Errorf("%s: %+v", k, st)
		}
	}
}

// TestReplicasJoinedByLSN: an availability group's full and differential
// taken on one replica and its logs on another, exported from each msdb
// without an AG column or family GUID (modelled on dbatools'
// AgDiffRestore.json): the plan, asked from either replica, builds the one
// chain across both, because a log of one holds the last LSN of the
// other's differential, and says that is how it joined them.
func TestReplicasJoinedByLSN(t *testing.T) {
	ctx := context.Background()
	db := storetest.OpenEngine(t)
	l := ingest.NewLoader(db, ingest.LoaderOptions{})
	for _, name := range []string{"SQLAG1_full_diff_no_ag_column.csv", "SQLAG2_logs_no_ag_column.csv", "SQLPROD03_logs_during_full.csv"} {
		f, err := os.Open(filepath.Join("..", "testdata", "issue39", "msdb", name))
		if err != nil {
			t.Fatal(err)
		}
		st, err := l.Store(ctx, ingest.Input{Kind: ingest.Backups, Name: name, R: f})
		f.Close()
		if err != nil || len(st.Rejects) > 0 {
			t.Fatalf("%s: %v %+v", name, err, st.Rejects)
		}
	}
	for _, from := range []string{"SQLAG1", "SQLAG2"} {
		p, _, err := plan.Make(ctx, db, plan.Request{Instance: from, Database: "Claims"})
		if err != nil {
			t.Fatalf("plan from %s: %v", from, err)
		}
		var got []string
		for _, s := range p.Steps {
			got = append(got, string(s.Kind)+"@"+s.Set.Instance)
		}
		if want := "full@SQLAG1 diff@SQLAG1 log@SQLAG2 log@SQLAG2 log@SQLAG2 log@SQLAG2 log@SQLAG2"; strings.Join(got, " ") != want {
			t.Errorf("plan from %s: %v, want %s", from, got, want)
		}
		if !strings.Contains(p.Via, "LSN continuity") || !strings.Contains(p.Via, "holds the last LSN") {
			t.Errorf("plan from %s: via %q", from, p.Via)
		}
	}
	// A database of another name on another instance is no candidate,
	// and one instance's own history needs no other.
	p, _, err := plan.Make(ctx, db, plan.Request{Instance: "SQLPROD03", Database: "Inventory"})
	if err != nil || len(p.Replicas) > 1 {
		t.Errorf("Inventory: %v, replicas %v", err, p.Replicas)
	}
}
