package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/ingest/demo"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/postgres"
	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
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

// counts reads what the warehouse at a --db (file or URL) holds after a
// crash, checking it first (SQLite: its integrity check; PostgreSQL: the
// schema and no invalid index).
func counts(t *testing.T, where string) (history, restores, dirty int) {
	t.Helper()
	db, err := openWarehouse(context.Background(), where)
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer db.Close()
	if err := db.Check(context.Background()); err != nil {
		t.Fatalf("after kill: %v", err)
	}
	raw := rawDB(t, where)
	if err := raw.QueryRow(`SELECT (SELECT COUNT(*) FROM history_row), (SELECT COUNT(*) FROM restore),
		(SELECT COUNT(*) FROM instance WHERE dirty = 1)`).Scan(&history, &restores, &dirty); err != nil {
		t.Fatal(err)
	}
	return history, restores, dirty
}

// TestImportSurvivesSIGKILL kills a real import process at random points and
// checks that the warehouse is intact, holds whole batches only, and that
// rerunning the import gives the same warehouse as an uninterrupted run —
// on either engine (RW_TEST_ENGINE): on PostgreSQL the killed process's
// open transaction is the server's to roll back.
func TestImportSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes; skipped with -short")
	}
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "history.csv")
	const rows = 40000
	writeHistory(t, csvPath, rows)
	importCmd := func(db string) *exec.Cmd {
		c := exec.Command(os.Args[0], "--db", db, "import", "history", csvPath)
		c.Env = append(os.Environ(), "RW_AS_MAIN=1")
		return c
	}
	ref := newDB(t, "ref.db")
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
		db := newDB(t, fmt.Sprintf("crash%d.db", k))
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

// TestKilledImportEqualsCleanImport kills a real `restorewatch import` of a
// demo fleet's history at five random points, one in each fifth of a clean
// import's run (so the kills land in the batches, the derivation and the
// analysis), runs the import once more and compares the whole warehouse —
// restores, series verdicts, regressions with what changed, known issues,
// hours lost, exposure, indexes and pending marks — with a clean import's.
// The error logs and messages are imported first, whole, so the history
// brings the regressions their attribution (source build, devices …). On
// either engine (RW_TEST_ENGINE): on PostgreSQL each kill's warehouse is a
// server-side copy of the base database.
func TestKilledImportEqualsCleanImport(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes; skipped with -short")
	}
	ctx := context.Background()
	dir := t.TempDir()
	fleet, err := demo.Generate(demo.Config{Restores: 6000, Seed: 1, Dir: filepath.Join(dir, "fleet")})
	if err != nil {
		t.Fatal(err)
	}
	var history string
	rest := fleet
	rest.Files = nil
	for _, f := range fleet.Files {
		if f.Kind == ingest.History {
			history = f.Path
		} else {
			rest.Files = append(rest.Files, f)
		}
	}
	base := newDB(t, "base.db")
	db, err := openWarehouse(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := demo.Import(ctx, db, rest, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	importCmd := func(db string) *exec.Cmd {
		c := exec.Command(os.Args[0], "--db", db, "import", "history", history)
		c.Env = append(os.Environ(), "RW_AS_MAIN=1")
		return c
	}
	ref := copyWarehouse(t, base, filepath.Join(dir, "ref.db"))
	start := time.Now()
	if out, err := importCmd(ref).CombinedOutput(); err != nil {
		t.Fatalf("clean import: %v\n%s", err, out)
	}
	full := time.Since(start)
	want := dumpWarehouse(t, ref)
	if len(want["regression"]) == 0 || len(want["known_issue"]) == 0 {
		t.Fatalf("the clean import found %d regressions, %d with a known issue: the fleet should have some",
			len(want["regression"]), len(want["known_issue"]))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const kills = 5
	// The five random kills, then one aimed at the narrowest window: the
	// restores derived and committed, their analysis not yet stored.
	for k := range kills + 1 {
		crashed := copyWarehouse(t, base, filepath.Join(dir, fmt.Sprintf("crash%d.db", k)))
		c := importCmd(crashed)
		start := time.Now()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = c.Wait(); close(exited) }()
		if k < kills {
			time.Sleep(full*time.Duration(k)/kills + time.Duration(rng.Int64N(int64(full/kills))))
		} else {
			waitAnalysisPending(t, crashed, exited)
		}
		_ = c.Process.Signal(syscall.SIGKILL)
		<-exited
		delay := time.Since(start)
		left := pendingMarks(t, crashed)
		if out, err := importCmd(crashed).CombinedOutput(); err != nil {
			t.Fatalf("rerun after kill %d: %v\n%s", k, err, out)
		}
		got := dumpWarehouse(t, crashed)
		if diff := diffDumps(want, got); diff != "" {
			t.Errorf("kill %d after %v of a %v import (left %s), then one more import: the warehouse differs from a clean import's:\n%s",
				k, delay.Round(time.Millisecond), full.Round(time.Millisecond), left, diff)
		} else {
			t.Logf("kill %d after %v of a %v import left %s; one more import made it equal to a clean import",
				k, delay.Round(time.Millisecond), full.Round(time.Millisecond), left)
		}
	}
}

// waitAnalysisPending polls the warehouse an import is writing until its
// restores are derived and their analysis is pending, or the import has
// exited.
func waitAnalysisPending(t *testing.T, path string, exited <-chan struct{}) {
	t.Helper()
	raw := rawDB(t, path)
	for {
		var pending, dirty int
		err := raw.QueryRow(`SELECT (SELECT count(*) FROM instance WHERE analysis_pending > 0),
			(SELECT count(*) FROM instance WHERE dirty > 0)`).Scan(&pending, &dirty)
		if err == nil && pending > 0 && dirty == 0 {
			return
		}
		select {
		case <-exited:
			return
		case <-time.After(time.Millisecond):
		}
	}
}

// copyWarehouse copies a closed warehouse: a file (and its WAL, if any) to
// to, or a PostgreSQL database into a new one on the server (to unused).
func copyWarehouse(t *testing.T, from, to string) string {
	t.Helper()
	if postgres.IsURL(from) {
		return pgtest.CopyOf(t, from)
	}
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(from + suffix)
		if errors.Is(err, fs.ErrNotExist) && suffix != "" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// pendingMarks describes what a crash left, read without changing anything.
func pendingMarks(t *testing.T, path string) string {
	t.Helper()
	raw := rawDB(t, path)
	var hist, restores, dirty int
	var dropped sql.NullString
	if err := raw.QueryRow(`SELECT (SELECT count(*) FROM history_row), (SELECT count(*) FROM restore),
		(SELECT count(*) FROM instance WHERE dirty > 0),
		(SELECT value FROM setting WHERE key = 'dropped_restore_indexes')`).Scan(&hist, &restores, &dirty, &dropped); err != nil {
		t.Fatal(err)
	}
	s := fmt.Sprintf("%d history rows, %d restores, %d instances to derive", hist, restores, dirty)
	if !postgres.IsURL(path) {
		var scan int
		if err := raw.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'restore_scan'`).Scan(&scan); err != nil {
			t.Fatal(err)
		}
		s += fmt.Sprintf(", restore_scan present: %t", scan == 1)
	}
	var pending int
	if err := raw.QueryRow(`SELECT count(*) FROM instance WHERE analysis_pending > 0`).Scan(&pending); err == nil {
		s += fmt.Sprintf(", %d instances to analyse", pending)
	}
	if dropped.Valid {
		s += ", dropped indexes " + dropped.String
	}
	return s
}

// dumpWarehouse reads what a user can see of a warehouse, table by table,
// each row as text, sorted: restore ids (which a re-derivation may assign
// differently) are replaced by the restore's natural key, and natural keys
// and fact ids by the facts they stand for; the times a row was written
// are left out.
func dumpWarehouse(t *testing.T, path string) map[string][]string {
	t.Helper()
	ctx := context.Background()
	raw := rawDB(t, path)
	// A fact's identity is what it states, not its id: on PostgreSQL the
	// ids a killed import's transaction drew from a sequence are not given
	// again, so a restore's natural key (its history row's id, or minus its
	// log record's) is named by the fact it stands for.
	facts := map[string]string{}
	for _, q := range []string{`SELECT 'h' || id, 'history ' || instance_id || '/' || restore_history_id || '/' || restore_local FROM history_row`,
		`SELECT 'l' || id, 'log ' || dedupe_key FROM log_restore`} {
		for _, r := range rawPairs(t, raw, q) {
			facts[r[0]] = r[1]
		}
	}
	fact := func(prefix string) func(any) string {
		return func(v any) string {
			if id, ok := v.(int64); ok {
				return facts[fmt.Sprintf("%s%d", prefix, id)]
			}
			return fmt.Sprint(v)
		}
	}
	naturalKey := func(v any) string {
		if k, ok := v.(int64); ok && k < 0 {
			return fact("l")(-k)
		}
		return fact("h")(v)
	}
	keys := map[int64]string{}
	for _, r := range rawPairs(t, raw, `SELECT CAST(id AS TEXT), CAST(natural_key AS TEXT) FROM restore`) {
		id, _ := strconv.ParseInt(r[0], 10, 64)
		k, _ := strconv.ParseInt(r[1], 10, 64)
		keys[id] = naturalKey(k)
	}
	restoreKey := func(v any) string {
		if id, ok := v.(int64); ok {
			return "restore " + keys[id]
		}
		return fmt.Sprint(v)
	}
	restoreKeys := func(v any) string {
		var ids []int64
		s, _ := v.(string)
		if err := json.Unmarshal([]byte(s), &ids); err != nil {
			return "unreadable " + s
		}
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = keys[id]
		}
		return strings.Join(out, " ")
	}
	// Skipped: ids and times, instance.derived, the count of
	// reconciliations that wrote an instance (a killed import's instances
	// are written once more), and restore.content_hash, a hash of the row
	// with its fact ids (the columns themselves are compared, ids named by
	// their facts).
	skip := map[string]bool{"id": true, "created_at": true, "first_seen": true, "last_seen": true, "status_at": true, "derived": true,
		"content_hash": true}
	mapped := map[string]func(any) string{"change_restore_id": restoreKey, "outliers": restoreKeys, "change_points": restoreKeys,
		"instance_id": func(v any) string { return fmt.Sprint(v) }, "natural_key": naturalKey,
		"history_id": fact("h"), "log_id": fact("l"), "extra_log_id": fact("l")}
	dump := map[string][]string{}
	for _, table := range []string{"instance", "restore", "series", "regression", "exposure", "setting"} {
		rows, err := raw.Query(`SELECT * FROM ` + table)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for i, c := range cols {
				if skip[c] {
					continue
				}
				v := fmt.Sprint(vals[i])
				if f := mapped[c]; f != nil {
					v = f(vals[i])
				}
				fmt.Fprintf(&b, "%s=%s ", c, v)
			}
			dump[table] = append(dump[table], b.String())
		}
		rows.Close()
	}
	indexes := `SELECT name, COALESCE(sql, '') FROM sqlite_master WHERE type = 'index'`
	if postgres.IsURL(path) {
		indexes = `SELECT c.relname::text, pg_get_indexdef(i.indexrelid) FROM pg_index AS i
			JOIN pg_class AS c ON c.oid = i.indexrelid JOIN pg_namespace AS n ON n.oid = c.relnamespace
			WHERE n.nspname = current_schema()`
	}
	idx, err := raw.Query(indexes)
	if err != nil {
		t.Fatal(err)
	}
	for idx.Next() {
		var name, q string
		if err := idx.Scan(&name, &q); err != nil {
			t.Fatal(err)
		}
		dump["index"] = append(dump["index"], name+": "+q)
	}
	idx.Close()
	// Through store, as the pages and the CLI read them: every restore
	// visible in the fleet-wide orders (restore_scan), each regression's
	// known issues and hours lost.
	db, err := openWarehouse(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	orders, err := db.UpdateOrders(ctx, nil) // read from every restore, as RestoreOrders
	if err != nil {
		t.Fatal(err)
	}
	dump["visible"] = []string{fmt.Sprintf("%d restores in the fleet-wide orders", orders.Count(time.UnixMilli(0), time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)))}
	regs, err := db.ListRegressions(ctx, store.RegressionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range regs {
		id := fmt.Sprintf("%s/%s/%s/%s", r.Instance, r.Database, r.Kind, r.Direction)
		dump["hours_lost"] = append(dump["hours_lost"], fmt.Sprintf("%s %.6f h per restore, %.3f restores a year", id, r.HoursLostPerRestore(), r.RestoresPerYear))
		for _, k := range r.KnownIssues {
			dump["known_issue"] = append(dump["known_issue"], id+" "+k)
		}
	}
	for _, rows := range dump {
		slices.Sort(rows)
	}
	return dump
}

// rawPairs is the two text columns of q's rows.
func rawPairs(t *testing.T, raw *sql.DB, q string) [][2]string {
	t.Helper()
	rows, err := raw.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var a, b string
		if err := rows.Scan(&a, &b); err != nil {
			t.Fatal(err)
		}
		out = append(out, [2]string{a, b})
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// diffDumps says how two dumps differ, a few rows per table; "" when equal.
func diffDumps(want, got map[string][]string) string {
	var b strings.Builder
	tables := slices.Sorted(maps.Keys(want))
	for table := range got {
		if _, ok := want[table]; !ok {
			tables = append(tables, table)
		}
	}
	for _, table := range tables {
		w, g := want[table], got[table]
		inW, inG := map[string]bool{}, map[string]bool{}
		for _, r := range w {
			inW[r] = true
		}
		for _, r := range g {
			inG[r] = true
		}
		var missing, extra []string
		for _, r := range w {
			if !inG[r] {
				missing = append(missing, r)
			}
		}
		for _, r := range g {
			if !inW[r] {
				extra = append(extra, r)
			}
		}
		if len(missing) == 0 && len(extra) == 0 && len(w) == len(g) {
			continue
		}
		fmt.Fprintf(&b, "  %s: %d rows, want %d; %d missing, %d unexpected\n", table, len(g), len(w), len(missing), len(extra))
		for i := 0; i < min(2, len(missing)); i++ {
			fmt.Fprintf(&b, "    missing    %.400s\n", missing[i])
		}
		for i := 0; i < min(2, len(extra)); i++ {
			fmt.Fprintf(&b, "    unexpected %.400s\n", extra[i])
		}
	}
	return b.String()
}
