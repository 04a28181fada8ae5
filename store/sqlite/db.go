package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/restorewatch/restorewatch/store"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// DB is the warehouse: one writer connection (SQLite allows one writer at a
// time; a single connection turns contention into queueing instead of
// "database is locked") and a read pool in WAL mode so pages stay fast while
// an import runs.
type DB struct {
	path     string
	write    *sql.DB
	read     *sql.DB
	now      func() time.Time
	progress atomic.Pointer[progressFunc] // see SetProgress
	windows  atomic.Int64                 // instances derived from a window (window.go), for tests
	// windowFacts counts the facts windows read, for tests.
	windowFacts atomic.Int64
	// checkpoints copies the WAL into the database file (checkpoint.go).
	checkpoints *checkpointer
	// reconcile bounds reconciliation's pipeline and transactions
	// (reconcile.go); a field, not a package knob, so tests that narrow
	// it can run beside others.
	reconcile reconcileLimits
}

// Open opens (creating if needed) the warehouse at path and applies pending
// migrations. It refuses a warehouse written by a newer restorewatch.
func Open(ctx context.Context, path string) (*DB, error) {
	if path == "" {
		return nil, store.Errorf(store.EINVALID, "store: no warehouse path given")
	}
	dsn := func(readOnly bool) string {
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(10000)")
		q.Add("_pragma", "foreign_keys(1)")
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
		if readOnly {
			// Pages read a warehouse of a million restores: memory-map it and
			// keep a larger page cache per reader instead of pread per page.
			q.Add("_pragma", "query_only(1)")
			q.Add("_pragma", "mmap_size(1073741824)")
			q.Add("_pragma", "cache_size(-32768)")
		} else {
			q.Set("_txlock", "immediate")
			// Reconciliation rewrites many index pages of a growing table in
			// one transaction: with the default 2 MiB cache those pages spill
			// to the WAL, and statement journals go to temporary files. 32 MiB
			// holds them; a larger cache cost more than it saved (modernc's
			// allocator hands each cached page back to the OS one madvise at a
			// time, so closing a large cache is slow; docs/benchmarks-log.md).
			q.Add("_pragma", "cache_size(-32768)")
			q.Add("_pragma", "temp_store(memory)")
			q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", writerCheckpointPages))
		}
		return "file:" + path + "?" + q.Encode()
	}
	w, err := sql.Open("sqlite", dsn(false))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	db := &DB{path: path, write: w, now: time.Now, reconcile: defaultReconcileLimits}
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, store.Errorf(store.EUNAVAILABLE, "store: cannot open warehouse %s: %v", path, err)
	}
	if err := db.migrate(ctx); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite", dsn(true))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("store: open %s for reading: %w", path, err)
	}
	// Keep every reader open: database/sql keeps two idle by default, so under
	// eight clients most queries paid for opening a connection (and mapping
	// the file, and warming its cache) again, a large share of the
	// dashboard's CPU (docs/benchmarks-log.md).
	n := max(4, runtime.NumCPU()*2)
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	r.SetConnMaxIdleTime(0)
	db.read = r
	// The checkpointer reads no page of the database: no cache, no map.
	if db.checkpoints, err = startCheckpointer("file:" + path + "?_pragma=busy_timeout(10000)"); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return db, nil
}

// Close stops the checkpointer and closes both pools; a second call does nothing more.
func (db *DB) Close() error {
	var errs []string
	if db.checkpoints != nil {
		if err := db.checkpoints.close(); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if db.read != nil {
		if err := db.read.Close(); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if err := db.write.Close(); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("store: close: %s", strings.Join(errs, "; "))
	}
	return nil
}

// Path returns the warehouse file.
func (db *DB) Path() string { return db.path }

// Engine names the engine and the file (store.Admin).
func (db *DB) Engine() string { return "sqlite " + db.path }

// DB satisfies the warehouse contract.
var _ store.Warehouse = (*DB)(nil)

type migration struct {
	version int
	name    string
	sql     string
}

func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("store: migration %s is not named NNNN_name.sql", name)
		}
		b, err := migrationFS.ReadFile("migrations/" + name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// WarehouseSchema returns the schema version of the warehouse at path
// without changing it: 0 when the file does not exist yet or holds no
// restorewatch schema. A caller can tell an upgrade (Open will apply
// migrations to existing data, which takes a while on a large warehouse)
// from a first open.
func WarehouseSchema(ctx context.Context, path string) (int, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	q := url.Values{}
	q.Add("mode", "ro")
	q.Add("_pragma", "busy_timeout(10000)")
	c, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return 0, err
	}
	defer c.Close()
	var v sql.NullInt64
	err = c.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migration`).Scan(&v)
	if err != nil && strings.Contains(err.Error(), "no such table") {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: schema of %s: %w", path, err)
	}
	return int(v.Int64), nil
}

// SchemaVersion is the newest migration this binary knows.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migration (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	applied := map[int]bool{}
	rows, err := db.write.QueryContext(ctx, `SELECT version FROM schema_migration`)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	current := 0
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return fmt.Errorf("store: migrate: %w", err)
		}
		applied[v] = true
		current = max(current, v)
	}
	rows.Close()
	ms, err := migrations()
	if err != nil {
		return err
	}
	if latest := ms[len(ms)-1].version; current > latest {
		return store.Errorf(store.ECONFLICT, "store: warehouse %s has schema version %d but this restorewatch knows only up to %d: use a newer restorewatch", db.path, current, latest)
	}
	// Every migration not yet recorded is applied in order, not only those
	// above the newest: two branches may have landed migrations out of order.
	for _, m := range ms {
		if applied[m.version] {
			continue
		}
		if err := db.applyMigration(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

func (db *DB) applyMigration(ctx context.Context, m migration) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: migration %s: %w", m.name, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return fmt.Errorf("store: migration %s: %w", m.name, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migration (version, name, applied_at) VALUES (?, ?, ?)`,
		m.version, m.name, db.now().UnixMilli()); err != nil {
		return fmt.Errorf("store: migration %s: %w", m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: migration %s: %w", m.name, err)
	}
	return nil
}

// Backup writes a consistent copy of the warehouse to path with VACUUM INTO,
// which reads one snapshot while imports go on.
func (db *DB) Backup(ctx context.Context, path string) error {
	// The read pool is query_only, which refuses VACUUM INTO; a connection of
	// its own reads one WAL snapshot without holding up the writer.
	c, err := sql.Open("sqlite", "file:"+db.path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		return store.Errorf(store.EINVALID, "store: backup to %s: %v", path, err)
	}
	return nil
}

// Check runs SQLite's integrity and foreign-key checks.
func (db *DB) Check(ctx context.Context) error {
	var res string
	if err := db.read.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil {
		return fmt.Errorf("store: integrity check: %w", err)
	}
	if res != "ok" {
		return store.Errorf(store.EINTERNAL, "store: integrity check: %s", res)
	}
	rows, err := db.read.QueryContext(ctx, `PRAGMA foreign_key_check`)
	if err != nil {
		return fmt.Errorf("store: foreign key check: %w", err)
	}
	defer rows.Close()
	if rows.Next() {
		return store.Errorf(store.EINTERNAL, "store: foreign key check found orphan rows")
	}
	return rows.Err()
}
