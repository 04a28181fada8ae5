// Package postgres is the warehouse on PostgreSQL (issue 41, SCALE.md
// "Beyond one machine"): the store.Warehouse contract kept on one server
// that several `serve` replicas and collectors share. store/sqlite stays the
// embedded default; this adapter is chosen by a postgres:// URL as --db (or
// RW_DB).
//
// Its migrations (migrations/NNNN_name.sql) carry the same numbers as
// store/sqlite's, so one schema version means the same tables on both
// engines; each is applied in one transaction and recorded in
// schema_migration, under an advisory lock so replicas starting together
// migrate once.
//
// Derivation takes an advisory lock per instance (reconcile.go), so
// replicas share the work and never derive one instance at once.
package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/restorewatch/restorewatch/store"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// DB is the warehouse on one PostgreSQL database, through a pool of
// connections (PostgreSQL has no single-writer limit: writes that must not
// interleave take row or advisory locks).
type DB struct {
	pool  *pgxpool.Pool
	where string // host:port/database, for messages: never the password
	// dump is the URL without its password, for pg_dump (Backup), which
	// gets the password in its environment.
	dump     string
	now      func() time.Time
	progress atomic.Pointer[func(store.Progress)]
	version  versionFlight // DataVersion's query, shared by concurrent callers
	// For tests: instances derived from a window (store/window), the
	// facts windows read, and the restores derivations made.
	windows, windowFacts, derivedRestores atomic.Int64
	// For tests: called between a month's prune's two phases; an error
	// stops the prune there, as a crash would.
	pruneHook func(context.Context) error
}

// IsURL reports whether dsn names a PostgreSQL warehouse (postgres:// or
// postgresql://) rather than a SQLite file.
func IsURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Password sources, read when the URL carries none: a file (a mounted
// secret) or the environment. Neither is ever logged or stored.
const (
	EnvPasswordFile = "RW_DB_PASSWORD_FILE"
	EnvPassword     = "RW_DB_PASSWORD"
)

// Config parses dsn into a pool configuration: the password from
// RW_DB_PASSWORD_FILE or RW_DB_PASSWORD when the URL has none (libpq's
// PGPASSWORD and ~/.pgpass work too), and TLS verified against the
// system's roots (sslmode=verify-full) unless the URL says otherwise or the
// server is on a Unix socket.
func Config(dsn string) (*pgxpool.Config, error) {
	u, err := url.Parse(dsn)
	if err != nil || !IsURL(dsn) {
		return nil, store.Errorf(store.EINVALID, "store: %q is not a postgres:// URL", redact(dsn))
	}
	q := u.Query()
	if q.Get("sslmode") == "" && !socketHost(u, q) {
		q.Set("sslmode", "verify-full")
		u.RawQuery = q.Encode()
	}
	cfg, err := pgxpool.ParseConfig(u.String())
	if err != nil {
		return nil, store.Errorf(store.EINVALID, "store: postgres URL %s: %v", redact(dsn), redactErr(err, u))
	}
	if _, has := u.User.Password(); !has {
		switch {
		case os.Getenv(EnvPasswordFile) != "":
			b, err := os.ReadFile(os.Getenv(EnvPasswordFile))
			if err != nil {
				return nil, store.Errorf(store.EINVALID, "store: read the warehouse password from %s=%s: %v", EnvPasswordFile, os.Getenv(EnvPasswordFile), err)
			}
			cfg.ConnConfig.Password = strings.TrimRight(string(b), "\r\n")
		case os.Getenv(EnvPassword) != "":
			cfg.ConnConfig.Password = os.Getenv(EnvPassword)
		}
	}
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		// A URL's application_name stays: replicas on one server can
		// each be told apart in pg_stat_activity.
		cfg.ConnConfig.RuntimeParams["application_name"] = "restorewatch"
	}
	cfg.ConnConfig.RuntimeParams["timezone"] = "UTC"
	return cfg, nil
}

// socketHost tells whether the URL reaches the server on a Unix socket
// (host=/run/postgresql or an empty host), where TLS does not apply.
func socketHost(u *url.URL, q url.Values) bool {
	h := q.Get("host")
	if h == "" {
		h = u.Hostname()
	}
	return h == "" || strings.HasPrefix(h, "/")
}

// withoutPassword is dsn without its password, with the TLS default Config
// applies.
func withoutPassword(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return ""
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	if q.Get("sslmode") == "" && !socketHost(u, q) {
		q.Set("sslmode", "verify-full")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// Redact drops the password from a warehouse URL, for messages.
func Redact(dsn string) string { return redact(dsn) }

func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(an unparsable URL)"
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.Redacted()
}

func redactErr(err error, u *url.URL) string {
	msg := err.Error()
	if p, has := u.User.Password(); has && p != "" {
		msg = strings.ReplaceAll(msg, p, "xxxxx")
	}
	return msg
}

// Open connects to the warehouse at dsn and applies pending migrations. It
// refuses a warehouse written by a newer restorewatch.
func Open(ctx context.Context, dsn string) (*DB, error) {
	cfg, err := Config(dsn)
	if err != nil {
		return nil, err
	}
	return open(ctx, cfg, withoutPassword(dsn))
}

// open is Open of a parsed configuration; dump is its URL without the
// password (for pg_dump).
func open(ctx context.Context, cfg *pgxpool.Config, dump string) (*DB, error) {
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, store.Errorf(store.EUNAVAILABLE, "store: connect to %s: %v", describe(cfg), err)
	}
	db := &DB{pool: pool, where: describe(cfg), now: time.Now, dump: dump}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, store.Errorf(store.EUNAVAILABLE, "store: connect to %s: %v", db.where, err)
	}
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if err := db.EnsureMonths(ctx, db.now()); err != nil {
		pool.Close()
		return nil, err
	}
	return db, nil
}

func describe(cfg *pgxpool.Config) string {
	c := cfg.ConnConfig
	host := c.Host
	if !strings.HasPrefix(host, "/") {
		host = net.JoinHostPort(host, strconv.Itoa(int(c.Port)))
	} else {
		host = host + ":" + strconv.Itoa(int(c.Port))
	}
	return host + "/" + c.Database
}

// Engine names the engine and the server (store.Admin); never a secret.
func (db *DB) Engine() string { return "postgres " + db.where }

// Close closes the pool.
func (db *DB) Close() error { db.pool.Close(); return nil }

// Ping checks the server answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.pool.Ping(ctx); err != nil {
		return store.Errorf(store.EUNAVAILABLE, "store: ping %s: %v", db.where, err)
	}
	return nil
}

// HasTable reports whether the warehouse has the table name.
func (db *DB) HasTable(ctx context.Context, name string) (bool, error) {
	var ok bool
	err := db.pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, name).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("store: has table %s: %w", name, err)
	}
	return ok, nil
}

// SetProgress has fn called as long operations move on (nil: none).
func (db *DB) SetProgress(fn func(store.Progress)) {
	if fn == nil {
		db.progress.Store(nil)
		return
	}
	db.progress.Store(&fn)
}

// Report hands p to the function SetProgress installed, if any.
func (db *DB) Report(p store.Progress) {
	if fn := db.progress.Load(); fn != nil {
		(*fn)(p)
	}
}

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

// SchemaVersion is the newest migration this binary knows.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// migrateLock is the advisory lock key replicas take while migrating
// (the bytes of "rwmigrat").
const migrateLock int64 = 0x72776d6967726174

func (db *DB) migrate(ctx context.Context) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	defer conn.Release()
	// Replicas starting together wait for the first to migrate; the lock
	// is the session's, released below whatever happens.
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrateLock); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrateLock) //nolint:errcheck // the session ends the lock anyway
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migration (
		version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	rows, err := conn.Query(ctx, `SELECT version FROM schema_migration`)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	applied := map[int]bool{}
	current := 0
	for _, v := range versions {
		applied[v] = true
		current = max(current, v)
	}
	ms, err := migrations()
	if err != nil {
		return err
	}
	if latest := ms[len(ms)-1].version; current > latest {
		return store.Errorf(store.ECONFLICT, "store: warehouse %s has schema version %d but this restorewatch knows only up to %d: use a newer restorewatch", db.where, current, latest)
	}
	for _, m := range ms {
		if applied[m.version] {
			continue
		}
		if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migration (version, name, applied_at) VALUES ($1, $2, $3)`,
				m.version, m.name, db.now().UnixMilli())
			return err
		}); err != nil {
			return fmt.Errorf("store: migration %s: %w", m.name, err)
		}
	}
	return nil
}

// WarehouseSchema returns the schema version of the warehouse: 0 when it
// holds no restorewatch schema yet.
func (db *DB) WarehouseSchema(ctx context.Context) (int, error) {
	var v *int
	err := db.pool.QueryRow(ctx, `SELECT MAX(version) FROM schema_migration`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("store: schema of %s: %w", db.where, err)
	}
	if v == nil {
		return 0, nil
	}
	return *v, nil
}

// DB satisfies the warehouse contract.
var _ store.Warehouse = (*DB)(nil)
