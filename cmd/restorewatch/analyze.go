package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/export"
)

// AnalyzeCmd recomputes every derivation and finding from scratch.
type AnalyzeCmd struct {
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
	db, err := m.openDB(ctx)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := db.ReconcileAll(ctx); err != nil {
		return err
	}
	reconciled := time.Since(start)
	st, err := analysis.Run(ctx, db, nil, opt)
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "analyzed %d restores in %d series on %d instances: %d regressions, %d improvements (reconcile %.1f s, analysis %.1f s)\n",
		st.Restores, st.Series, st.Instances, st.Regressions, st.Improvements, reconciled.Seconds(), (time.Since(start) - reconciled).Seconds())
	return nil
}

// RegressionsCmd lists regressions.
type RegressionsCmd struct {
	Format string `help:"table, json or csv." enum:"table,json,csv" default:"table"`
	Status string `help:"open, acknowledged, resolved, or active (open and acknowledged); empty = all." enum:",open,acknowledged,resolved,active" default:""`
}

// RegressionRow is the SPEC §6.1 JSON shape of a regression.
type RegressionRow struct {
	ID                  int64                `json:"id"`
	Instance            string               `json:"instance"`
	Database            string               `json:"database"`
	Kind                string               `json:"kind"`
	ChangedAt           string               `json:"changed_at"`
	BaselineMiBps       float64              `json:"baseline_mibps"`
	CurrentMiBps        float64              `json:"current_mibps"`
	Ratio               float64              `json:"ratio"`
	RatioLow            float64              `json:"ratio_low"`
	RatioHigh           float64              `json:"ratio_high"`
	BaselineN           int                  `json:"baseline_n"`
	CurrentN            int                  `json:"current_n"`
	PValue              float64              `json:"p_value"`
	ChangedFactors      []store.FactorChange `json:"changed_factors"`
	KnownIssues         []string             `json:"known_issues"`
	HoursLostPerRestore float64              `json:"hours_lost_per_restore"`
	HoursLostPerYear    float64              `json:"hours_lost_per_year"`
	Status              string               `json:"status"`
	Note                string               `json:"note"`
}

// regressionRow converts a regression to its exported shape.
func regressionRow(r *store.Regression) RegressionRow {
	perRestore := r.HoursLostPerRestore()
	return RegressionRow{ID: r.ID, Instance: r.Instance, Database: r.Database, Kind: string(r.Kind),
		ChangedAt: r.ChangedAt.UTC().Format(time.RFC3339), BaselineMiBps: round(r.BaselineMiBps, 3),
		CurrentMiBps: round(r.CurrentMiBps, 3), Ratio: round(r.Ratio, 4), RatioLow: round(r.RatioLow, 4),
		RatioHigh: round(r.RatioHigh, 4), BaselineN: r.BaselineN, CurrentN: r.CurrentN, PValue: r.PValue,
		ChangedFactors: r.ChangedFactors, KnownIssues: r.KnownIssues, HoursLostPerRestore: round(perRestore, 2),
		HoursLostPerYear: round(perRestore*r.RestoresPerYear, 1), Status: r.Status, Note: r.Note}
}

func round(v float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	if v < 0 {
		return float64(int64(v*p-0.5)) / p
	}
	return float64(int64(v*p+0.5)) / p
}

// Run implements the command.
func (c *RegressionsCmd) Run(ctx context.Context, m *Main) error {
	db, err := m.openDB(ctx)
	if err != nil {
		return err
	}
	regs, err := db.ListRegressions(ctx, store.RegressionFilter{Status: c.Status})
	if err != nil {
		return err
	}
	rows := make([]RegressionRow, len(regs))
	for i := range regs {
		rows[i] = regressionRow(&regs[i])
	}
	switch c.Format {
	case "json":
		return export.WriteJSON(m.Stdout, rows)
	case "csv":
		return writeRegressionsCSV(m, rows)
	}
	tw := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tINSTANCE\tDATABASE\tKIND\tSINCE (UTC)\tMiB/s BEFORE → NOW\tRATIO\tN\tP\tWHAT CHANGED\tKNOWN ISSUE")
	for _, r := range rows {
		var changed []string
		for _, f := range r.ChangedFactors {
			changed = append(changed, fmt.Sprintf("%s: %s → %s", f.Factor, printable(f.Before), printable(f.After)))
		}
		if len(changed) == 0 {
			changed = []string{"nothing recorded changed"}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%.1f → %.1f\t%.2f×\t%d/%d\t%.3g\t%s\t%s\n", r.ID, r.Status,
			printable(r.Instance), printable(r.Database), r.Kind, r.ChangedAt[:10], r.BaselineMiBps, r.CurrentMiBps,
			r.Ratio, r.BaselineN, r.CurrentN, r.PValue, strings.Join(changed, "; "), strings.Join(r.KnownIssues, ","))
	}
	if len(rows) == 0 {
		fmt.Fprintln(tw, "(no regressions)")
	}
	return tw.Flush()
}
