package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/export"
)

func writeRegressionsCSV(m *Main, rows []export.RegressionRow) error {
	w := csv.NewWriter(m.Stdout)
	_ = w.Write([]string{"id", "status", "instance", "database", "kind", "changed_at", "baseline_mibps", "current_mibps",
		"ratio", "ratio_low", "ratio_high", "baseline_n", "current_n", "p_value", "changed_factors", "known_issues",
		"hours_lost_per_restore", "hours_lost_per_year", "changed_factor_labels"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, r := range rows {
		var changed, labelled []string
		for _, c := range r.ChangedFactors {
			changed = append(changed, c.Factor+": "+c.Before+" -> "+c.After)
			labelled = append(labelled, c.FactorLabel+": "+c.Before+" -> "+c.After)
		}
		_ = w.Write([]string{strconv.FormatInt(r.ID, 10), r.Status, export.Cell(r.Instance), export.Cell(r.Database), r.Kind,
			r.ChangedAt, f(r.BaselineMiBps), f(r.CurrentMiBps), f(r.Ratio), f(r.RatioLow), f(r.RatioHigh),
			strconv.Itoa(r.BaselineN), strconv.Itoa(r.CurrentN), f(r.PValue), export.Cell(strings.Join(changed, "; ")),
			strings.Join(r.KnownIssues, " "), f(r.HoursLostPerRestore), f(r.HoursLostPerYear),
			export.Cell(strings.Join(labelled, "; "))})
	}
	w.Flush()
	return w.Error()
}

func loadKnownIssues(path string) ([]analysis.KnownIssue, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("known issues: %w", err)
	}
	defer f.Close()
	ki, err := analysis.LoadKnownIssues(f)
	if err != nil {
		return nil, fmt.Errorf("known issues %s: %w", path, err)
	}
	return ki, nil
}
