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
// the rows that differ.
func saveSeries(ctx context.Context, tx *sql.Tx, instanceID int64, series []store.Series) error {
	type key struct{ database, kind string }
	type stored struct {
		id  int64
		row finding.SeriesRow
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, database_name, kind, `+finding.SeriesColumns+` FROM series WHERE instance_id = ?`, instanceID)
	if err != nil {
		return fmt.Errorf("store: save series: %w", err)
	}
	old := map[key]stored{}
	for rows.Next() {
		var k key
		var s stored
		if err := rows.Scan(append([]any{&s.id, &k.database, &k.kind}, s.row.Dest()...)...); err != nil {
			rows.Close()
			return fmt.Errorf("store: save series: %w", err)
		}
		old[k] = s
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: save series: %w", err)
	}
	// A changed row is written as a new row rather than updated in place,
	// and a save that changed none renews one row: DataVersion, which the
	// dashboard's cache keys on, reads MAX(series.id), so every save (and
	// so every analysis run, which also refreshes regressions' last_seen)
	// moves it, as when every row was rewritten.
	renew, renewID := -1, int64(0)
	inserted := false
	for i := range series {
		s := &series[i]
		k := key{s.Database, string(s.Kind)}
		row := finding.NewSeriesRow(s)
		o, ok := old[k]
		delete(old, k)
		if ok && o.row == row {
			if renew < 0 {
				renew, renewID = i, o.id
			}
			continue
		}
		if ok {
			if err := deleteSeries(ctx, tx, o.id); err != nil {
				return err
			}
		}
		if err := insertSeries(ctx, tx, instanceID, s, row); err != nil {
			return err
		}
		inserted = true
	}
	for _, o := range old {
		if err := deleteSeries(ctx, tx, o.id); err != nil {
			return err
		}
	}
	if !inserted && renew >= 0 {
		if err := deleteSeries(ctx, tx, renewID); err != nil {
			return err
		}
		return insertSeries(ctx, tx, instanceID, &series[renew], finding.NewSeriesRow(&series[renew]))
	}
	return nil
}

func deleteSeries(ctx context.Context, tx *sql.Tx, id int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM series WHERE id = ?`, id); err != nil {
		return fmt.Errorf("store: save series: %w", err)
	}
	return nil
}

func insertSeries(ctx context.Context, tx *sql.Tx, instanceID int64, s *store.Series, row finding.SeriesRow) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO series (family, n, n_measured, verdict, baseline_mibps, current_mibps,
		last_at, last_bytes, outliers, change_points, note, instance_id, database_name, kind) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		append(row.Args(), instanceID, s.Database, string(s.Kind))...); err != nil {
		return fmt.Errorf("store: save series: %w", err)
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
