package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/plan"
)

// PlanCmd prints the restore plan of one database: the chain of backups to
// an instant, each step's expected duration and the T-SQL script.
type PlanCmd struct {
	Instance   string        `help:"Instance whose backup history to read." required:""`
	Database   string        `help:"Database to restore." required:""`
	At         string        `help:"Instant to restore to (RFC 3339, or '2006-01-02 15:04:05' in UTC); default: the latest the backups reach."`
	ToInstance string        `name:"to-instance" help:"Instance that will restore (its measured restores give the durations); default: --instance."`
	DataPath   string        `name:"data-path" help:"Folder for the data files (MOVE … TO); default: the target's usual data folder, else the original paths."`
	LogPath    string        `name:"log-path" help:"Folder for the log files; default: the target's usual log folder, else the original paths."`
	RTO        time.Duration `name:"rto" help:"RTO target when the instance has no rto tag." default:"4h"`
	Format     string        `help:"sql, text or json." enum:"sql,text,json" default:"text"`
	Wide       bool          `help:"Text: every log restore on its own line (default: one line per run of them)."`
	// The change points estimates start after are the analysis': give the
	// --ratio, --min-each and --alpha analyze was given.
	AnalysisFlags `embed:""`
}

// Run implements the command.
func (c *PlanCmd) Run(ctx context.Context, m *Main) error {
	at, err := plan.ParseAt(c.At)
	if err != nil {
		return usageError{fmt.Errorf("--at %w", err)}
	}
	opt, err := c.options()
	if err != nil {
		return err
	}
	db, err := m.openExisting(ctx)
	if err != nil {
		return err
	}
	p, sopt, err := plan.Make(ctx, db, plan.Request{Instance: c.Instance, Database: c.Database, At: at,
		TargetInstance: c.ToInstance, DataPath: c.DataPath, LogPath: c.LogPath, DefaultRTO: c.RTO, Analysis: opt.Config, Calibrate: true})
	var gap *plan.GapError
	if errors.As(err, &gap) {
		return store.Errorf(store.EINVALID, "%s; ask for that instant with --at %s", gap.Error(), gap.LastReachable.UTC().Format(time.RFC3339))
	}
	if err != nil {
		return err
	}
	switch c.Format {
	case "sql":
		_, err = fmt.Fprint(m.Stdout, plan.Script(p, sopt))
	case "json":
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(struct {
			plan.Plan
			Script string `json:"script"`
		}{p, plan.Script(p, sopt)})
	default:
		if c.Wide {
			_, err = fmt.Fprint(m.Stdout, plan.TextWide(p))
			break
		}
		out, cut := fitText(plan.Text(p), m.Width)
		if _, err = fmt.Fprint(m.Stdout, out); err == nil && cut {
			_, err = fmt.Fprintf(m.Stderr, "(fitted to %d columns, the steps' basis cut with …: --wide shows everything)\n", m.Width)
		}
	}
	return err
}
