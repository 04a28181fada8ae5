package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/postgres"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

// MigrateCmd moves a SQLite warehouse to PostgreSQL whole (issue 41).
type MigrateCmd struct {
	From string `required:"" help:"The SQLite warehouse to copy (stop every server and collector writing to it first)." type:"path"`
	To   string `required:"" help:"The PostgreSQL warehouse to fill: a postgres:// URL of an empty database (password from RW_DB_PASSWORD_FILE or RW_DB_PASSWORD)."`
}

// Run implements the command: it finishes what the SQLite warehouse has
// pending, copies every table in one PostgreSQL transaction and checks that
// each holds as many rows as its source, or keeps nothing.
func (c *MigrateCmd) Run(ctx context.Context, m *Main) error {
	if !postgres.IsURL(c.To) {
		return store.Errorf(store.EINVALID, "--to %q is not a postgres:// URL", postgres.Redact(c.To))
	}
	if _, err := os.Stat(c.From); errors.Is(err, fs.ErrNotExist) {
		return store.Errorf(store.ENOTFOUND, "no warehouse at %s", c.From)
	}
	src, err := sqlite.Open(ctx, c.From)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := m.completePending(ctx, src); err != nil {
		return err
	}
	dst, err := postgres.Open(ctx, c.To)
	if err != nil {
		return err
	}
	defer dst.Close()
	tables, err := src.Tables(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stderr, "copying %d tables of %s to %s in one transaction\n", len(tables), c.From, dst.Engine())
	counts, err := dst.Load(ctx, tables, func(t string) (int64, error) { return src.CountRows(ctx, t) },
		func(t string) ([]string, postgres.TableSource, error) {
			rows, err := src.ReadTable(ctx, t)
			if err != nil {
				return nil, nil, err
			}
			return rows.Columns, rows, nil
		}, func() ([]int32, error) { return src.FactMonths(ctx) })
	if err != nil {
		return err
	}
	var total int64
	t := newTable("table", "rows")
	for _, c := range counts {
		total += c.Held
		t.add(c.Table, fmt.Sprint(c.Held))
	}
	if _, err := t.write(m.Stdout, m.Width); err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "copied %d rows in %d tables; every table holds what %s holds\n", total, len(counts), c.From)
	// What SQLite kept is kept under its data version, which PostgreSQL's
	// is not: the dashboard's aggregates are kept again here, or the first
	// start on the copy computes them while its first visitor waits (7 s
	// for the overview at 3 M restores).
	keepAggregates(ctx, m, dst, true)
	return nil
}
