package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/finding"
)

// SaveFindings replaces the analysis results of one instance in one
// transaction, as store/sqlite does: a regression keeps its id while its
// series stays regressed, one no longer found is resolved; series and
// exposure rows that did not change stay; watches open, close and confirm;
// their alerts are queued in the same transaction. pending is the
// instance's analysis_pending mark as read before the analysis loaded its
// restores: cleared only if no derivation raised it since.
func (db *DB) SaveFindings(ctx context.Context, instanceID, pending int64, series []store.Series, regs []store.Regression, exp []store.Exposure) error {
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if pending > 0 {
			if _, err := tx.Exec(ctx, `UPDATE instance SET analysis_pending = 0 WHERE id = $1 AND analysis_pending = $2`,
				instanceID, pending); err != nil {
				return err
			}
		}
		// The evidence a month's prune computed for this instance is
		// computed again before its month drops (prune_stamp).
		var inst string
		if err := tx.QueryRow(ctx, `UPDATE instance SET evidence_rev = evidence_rev + 1 WHERE id = $1 RETURNING name`,
			instanceID).Scan(&inst); err != nil {
			return fmt.Errorf("instance %d: %w", instanceID, err)
		}
		if err := saveSeries(ctx, tx, instanceID, series); err != nil {
			return err
		}
		if err := db.saveRegressions(ctx, tx, instanceID, inst, regs); err != nil {
			return err
		}
		if err := db.saveWatches(ctx, tx, instanceID, inst, series, regs); err != nil {
			return err
		}
		return saveExposure(ctx, tx, instanceID, exp)
	})
	if err != nil {
		return fmt.Errorf("store: save findings: %w", err)
	}
	return nil
}

// saveSeries makes the instance's series rows equal to series, writing only
// the rows that differ (finding.SeriesWrites).
func saveSeries(ctx context.Context, tx pgx.Tx, instanceID int64, series []store.Series) error {
	rows, err := tx.Query(ctx, `SELECT id, database_name, kind, `+finding.SeriesColumns+` FROM series WHERE instance_id = $1`, instanceID)
	if err != nil {
		return fmt.Errorf("series: %w", err)
	}
	stored := map[finding.SeriesKey]finding.StoredSeries{}
	var k finding.SeriesKey
	var st finding.StoredSeries
	if _, err := pgx.ForEachRow(rows, append([]any{&st.ID, &k.Database, &k.Kind}, st.Row.Dest()...), func() error {
		stored[k] = st
		return nil
	}); err != nil {
		return fmt.Errorf("series: %w", err)
	}
	deletes, inserts := finding.SeriesWrites(stored, series)
	if _, err := tx.Exec(ctx, `DELETE FROM series WHERE id = ANY($1)`, deletes); err != nil {
		return fmt.Errorf("series: %w", err)
	}
	for _, i := range inserts {
		s := &series[i]
		row := finding.NewSeriesRow(s)
		if _, err := tx.Exec(ctx, `INSERT INTO series (`+finding.SeriesColumns+`, instance_id, database_name, kind)
			VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14)`, append(row.Args(), instanceID, s.Database, string(s.Kind))...); err != nil {
			return fmt.Errorf("series: %w", err)
		}
	}
	return nil
}

// saveRegressions refreshes the instance's open and acknowledged
// regressions, adds the new ones and resolves those no longer found.
func (db *DB) saveRegressions(ctx context.Context, tx pgx.Tx, instanceID int64, inst string, regs []store.Regression) error {
	type key struct{ database, kind, direction string }
	rows, err := tx.Query(ctx, `SELECT id, database_name, kind, direction FROM regression
		WHERE instance_id = $1 AND status <> 'resolved' ORDER BY id`, instanceID)
	if err != nil {
		return fmt.Errorf("regressions: %w", err)
	}
	latest := map[key]int64{} // the latest unresolved regression of each series and direction
	var active []int64
	var id int64
	var k key
	if _, err := pgx.ForEachRow(rows, []any{&id, &k.database, &k.kind, &k.direction}, func() error {
		latest[k] = id
		active = append(active, id)
		return nil
	}); err != nil {
		return fmt.Errorf("regressions: %w", err)
	}
	now := db.now()
	kept := map[int64]bool{}
	for _, r := range regs {
		k := key{r.Database, string(r.Kind), r.Direction}
		id, ok := latest[k]
		args := []any{r.ChangedAt.UnixMilli(), r.ChangeRestoreID, r.BaselineMiBps, r.CurrentMiBps, r.Ratio, r.RatioLow,
			r.RatioHigh, r.BaselineN, r.CurrentN, r.PValue, r.SizeGrowth, r.DurationRatio, r.BaselineDurationS,
			r.CurrentDurationS, r.RestoresPerYear, jsonText(nonNil(r.ChangedFactors)), jsonText(nonNil(r.KnownIssues)), r.Note, now.UnixMilli()}
		if !ok {
			err = tx.QueryRow(ctx, `INSERT INTO regression (changed_at, change_restore_id, baseline_mibps, current_mibps,
				ratio, ratio_low, ratio_high, baseline_n, current_n, p_value, size_growth, duration_ratio, baseline_duration_s,
				current_duration_s, restores_per_year, changed_factors, known_issues, note, last_seen, first_seen, instance_id,
				database_name, kind, direction) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24)
				RETURNING id`, append(args, now.UnixMilli(), instanceID, r.Database, string(r.Kind), r.Direction)...).Scan(&id)
			latest[k] = id
			if err == nil {
				err = enqueueAlert(ctx, tx, finding.RegressionConfirmed(inst, id, &r)) // its alert commits with it
			}
		} else {
			_, err = tx.Exec(ctx, `UPDATE regression SET changed_at = $1, change_restore_id = $2, baseline_mibps = $3,
				current_mibps = $4, ratio = $5, ratio_low = $6, ratio_high = $7, baseline_n = $8, current_n = $9, p_value = $10,
				size_growth = $11, duration_ratio = $12, baseline_duration_s = $13, current_duration_s = $14, restores_per_year = $15,
				changed_factors = $16, known_issues = $17, note = $18, last_seen = $19 WHERE id = $20`, append(args, id)...)
		}
		if err != nil {
			return fmt.Errorf("save regression: %w", err)
		}
		kept[id] = true
	}
	for _, id := range active {
		if kept[id] {
			continue
		}
		if _, err := tx.Exec(ctx, `UPDATE regression SET status = 'resolved', status_at = $1,
			status_note = CASE WHEN status_note = '' THEN 'series recovered' ELSE status_note || ' · series recovered' END
			WHERE id = $2`, now.UnixMilli(), id); err != nil {
			return fmt.Errorf("resolve regression: %w", err)
		}
		r := finding.Resolved{ID: id}
		if err := tx.QueryRow(ctx, `SELECT i.name, r.database_name, r.kind, r.direction, r.changed_at, r.ratio
			FROM regression r JOIN instance i ON i.id = r.instance_id WHERE r.id = $1`, id).
			Scan(&r.Instance, &r.Database, &r.Kind, &r.Dir, &r.ChangedMs, &r.Ratio); err != nil {
			return fmt.Errorf("resolved regression %d: %w", id, err)
		}
		// The alert of its confirmation, if queued: a receiver that keeps
		// state ends that very alert.
		err := tx.QueryRow(ctx, `SELECT key, severity FROM alert_event WHERE kind = $1 AND instance = $2 AND database_name = $3
			AND (body::jsonb) -> 'fields' ->> 'regression_id' = $4 ORDER BY id DESC LIMIT 1`,
			store.AlertRegressionConfirmed, r.Instance, r.Database, strconv.FormatInt(id, 10)).Scan(&r.ConfirmedKey, &r.ConfirmedSeverity)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("resolved regression %d: %w", id, err)
		}
		if err := enqueueAlert(ctx, tx, finding.RegressionResolved(r, now)); err != nil {
			return err
		}
	}
	return nil
}

// saveWatches makes the instance's open watches those of series
// (finding.WatchWrites), with their alerts.
func (db *DB) saveWatches(ctx context.Context, tx pgx.Tx, instanceID int64, inst string, series []store.Series, regs []store.Regression) error {
	rows, err := tx.Query(ctx, `SELECT id, database_name, kind, restore_id, direction, opened_at, ratio, duration_ratio FROM watch
		WHERE instance_id = $1 AND state = 'open' ORDER BY id`, instanceID)
	if err != nil {
		return fmt.Errorf("watches: %w", err)
	}
	var open []finding.OpenWatch
	var o finding.OpenWatch
	if _, err := pgx.ForEachRow(rows, []any{&o.ID, &o.Database, &o.Kind, &o.Restore, &o.Direction, &o.OpenedAt, &o.Ratio, &o.DurationRatio},
		func() error { open = append(open, o); return nil }); err != nil {
		return fmt.Errorf("watches: %w", err)
	}
	now := db.now().UnixMilli()
	ends, opens := finding.WatchWrites(inst, open, series, regs)
	for _, e := range ends {
		if _, err := tx.Exec(ctx, `UPDATE watch SET state = $1, closed_at = $2, closed_note = $3 WHERE id = $4`,
			e.State, now, e.Note, e.ID); err != nil {
			return fmt.Errorf("close watch: %w", err)
		}
		if e.Alert != nil {
			if err := enqueueAlert(ctx, tx, *e.Alert); err != nil {
				return err
			}
		}
	}
	for _, o := range opens {
		w := o.Watch
		if _, err := tx.Exec(ctx, `INSERT INTO watch (instance_id, database_name, kind, direction, restore_id, opened_at,
			ratio, duration_ratio, usual_mibps, usual_n, first_seen) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)
			ON CONFLICT (instance_id, database_name, kind, restore_id) DO UPDATE SET state = 'open', closed_at = NULL, closed_note = '',
				ratio = excluded.ratio, duration_ratio = excluded.duration_ratio, usual_mibps = excluded.usual_mibps, usual_n = excluded.usual_n`,
			instanceID, o.Database, o.Kind, w.Direction, w.RestoreID, w.OpenedAt.UnixMilli(), w.Ratio, w.DurationRatio,
			w.UsualMiBps, w.UsualN, now); err != nil {
			return fmt.Errorf("open watch: %w", err)
		}
		if err := enqueueAlert(ctx, tx, o.Alert); err != nil {
			return err
		}
	}
	return nil
}

// saveExposure makes the instance's exposure rows equal to exp (the last of
// two entries for one issue wins), rewriting them only when they differ.
func saveExposure(ctx context.Context, tx pgx.Tx, instanceID int64, exp []store.Exposure) error {
	type val struct{ build, conditions string }
	want := map[string]val{}
	for _, e := range exp {
		want[e.IssueID] = val{e.Build, e.Conditions}
	}
	rows, err := tx.Query(ctx, `SELECT issue_id, build, conditions FROM exposure WHERE instance_id = $1`, instanceID)
	if err != nil {
		return fmt.Errorf("exposure: %w", err)
	}
	have := map[string]val{}
	var id string
	var v val
	if _, err := pgx.ForEachRow(rows, []any{&id, &v.build, &v.conditions}, func() error { have[id] = v; return nil }); err != nil {
		return fmt.Errorf("exposure: %w", err)
	}
	if maps.Equal(have, want) {
		return nil
	}
	if _, err := tx.Exec(ctx, `DELETE FROM exposure WHERE instance_id = $1`, instanceID); err != nil {
		return fmt.Errorf("exposure: %w", err)
	}
	for id, v := range want {
		if _, err := tx.Exec(ctx, `INSERT INTO exposure (instance_id, issue_id, build, conditions) VALUES ($1, $2, $3, $4)`,
			instanceID, id, v.build, v.conditions); err != nil {
			return fmt.Errorf("exposure: %w", err)
		}
	}
	return nil
}
