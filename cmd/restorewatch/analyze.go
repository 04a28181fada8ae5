package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/export"
	"github.com/restorewatch/restorewatch/store/human"
)

// AnalyzeCmd recomputes every finding from scratch. Restores are derived
// from their raw facts by every import, so it re-derives only what
// db.Reconcile finds to do, unless --rederive asks for all of them.
type AnalyzeCmd struct {
	Rederive      bool `help:"First re-derive every restore from its raw facts, for after an upgrade. Without it, only the instances an interrupted import left unreconciled are re-derived (and every instance once when restorewatch's derivation itself changed). Slow on a large warehouse: 40 s to minutes per million restores."`
	AnalysisFlags `embed:""`
}

// AnalysisFlags are the thresholds of SPEC §5, shared by the commands that
// run the engine.
type AnalysisFlags struct {
	Ratio       float64 `help:"Flag a regression when current/baseline median throughput is at most this." default:"0.67"`
	MinEach     int     `name:"min-each" help:"Restores needed on each side of a change." default:"3"`
	Alpha       float64 `help:"Significance level of the rank test." default:"0.05"`
	KnownIssues string  `name:"known-issues" help:"Extra known-issue catalogue (JSON) to add to the built-in one." type:"existingfile"`
}

// options builds analysis options from the flags.
func (f AnalysisFlags) options() (analysis.Options, error) {
	opt := analysis.Options{Config: analysis.DefaultConfig()}
	opt.Config.Ratio, opt.Config.MinEach, opt.Config.Alpha = f.Ratio, f.MinEach, f.Alpha
	if f.KnownIssues != "" {
		extra, err := loadKnownIssues(f.KnownIssues)
		if err != nil {
			return opt, err
		}
		opt.KnownIssues = append(analysis.DefaultKnownIssues(), extra...)
	}
	return opt, nil
}

// Run implements the command.
func (c *AnalyzeCmd) Run(ctx context.Context, m *Main) error {
	opt, err := c.options()
	if err != nil {
		return err
	}
	db, err := m.openExisting(ctx)
	if err != nil {
		return err
	}
	var phases *phaseBars
	if m.IsTerminal {
		phases = &phaseBars{w: m.Stderr}
		db.SetProgress(phases.report)
		defer db.SetProgress(nil)
	}
	a, err := ingest.NewLoader(db, ingest.LoaderOptions{Analysis: opt}).Analyze(ctx, c.Rederive)
	if phases != nil {
		phases.finish()
	}
	if err == nil {
		keepAggregates(ctx, m, db, false)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "analyzed %d restores in %d series on %d instances: %d regressions, %d improvements (reconcile %s, analysis %s)\n",
		a.Restores, a.Series, a.Instances, a.Regressions, a.Improvements, human.Duration(a.Derivation.Seconds()), human.Duration(a.Analysis.Seconds()))
	return nil
}

// RegressionsCmd lists regressions.
type RegressionsCmd struct {
	Format string `help:"table, json or csv." enum:"table,json,csv" default:"table"`
	Status string `help:"open, acknowledged, resolved, or active (open and acknowledged); empty = all." enum:",open,acknowledged,resolved,active" default:""`
	Wide   bool   `help:"Print every column whole, however wide the terminal."`
}

// Run implements the command.
func (c *RegressionsCmd) Run(ctx context.Context, m *Main) (err error) {
	db, err := m.openExisting(ctx)
	if err != nil {
		return err
	}
	regs, err := db.ListRegressions(ctx, store.RegressionFilter{Status: c.Status, Direction: "any"})
	if err != nil {
		return err
	}
	rows := make([]export.RegressionRow, len(regs))
	for i := range regs {
		rows[i] = export.Regression(&regs[i])
		if rows[i].NextSteps, err = analysis.RegressionNextSteps(ctx, db, &regs[i]); err != nil {
			return err
		}
	}
	// Open watches (issue 37), state "watch": a series whose newest
	// restore lies beyond its usual, not yet confirmed.
	var watches []store.Watch
	if c.Status == "" || c.Status == store.StatusOpen || c.Status == "active" {
		if watches, err = db.ListWatches(ctx, store.WatchFilter{State: store.WatchOpen}); err != nil {
			return err
		}
	}
	if c.Format != "table" {
		for i := range watches {
			rows = append(rows, export.Watch(&watches[i]))
		}
	}
	switch c.Format {
	case "json":
		return export.WriteJSON(m.Stdout, rows)
	case "csv":
		return writeRegressionsCSV(m, rows)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(m.Stdout, "(no regressions)")
		if err == nil && len(watches) > 0 {
			err = printWatches(m, watches)
		}
		return err
	}
	defer func() {
		if err == nil && len(watches) > 0 {
			err = printWatches(m, watches)
		}
	}()
	t := newTable("ID", "STATUS", "INSTANCE", "DATABASE", "KIND", "SINCE (UTC)", "CHANGE", "BEFORE → NOW", "N", "P", "LOST A YEAR",
		"WHAT CHANGED", "KNOWN ISSUE")
	// In 80 columns: who, since when, how much slower, what it costs and
	// why; the statistics and the speeds are the evidence page's.
	t.min, t.drop = map[int]int{0: 2, 5: 10, 6: 11, 10: 6}, []int{9, 8, 1, 4, 7, 12}
	for _, r := range rows {
		var changed []string
		for _, f := range r.ChangedFactors {
			changed = append(changed, fmt.Sprintf("%s: %s → %s", f.FactorLabel, printable(human.FactorValue(f.Factor, f.Before)),
				printable(human.FactorValue(f.Factor, f.After))))
		}
		if len(changed) == 0 {
			changed = []string{"no factor changed"}
		}
		lost := "-"
		if r.HoursLostPerYear > 0 {
			lost = human.Hours(r.HoursLostPerYear)
		}
		t.add(strconv.FormatInt(r.ID, 10), r.Status, printable(r.Instance), printable(r.Database), r.Kind, r.ChangedAt[:10],
			human.Change(r.Ratio), human.MiBps(r.BaselineMiBps)+" → "+human.MiBps(r.CurrentMiBps),
			fmt.Sprintf("%s/%s", group(r.BaselineN), group(r.CurrentN)), fmt.Sprintf("%.3g", r.PValue), lost,
			strings.Join(changed, "; "), strings.Join(r.KnownIssues, ","))
	}
	return m.printTable(t, c.Wide)
}

// printWatches lists the open watches under the regressions' table, one
// line each, as the overview says them.
func printWatches(m *Main, ws []store.Watch) error {
	if _, err := fmt.Fprintf(m.Stdout, "\nWatching (%d; the next restore confirms or closes each):\n", len(ws)); err != nil {
		return err
	}
	for i := range ws {
		line, _ := fitText("  "+human.WatchLine(&ws[i]), m.Width)
		if _, err := fmt.Fprint(m.Stdout, line); err != nil {
			return err
		}
	}
	return nil
}
