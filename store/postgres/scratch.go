package postgres

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
)

// ScratchPrefix starts the name of every scratch copy's database, after
// the warehouse's own name: "rw_dry_run_1f2e3d4c5b6a7988".
const ScratchPrefix = "_dry_run_"

// Scratch copies the warehouse at dsn into a new database on the same
// server and opens the copy: `import --dry-run` imports there, so it
// derives and counts exactly what a real import would, and drop removes
// it. The copy is pg_dump piped into pg_restore (a consistent snapshot,
// taken while replicas and collectors keep writing; nothing of the
// warehouse is written or locked beyond the snapshot's share locks). It
// needs pg_dump and pg_restore (postgresql-client) no older than the
// server, the right to create databases (CREATEDB) and room on the server
// for the copy; the warehouse's own migrations are not applied to it (the
// copy's are). The password is passed to the tools in their environment,
// never on a command line.
func Scratch(ctx context.Context, dsn string) (db *DB, drop func(context.Context) error, err error) {
	cfg, err := Config(dsn)
	if err != nil {
		return nil, nil, err
	}
	where := describe(cfg)
	var dump, restore string
	for _, tool := range []struct {
		name string
		path *string
	}{{"pg_dump", &dump}, {"pg_restore", &restore}} {
		if *tool.path, err = exec.LookPath(tool.name); err != nil {
			return nil, nil, store.Errorf(store.EUNAVAILABLE, "store: a dry run copies %s with pg_dump and pg_restore (Debian: apt-get install postgresql-client): %v", where, err)
		}
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, nil, err
	}
	base := cfg.ConnConfig.Database
	if len(base) > 63-len(ScratchPrefix)-16 {
		base = base[:63-len(ScratchPrefix)-16]
	}
	name := base + ScratchPrefix + hex.EncodeToString(rnd[:])
	admin := func(ctx context.Context, q string) error {
		conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
		if err != nil {
			return store.Errorf(store.EUNAVAILABLE, "store: connect to %s: %v", where, err)
		}
		defer conn.Close(context.WithoutCancel(ctx))
		_, err = conn.Exec(ctx, q)
		return err
	}
	if err := admin(ctx, `CREATE DATABASE `+pgx.Identifier{name}.Sanitize()); err != nil {
		return nil, nil, store.Errorf(store.EUNAVAILABLE, "store: a dry run copies %s into a scratch database, which this role may not create (it needs CREATEDB; or import into a scratch warehouse of your own): %v", where, err)
	}
	drop = func(ctx context.Context) error {
		if db != nil {
			db.Close()
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := admin(ctx, `DROP DATABASE IF EXISTS `+pgx.Identifier{name}.Sanitize()+` WITH (FORCE)`); err != nil {
			return fmt.Errorf("store: drop the dry run's scratch database %s: %w (drop it by hand)", name, err)
		}
		return nil
	}
	fail := func(err error) (*DB, func(context.Context) error, error) {
		return nil, nil, errors.Join(err, drop(ctx))
	}
	src := withoutPassword(dsn)
	dst, err := withDatabase(src, name)
	if err != nil {
		return fail(err)
	}
	env := toolEnv(cfg.ConnConfig.Password)
	// No comments (COMMENT ON EXTENSION needs the extension's owner), no
	// owners or grants: the copy is this role's, for this run only.
	d := exec.CommandContext(ctx, dump, "--format=custom", "--no-owner", "--no-privileges", "--no-comments", "--dbname", src)
	r := exec.CommandContext(ctx, restore, "--no-owner", "--no-privileges", "--exit-on-error", "--dbname", dst)
	d.Env, r.Env = env, env
	var derr, rerr bytes.Buffer
	d.Stderr, r.Stderr = &derr, &rerr
	if r.Stdin, err = d.StdoutPipe(); err != nil {
		return fail(err)
	}
	if err := d.Start(); err != nil {
		return fail(err)
	}
	rrun := r.Run()
	dwait := d.Wait()
	if dwait != nil || rrun != nil {
		return fail(store.Errorf(store.EUNAVAILABLE, "store: copy %s into the scratch database %s: pg_dump: %v %s; pg_restore: %v %s", where, name,
			dwait, strings.TrimSpace(derr.String()), rrun, strings.TrimSpace(rerr.String())))
	}
	sc := cfg.Copy()
	sc.ConnConfig.Database = name
	if db, err = open(ctx, sc, dst); err != nil {
		return fail(err)
	}
	return db, drop, nil
}

// withDatabase is the URL dsn naming database name instead of its own.
func withDatabase(dsn, name string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", store.Errorf(store.EINVALID, "store: %q is not a postgres:// URL", redact(dsn))
	}
	u.Path = "/" + name
	u.RawPath = ""
	if q := u.Query(); q.Has("dbname") {
		q.Set("dbname", name)
		u.RawQuery = q.Encode()
	}
	return u.String(), nil
}
