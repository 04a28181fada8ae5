package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"maps"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/finding"
)

// SaveFindings replaces the analysis results of one instance in one
// transaction. A regression keeps its id while its series stays regressed
// (figures are refreshed); one whose series no longer shows it is resolved.
// Series and exposure rows that did not change are left as they are: a
// re-analysis mostly finds what it found before, and rewriting 20,000 series
// rows was a sizeable part of an analysis of the fleet.
//
// pending is the instance's analysis_pending mark as AnalysisPending read it
// before the analysis loaded its restores: the mark is cleared in the same
// transaction only if no derivation has raised it since, so findings judged
// on restores that have changed stay pending (DB.CompletePending).
func (db *DB) SaveFindings(ctx context.Context, instanceID, pending int64, series []store.Series, regs []store.Regression, exp []store.Exposure) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: save findings: %w", err)
	}
	defer tx.Rollback()
	ctx = statementContext(ctx) // the transaction still ends with ctx
	if pending > 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE instance SET analysis_pending = 0 WHERE id = ? AND analysis_pending = ?`,
			instanceID, pending); err != nil {
			return fmt.Errorf("store: save findings: %w", err)
		}
	}
	if err := saveSeries(ctx, tx, instanceID, series); err != nil {
		return err
	}
	if err := db.saveRegressions(ctx, tx, instanceID, regs); err != nil {
		return err
	}
	if err := db.saveWatches(ctx, tx, instanceID, series, regs); err != nil {
		return err
	}
	if err := saveExposure(ctx, tx, instanceID, exp); err != nil {
		return err
	}
	return tx.Commit()
}

// saveSeries makes the instance's series rows equal to series, writing only
// the rows that differ (finding.SeriesWrites).
func saveSeries(ctx context.Context, tx *sql.Tx, instanceID int64, series []store.Series) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, database_name, kind, `+finding.SeriesColumns+` FROM series WHERE instance_id = ?`, instanceID)
	if err != nil {
		return fmt.Errorf("store: save series: %w", err)
	}
	stored := map[finding.SeriesKey]finding.StoredSeries{}
	for rows.Next() {
		var k finding.SeriesKey
		var s finding.StoredSeries
		if err := rows.Scan(append([]any{&s.ID, &k.Database, &k.Kind}, s.Row.Dest()...)...); err != nil {
			rows.Close()
			return fmt.Errorf("store: save series: %w", err)
		}
		stored[k] = s
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: save series: %w", err)
	}
	deletes, inserts := finding.SeriesWrites(stored, series)
	for _, id := range deletes {
		if _, err := tx.ExecContext(ctx, `DELETE FROM series WHERE id = ?`, id); err != nil {
			return fmt.Errorf("store: save series: %w", err)
		}
	}
	for _, i := range inserts {
		s := &series[i]
		row := finding.NewSeriesRow(s)
		if _, err := tx.ExecContext(ctx, `INSERT INTO series (`+finding.SeriesColumns+`, instance_id, database_name, kind)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, append(row.Args(), instanceID, s.Database, string(s.Kind))...); err != nil {
			return fmt.Errorf("store: save series: %w", err)
		}
	}
	return nil
}

// saveRegressions refreshes the instance's open and acknowledged
// regressions, adds the new ones and resolves those no longer found.
func (db *DB) saveRegressions(ctx context.Context, tx *sql.Tx, instanceID int64, regs []store.Regression) error {
	type key struct{ database, kind, direction string }
	rows, err := tx.QueryContext(ctx, `SELECT id, database_name, kind, direction FROM regression
		WHERE instance_id = ? AND status <> 'resolved' ORDER BY id`, instanceID)
	if err != nil {
		return fmt.Errorf("store: save findings: %w", err)
	}
	latest := map[key]int64{} // the latest unresolved regression of each series and direction
	var active []int64
	for rows.Next() {
		var id int64
		var k key
		if err := rows.Scan(&id, &k.database, &k.kind, &k.direction); err != nil {
			rows.Close()
			return fmt.Errorf("store: save findings: %w", err)
		}
		latest[k] = id
		active = append(active, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: save findings: %w", err)
	}
	now := db.now().UnixMilli()
	kept := map[int64]bool{}
	for _, r := range regs {
		k := key{r.Database, string(r.Kind), r.Direction}
		id, ok := latest[k]
		args := []any{r.ChangedAt.UnixMilli(), r.ChangeRestoreID, r.BaselineMiBps, r.CurrentMiBps, r.Ratio, r.RatioLow,
			r.RatioHigh, r.BaselineN, r.CurrentN, r.PValue, r.SizeGrowth, r.DurationRatio, r.BaselineDurationS,
			r.CurrentDurationS, r.RestoresPerYear, jsonText(nonNil(r.ChangedFactors)), jsonText(nonNil(r.KnownIssues)), r.Note, now}
		if !ok {
			err = tx.QueryRowContext(ctx, `INSERT INTO regression (changed_at, change_restore_id, baseline_mibps, current_mibps,
				ratio, ratio_low, ratio_high, baseline_n, current_n, p_value, size_growth, duration_ratio, baseline_duration_s,
				current_duration_s, restores_per_year, changed_factors, known_issues, note, last_seen, first_seen, instance_id,
				database_name, kind, direction) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id`,
				append(args, now, instanceID, r.Database, string(r.Kind), r.Direction)...).Scan(&id)
			latest[k] = id
			if err == nil {
				err = enqueueRegressionConfirmed(ctx, tx, instanceID, id, &r) // its alert commits with it
			}
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE regression SET changed_at = ?, change_restore_id = ?, baseline_mibps = ?,
				current_mibps = ?, ratio = ?, ratio_low = ?, ratio_high = ?, baseline_n = ?, current_n = ?, p_value = ?,
				size_growth = ?, duration_ratio = ?, baseline_duration_s = ?, current_duration_s = ?, restores_per_year = ?,
				changed_factors = ?, known_issues = ?, note = ?, last_seen = ? WHERE id = ?`, append(args, id)...)
		}
		if err != nil {
			return fmt.Errorf("store: save regression: %w", err)
		}
		kept[id] = true
	}
	for _, id := range active {
		if kept[id] {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE regression SET status = 'resolved', status_at = ?,
			status_note = CASE WHEN status_note = '' THEN 'series recovered' ELSE status_note || ' · series recovered' END
			WHERE id = ?`, now, id); err != nil {
			return fmt.Errorf("store: resolve regression: %w", err)
		}
		if err := enqueueRegressionResolved(ctx, tx, id, db.now()); err != nil {
			return err
		}
	}
	return nil
}

// saveExposure makes the instance's exposure rows equal to exp (the last of
// two entries for one issue wins), rewriting them only when they differ.
func saveExposure(ctx context.Context, tx *sql.Tx, instanceID int64, exp []store.Exposure) error {
	type val struct{ build, conditions string }
	want := map[string]val{}
	for _, e := range exp {
		want[e.IssueID] = val{e.Build, e.Conditions}
	}
	rows, err := tx.QueryContext(ctx, `SELECT issue_id, build, conditions FROM exposure WHERE instance_id = ?`, instanceID)
	if err != nil {
		return fmt.Errorf("store: save exposure: %w", err)
	}
	have := map[string]val{}
	for rows.Next() {
		var id string
		var v val
		if err := rows.Scan(&id, &v.build, &v.conditions); err != nil {
			rows.Close()
			return fmt.Errorf("store: save exposure: %w", err)
		}
		have[id] = v
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: save exposure: %w", err)
	}
	if maps.Equal(have, want) {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM exposure WHERE instance_id = ?`, instanceID); err != nil {
		return fmt.Errorf("store: save exposure: %w", err)
	}
	for _, e := range exp {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO exposure (instance_id, issue_id, build, conditions) VALUES (?,?,?,?)`,
			instanceID, e.IssueID, e.Build, e.Conditions); err != nil {
			return fmt.Errorf("store: save exposure: %w", err)
		}
	}
	return nil
}
