package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

const historyHeader = "instance,restore_history_id,restore_date,destination_database_name,user_name,restore_type,replace,recovery,stop_at,device_count,backup_set_uuid,family_guid,source_server_name,source_machine_name,source_database_name,backup_type,backup_start_date,backup_finish_date,first_lsn,last_lsn,backup_size,compressed_backup_size,software_major_version,software_minor_version,software_build_version,is_copy_only,has_backup_checksums,key_algorithm,media_family_count,device_type,physical_device_names"

// writeHistory writes n history rows over a few instances.
func writeHistory(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, historyHeader)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		at := t0.Add(time.Duration(i) * 7 * time.Minute).Format("2006-01-02 15:04:05.000")
		fmt.Fprintf(w, "SQL%02d,%d,%s,DB%d,svc,D,1,1,NULL,1,,,SRC01,SRC01,DB%d,D,%s,%s,%d000000000100001,%d000000000200001,%d,%d,13,0,4474,0,1,,1,2,\\\\nas\\b\\DB%d.bak\n",
			i%7, i, at, i%13, i%13, at, at, i+1, i+1, 1<<30+int64(i), 1<<29, i%13)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// counts reads what the warehouse holds after a crash, checking integrity.
func counts(t *testing.T, path string) (history, restores, dirty int) {
	t.Helper()
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer db.Close()
	if err := db.Check(context.Background()); err != nil {
		t.Fatalf("after kill: %v", err)
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if err := raw.QueryRow(`SELECT (SELECT COUNT(*) FROM history_row), (SELECT COUNT(*) FROM restore),
		(SELECT COUNT(*) FROM instance WHERE dirty = 1)`).Scan(&history, &restores, &dirty); err != nil {
		t.Fatal(err)
	}
	return history, restores, dirty
}

// TestImportSurvivesSIGKILL kills a real import process at random points and
// checks that the warehouse is intact, holds whole batches only, and that
// rerunning the import gives the same warehouse as an uninterrupted run.
func TestImportSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes; skipped with -short")
	}
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "history.csv")
	const rows = 40000
	writeHistory(t, csvPath, rows)
	importCmd := func(db string) *exec.Cmd {
		c := exec.Command(os.Args[0], "import", "history", "--db", db, csvPath)
		c.Env = append(os.Environ(), "RW_AS_MAIN=1")
		return c
	}
	ref := filepath.Join(dir, "ref.db")
	start := time.Now()
	if out, err := importCmd(ref).CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted import: %v\n%s", err, out)
	}
	full := time.Since(start)
	refHist, refRestores, _ := counts(t, ref)
	if refHist != rows || refRestores != rows {
		t.Fatalf("uninterrupted import: %d history rows, %d restores; want %d", refHist, refRestores, rows)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const kills = 8
	midway := 0
	for k := 0; k < kills; k++ {
		db := filepath.Join(dir, fmt.Sprintf("crash%d.db", k))
		c := importCmd(db)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(rng.Int64N(int64(full)))
		time.Sleep(delay)
		_ = c.Process.Signal(syscall.SIGKILL)
		_ = c.Wait()
		hist, _, _ := counts(t, db)
		if hist%store.BatchSize != 0 && hist != rows {
			t.Errorf("kill %d after %v: %d history rows is not a whole number of %d-row batches", k, delay, hist, store.BatchSize)
		}
		if hist > 0 && hist < rows {
			midway++
		}
		if out, err := importCmd(db).CombinedOutput(); err != nil {
			t.Fatalf("rerun after kill %d: %v\n%s", k, err, out)
		}
		hist, restores, dirty := counts(t, db)
		if hist != refHist || restores != refRestores || dirty != 0 {
			t.Errorf("rerun after kill %d: %d history, %d restores, %d dirty; want %d, %d, 0", k, hist, restores, dirty, refHist, refRestores)
		}
	}
	t.Logf("%d kills over a %v import, %d of them mid-way through the rows", kills, full, midway)
}
