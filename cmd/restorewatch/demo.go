package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/restorewatch/restorewatch/ingest/demo"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/human"
)

// DemoCmd writes a realistic demo fleet as real files and imports them.
type DemoCmd struct {
	Instances     int    `help:"Restoring instances (the first 12 carry the stories)." default:"12"`
	Restores      int    `help:"Total restores; 0 = what half a year of the fleet's jobs run."`
	Months        int    `help:"Length of the period." default:"6"`
	Seed          uint64 `help:"Seed of the fleet." default:"1"`
	Dir           string `help:"Where the demo's ERRORLOG files and CSV are written (default: restorewatch-demo beside the warehouse file, or in the temporary folder for a PostgreSQL warehouse)." type:"path"`
	AnalysisFlags `embed:""`
}

// Run implements the command.
func (c *DemoCmd) Run(ctx context.Context, m *Main) error {
	opt, err := c.options()
	if err != nil {
		return err
	}
	db, err := m.openDB(ctx)
	if err != nil {
		return err
	}
	_, err = loadDemo(ctx, m, db, c, opt)
	return err
}

// loadDemo fills an empty warehouse with the demo fleet and analyses it
// with opt (the caller's --ratio, --min-each, --alpha); it refuses one that
// has data, so a real warehouse is never mixed with made-up restores.
func loadDemo(ctx context.Context, m *Main, db store.Warehouse, c *DemoCmd, opt analysis.Options) (demo.Summary, error) {
	n, err := db.CountAllRestores(ctx)
	if err != nil {
		return demo.Summary{}, err
	}
	if n > 0 {
		return demo.Summary{}, store.Errorf(store.ECONFLICT, "warehouse %s already holds %d restores: the demo only fills an empty warehouse (use another --db)", where(db), n)
	}
	dir := c.Dir
	if dir == "" {
		// Beside the file; a server's warehouse has no folder of ours.
		dir = filepath.Join(os.TempDir(), "restorewatch-demo")
		if f, ok := db.(interface{ Path() string }); ok {
			dir = filepath.Join(filepath.Dir(f.Path()), "restorewatch-demo")
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return demo.Summary{}, store.Errorf(store.EINVALID, "demo: %v", err)
	}
	start := time.Now()
	fleet, err := demo.Generate(demo.Config{Instances: c.Instances, Restores: c.Restores, Months: c.Months,
		Seed: c.Seed, Now: time.Now().UTC().Truncate(24 * time.Hour), Dir: dir})
	if err != nil {
		return demo.Summary{}, err
	}
	fmt.Fprintf(m.Stderr, "demo: wrote %d files to %s in %s; importing…\n", len(fleet.Files), dir, human.Duration(time.Since(start).Seconds()))
	var progress func(done, total int)
	if m.IsTerminal {
		progress = func(done, total int) { fmt.Fprintf(m.Stderr, "\rdemo: imported %d/%d files", done, total) }
	}
	sum, err := demo.ImportWith(ctx, db, fleet, opt, progress)
	if progress != nil {
		fmt.Fprintln(m.Stderr)
	}
	if err != nil {
		return sum, err
	}
	keepAggregates(ctx, m, db, false)
	fmt.Fprintf(m.Stdout, "demo: %d files, %d records read, %d added, %d rejected, in %s (files kept in %s)\n",
		sum.Files, sum.Read, sum.Added, len(sum.Rejects), human.Duration(time.Since(start).Seconds()), dir)
	return sum, nil
}
