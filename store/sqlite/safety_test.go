package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/sqlite"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// TestUpgradeFromEveryMigration opens warehouses left at each earlier schema
// version, with data in them, and checks the current binary upgrades them and
// keeps the data.
func TestUpgradeFromEveryMigration(t *testing.T) {
	ctx := context.Background()
	versions := sqlite.MigrationVersionsForTest()
	for _, v := range versions[:len(versions)-1] {
		t.Run(fmt.Sprint(v), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "old.db")
			if err := sqlite.OpenAtVersionForTest(ctx, path, v); err != nil {
				t.Fatal(err)
			}
			raw, err := sql.Open("sqlite", "file:"+path)
			if err != nil {
				t.Fatal(err)
			}
			// Every version has had instance and history_row since 0001.
			if _, err := raw.Exec(`INSERT INTO instance (id, name, dirty, created_at) VALUES (1, 'OLD01', 1, 0)`); err != nil {
				t.Fatal(err)
			}
			insert := `INSERT INTO history_row (instance_id, restore_history_id, restore_local, database_name,
				restore_type, source) VALUES (1, 1, 1700000000000, 'Billing', 'D', 'history')`
			if v >= 11 { // the facts array of migration 0011
				insert = `INSERT INTO history_row (instance_id, restore_history_id, restore_local, facts)
					VALUES (1, 1, 1700000000000, '["Billing",null,"D"]')`
			}
			if _, err := raw.Exec(insert); err != nil {
				t.Fatal(err)
			}
			raw.Close()
			db, err := sqlite.Open(ctx, path)
			if err != nil {
				t.Fatalf("upgrade from %d: %v", v, err)
			}
			defer db.Close()
			if err := db.Check(ctx); err != nil {
				t.Fatal(err)
			}
			if err := db.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			rs, _, err := db.ListRestores(ctx, store.RestoreFilter{})
			if err != nil || len(rs) != 1 || rs[0].Database != "Billing" {
				t.Fatalf("after upgrade from %d: %v %+v", v, err, rs)
			}
		})
	}
}

func TestBackupIsAConsistentCopy(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	h, l, hs := fixture()
	importAll(t, db, h, l, hs)
	out := filepath.Join(t.TempDir(), "copy.db")
	if err := db.Backup(ctx, out); err != nil {
		t.Fatal(err)
	}
	cp, err := sqlite.Open(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	if err := cp.Check(ctx); err != nil {
		t.Fatal(err)
	}
	a, b := list(t, db), list(t, cp)
	if len(a) != 1 || len(b) != 1 || *a[0].DurationS != *b[0].DurationS {
		t.Fatalf("copy differs: %+v vs %+v", a, b)
	}
	if err := db.Backup(ctx, out); err == nil {
		t.Errorf("backup over an existing file succeeded; want an error")
	}
}

// TestPruneKeepsWhatRetentionAllows: retention rolls up old log restores
// only (issue 41); an old full restore stays raw, and a log restore younger
// than the retention too.
func TestPruneKeepsWhatRetentionAllows(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	old, l, hs := fixture()
	young := old
	young.RestoreHistoryID = 8
	young.RestoreDate = local("2025-06-01 10:00:00.000")
	oldLog := old
	oldLog.RestoreHistoryID, oldLog.Database, oldLog.RestoreType, oldLog.BackupType = 9, "Shipped", "L", "L"
	youngLog := oldLog
	youngLog.RestoreHistoryID, youngLog.RestoreDate = 10, young.RestoreDate
	importAll(t, db, old, young, l, hs, oldLog, youngLog)
	if rs := list(t, db); len(rs) != 4 {
		t.Fatalf("setup: %d restores", len(rs))
	}
	st, err := db.Prune(ctx, store.Retention{Restores: 365 * 24 * time.Hour, KeepLast: 1}, time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if st.History != 1 || st.LogRestores != 0 || st.RolledUp != 1 {
		t.Errorf("pruned %+v, want the 2023 log restore's history row, rolled up", st)
	}
	rs := list(t, db)
	if len(rs) != 3 {
		t.Fatalf("after prune: %+v", rs)
	}
	for _, r := range rs {
		if r.Kind == store.KindLog && r.At.Year() != 2025 {
			t.Errorf("the 2023 log restore is still there: %+v", r)
		}
	}
	if err := db.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestHistoryFactsMigration: a history row written by schema 10's columns
// comes out of migration 0011's facts array deriving the same restore, and
// showing the same evidence, as the same row imported today.
func TestHistoryFactsMigration(t *testing.T) {
	ctx := context.Background()
	path, raw := oldWarehouse(t, 10)
	h, l, hs := fixture()
	h.Database = "Pay\"roll <b>é"
	l.Database = h.Database
	h.UserName, h.KeyAlgorithm, h.SourceMachine = `CORP\svc`, "AES_256", "SRCBOX"
	h.BackupStart, h.BackupFinish = &l.CompletedAt, &l.CompletedAt
	h.DestinationFiles = []string{`D:\data\p.mdf`, `L:\log\p.ldf`}
	bstart := h.BackupStart.UnixMilli()
	if _, err := raw.Exec(`INSERT INTO instance (id, name, dirty, created_at) VALUES (1, 'SQL01', 1, 0)`); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO history_row (instance_id, restore_history_id, restore_local, database_name, user_name,
		restore_type, backup_set_uuid, source_server, source_database, backup_type, backup_start_local, backup_finish_local,
		first_lsn, last_lsn, backup_size, compressed_size, software_major, software_minor, software_build, has_checksums,
		key_algorithm, media_families, source_machine, devices, destination_files, source, origin)
		VALUES (1, ?, ?, ?, ?, 'D', NULL, ?, ?, 'D', ?, ?, ?, ?, ?, ?, 13, 0, 4474, 1, ?, 2, ?, ?, ?, 'history', 'h.csv:2')`,
		h.RestoreHistoryID, h.RestoreDate.UnixMilli(), h.Database, h.UserName, h.SourceServer, h.SourceDatabase, bstart, bstart,
		h.FirstLSN, h.LastLSN, *h.BackupSize, *h.CompressedSize, h.KeyAlgorithm, h.SourceMachine,
		`["\\\\nas\\b\\a.bak","\\\\nas\\b\\b.bak"]`, `["D:\\data\\p.mdf","L:\\log\\p.ldf"]`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	old, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	importAll(t, old, l, hs)

	fresh := storetest.Open(t)
	importAll(t, fresh, h, l, hs)
	a, b := list(t, old), list(t, fresh)
	if len(a) != 1 || len(b) != 1 {
		t.Fatalf("restores: migrated %d, fresh %d", len(a), len(b))
	}
	if !reflect.DeepEqual(a[0], b[0]) {
		t.Errorf("migrated restore differs from fresh import:\n%+v\n%+v", a[0], b[0])
	}
	ra, _, _ := old.ListRestores(ctx, store.RestoreFilter{})
	rb, _, _ := fresh.ListRestores(ctx, store.RestoreFilter{})
	da, err := old.GetRestoreDetail(ctx, ra[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	db, err := fresh.GetRestoreDetail(ctx, rb[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if da.History == nil || db.History == nil || !reflect.DeepEqual(*da.History, *db.History) {
		t.Errorf("evidence differs:\n%+v\n%+v", da.History, db.History)
	}
	if da.History != nil && (da.History.KeyAlgorithm != "AES_256" || da.History.SourceMachine != "SRCBOX" || da.History.BackupStart == nil) {
		t.Errorf("migrated evidence lost values: %+v", da.History)
	}
}

// TestMeasureIndexesStayDropped: a warehouse whose bulk reconciliation
// crashed with indexes dropped (schema 11) does not build again those that
// migrations 0012 and 0013 removed, and ends with 0013's restore_scan (the
// one the crash recorded was older).
func TestMeasureIndexesStayDropped(t *testing.T) {
	ctx := context.Background()
	path, raw := oldWarehouse(t, 11)
	var oldScan string
	if err := raw.QueryRow(`SELECT sql FROM sqlite_master WHERE name = 'restore_scan'`).Scan(&oldScan); err != nil {
		t.Fatal(err)
	}
	recorded, _ := json.Marshal(map[string]string{
		"restore_duration": "CREATE INDEX restore_duration ON restore (duration_s)",
		"restore_at":       "CREATE INDEX restore_at ON restore (at_utc)",
		"restore_source":   "CREATE INDEX restore_source ON restore (source_server, at_utc)",
		"restore_scan":     oldScan,
	})
	for _, q := range []string{
		`DROP INDEX restore_duration`, `DROP INDEX restore_at`, `DROP INDEX restore_source`, `DROP INDEX restore_scan`,
		`INSERT INTO setting (key, value) VALUES ('dropped_restore_indexes', '` + string(recorded) + `')`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	raw, err = sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var names []string
	rows, err := raw.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'restore' AND sql IS NOT NULL ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	rows.Close()
	if !reflect.DeepEqual(names, []string{"restore_instance_at", "restore_scan", "restore_series"}) {
		t.Errorf("indexes after upgrade: %v, want restore_instance_at, restore_scan and restore_series", names)
	}
	var scan string
	if err := raw.QueryRow(`SELECT sql FROM sqlite_master WHERE name = 'restore_scan'`).Scan(&scan); err != nil || !strings.Contains(scan, "source_server") {
		t.Errorf("restore_scan after upgrade: %q, %v; want 0013's, with source_server", scan, err)
	}
}

// TestWarehouseSchema: the version an upgrade starts from, read without
// changing the file.
func TestWarehouseSchema(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if v, err := sqlite.WarehouseSchema(ctx, filepath.Join(dir, "none.db")); v != 0 || err != nil {
		t.Errorf("missing file: %d, %v", v, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "none.db")); !os.IsNotExist(err) {
		t.Errorf("WarehouseSchema created the file (%v)", err)
	}
	old := filepath.Join(dir, "old.db")
	if err := sqlite.OpenAtVersionForTest(ctx, old, 10); err != nil {
		t.Fatal(err)
	}
	if v, err := sqlite.WarehouseSchema(ctx, old); v != 10 || err != nil {
		t.Errorf("schema 10 warehouse: %d, %v", v, err)
	}
	db, err := sqlite.Open(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if v, err := sqlite.WarehouseSchema(ctx, old); v != sqlite.SchemaVersion() || err != nil {
		t.Errorf("after Open: %d, %v; want %d", v, err, sqlite.SchemaVersion())
	}
	other := filepath.Join(dir, "other.db")
	raw, err := sql.Open("sqlite", "file:"+other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if v, err := sqlite.WarehouseSchema(ctx, other); v != 0 || err != nil {
		t.Errorf("a SQLite file of something else: %d, %v", v, err)
	}
}

// TestLogRestoreRebuiltByInstance: migration 0024 rebuilds log_restore
// with its dedupe key unique per instance, keeping every line and its id
// (restores cite lines by id), and the key still refuses a second copy.
func TestLogRestoreRebuiltByInstance(t *testing.T) {
	ctx := context.Background()
	path, raw := oldWarehouse(t, 23)
	defer raw.Close()
	for _, q := range []string{
		`INSERT INTO instance (id, name, created_at) VALUES (1, 'SQL01', 0), (2, 'SQL02', 0)`,
		`INSERT INTO log_restore (id, instance_id, dedupe_key, source, database_name, kind, completed_local, first_lsn, devices, origin)
		 VALUES (7, 1, 'k1', 'errorlog', 'Sales', 'log', 1000, '42000000001600001', '["D:\\b\\x.trn"]', 'ERRORLOG:3'),
		        (9, 2, 'k2', 'errorlog', 'HR', 'full', 2000, NULL, '[]', 'ERRORLOG:8')`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	var got []string
	rows, err := raw.Query(`SELECT id, instance_id, dedupe_key, database_name, kind, completed_local, COALESCE(first_lsn, ''), devices, origin
		FROM log_restore ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, inst, at int64
		var key, dbname, kind, lsn, devices, origin string
		if err := rows.Scan(&id, &inst, &key, &dbname, &kind, &at, &lsn, &devices, &origin); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d %d %s %s %s %d %s %s %s", id, inst, key, dbname, kind, at, lsn, devices, origin))
	}
	rows.Close()
	want := []string{`7 1 k1 Sales log 1000 42000000001600001 ["D:\\b\\x.trn"] ERRORLOG:3`, `9 2 k2 HR full 2000  [] ERRORLOG:8`}
	if !slices.Equal(got, want) {
		t.Errorf("log_restore after the upgrade:\n%q\nwant\n%q", got, want)
	}
	if _, err := raw.Exec(`INSERT INTO log_restore (instance_id, dedupe_key, source, database_name, kind) VALUES (1, 'k1', 'errorlog', 'Sales', 'log')`); err == nil {
		t.Error("a second line with an instance's dedupe key was stored")
	}
	var idx string
	if err := raw.QueryRow(`SELECT sql FROM sqlite_master WHERE name = 'log_restore_key'`).Scan(&idx); err != nil || !strings.Contains(idx, "UNIQUE") {
		t.Errorf("log_restore_key: %q, %v", idx, err)
	}
}

// oldWarehouse creates a warehouse with the migrations up to version
// applied, as an older restorewatch left it, and opens it raw (closed when
// the test ends).
func oldWarehouse(t *testing.T, version int) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	if err := sqlite.OpenAtVersionForTest(context.Background(), path, version); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return path, raw
}
