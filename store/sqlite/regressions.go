package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/restorewatch/restorewatch/store"
)

const regressionColumns = `g.id, g.instance_id, i.name, g.database_name, g.kind, g.direction, g.changed_at,
 COALESCE(g.change_restore_id,0), g.baseline_mibps, g.current_mibps, g.ratio, COALESCE(g.ratio_low,0),
 COALESCE(g.ratio_high,0), g.baseline_n, g.current_n, g.p_value, COALESCE(g.size_growth,0), COALESCE(g.duration_ratio,0),
 COALESCE(g.baseline_duration_s,0), COALESCE(g.current_duration_s,0), COALESCE(g.restores_per_year,0),
 g.changed_factors, g.known_issues, g.note, g.status, g.status_note, g.status_at, g.first_seen, g.last_seen`

// ListRegressions returns regressions, worst (lowest ratio) first.
func (db *DB) ListRegressions(ctx context.Context, f store.RegressionFilter) ([]store.Regression, error) {
	var conds []string
	var args []any
	if f.ID != 0 {
		conds = append(conds, "g.id = ?")
		args = append(args, f.ID)
	}
	if f.Instance != "" {
		conds = append(conds, "i.name = ?")
		args = append(args, f.Instance)
	}
	if f.Database != "" {
		conds = append(conds, "g.database_name = ?")
		args = append(args, f.Database)
	}
	switch f.Status {
	case "":
	case "active":
		conds = append(conds, "g.status <> 'resolved'")
	default:
		conds = append(conds, "g.status = ?")
		args = append(args, f.Status)
	}
	if f.Direction == "" {
		conds = append(conds, "g.direction = 'regression'")
	} else if f.Direction != "any" {
		conds = append(conds, "g.direction = ?")
		args = append(args, f.Direction)
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+regressionColumns+` FROM regression g JOIN instance i ON i.id = g.instance_id`+
		where+` ORDER BY g.status = 'resolved', g.ratio, g.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list regressions: %w", err)
	}
	defer rows.Close()
	var out []store.Regression
	for rows.Next() {
		var r store.Regression
		var kind, factors, issues string
		var changed, first, last int64
		var statusAt sql.NullInt64
		if err := rows.Scan(&r.ID, &r.InstanceID, &r.Instance, &r.Database, &kind, &r.Direction, &changed, &r.ChangeRestoreID,
			&r.BaselineMiBps, &r.CurrentMiBps, &r.Ratio, &r.RatioLow, &r.RatioHigh, &r.BaselineN, &r.CurrentN, &r.PValue,
			&r.SizeGrowth, &r.DurationRatio, &r.BaselineDurationS, &r.CurrentDurationS, &r.RestoresPerYear, &factors, &issues,
			&r.Note, &r.Status, &r.StatusNote, &statusAt, &first, &last); err != nil {
			return nil, fmt.Errorf("store: list regressions: %w", err)
		}
		r.Kind, r.State = store.Kind(kind), "regression"
		r.ChangedAt = store.UnixMs(changed)
		r.FirstSeen, r.LastSeen = store.UnixMs(first), store.UnixMs(last)
		r.StatusAt = nTime(statusAt)
		_ = json.Unmarshal([]byte(factors), &r.ChangedFactors)
		_ = json.Unmarshal([]byte(issues), &r.KnownIssues)
		r.ChangedFactors, r.KnownIssues = nonNil(r.ChangedFactors), nonNil(r.KnownIssues)
		out = append(out, r)
	}
	return out, rows.Err()
}

// GetRegression returns one regression (of either direction).
func (db *DB) GetRegression(ctx context.Context, id int64) (*store.Regression, error) {
	rs, err := db.ListRegressions(ctx, store.RegressionFilter{ID: id, Direction: "any"})
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, store.Errorf(store.ENOTFOUND, "regression %d not found", id)
	}
	return &rs[0], nil
}

// SetRegressionStatus acknowledges or resolves a regression with a note.
func (db *DB) SetRegressionStatus(ctx context.Context, id int64, status, note string) error {
	switch status {
	case store.StatusOpen, store.StatusAcknowledged, store.StatusResolved:
	default:
		return store.Errorf(store.EINVALID, "status %q: want open, acknowledged or resolved", status)
	}
	if len(note) > 2000 {
		return store.Errorf(store.EINVALID, "the note is longer than 2000 characters")
	}
	res, err := db.write.ExecContext(ctx, `UPDATE regression SET status = ?, status_note = ?, status_at = ? WHERE id = ?`,
		status, note, db.now().UnixMilli(), id)
	if err != nil {
		return fmt.Errorf("store: set regression status: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.Errorf(store.ENOTFOUND, "regression %d not found", id)
	}
	return nil
}

// ListSeries returns series with their verdicts.
func (db *DB) ListSeries(ctx context.Context, f store.SeriesFilter) ([]store.Series, error) {
	q := `SELECT s.id, s.instance_id, i.name, s.database_name, s.kind, COALESCE(s.family,''), s.n, s.n_measured, s.verdict,
		s.baseline_mibps, s.current_mibps, s.last_at, s.last_bytes, s.outliers, s.change_points, s.note
		FROM series s JOIN instance i ON i.id = s.instance_id`
	var conds []string
	var args []any
	if f.Instance != "" {
		conds, args = append(conds, "i.name = ?"), append(args, f.Instance)
	}
	if f.Database != "" {
		conds, args = append(conds, "s.database_name = ?"), append(args, f.Database)
	}
	if len(conds) > 0 {
		q += " WHERE " + strings.Join(conds, " AND ")
	}
	rows, err := db.read.QueryContext(ctx, q+` ORDER BY i.name, s.database_name, s.kind`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list series: %w", err)
	}
	defer rows.Close()
	var out []store.Series
	for rows.Next() {
		var s store.Series
		var kind, outl, cps string
		var base, cur sql.NullFloat64
		var lastAt, lastBytes sql.NullInt64
		if err := rows.Scan(&s.ID, &s.InstanceID, &s.Instance, &s.Database, &kind, &s.Family, &s.N, &s.NMeasured, &s.Verdict,
			&base, &cur, &lastAt, &lastBytes, &outl, &cps, &s.Note); err != nil {
			return nil, fmt.Errorf("store: list series: %w", err)
		}
		s.Kind = store.Kind(kind)
		s.BaselineMiBps, s.CurrentMiBps, s.LastBytes = nFloat(base), nFloat(cur), nInt(lastBytes)
		if lastAt.Valid {
			s.LastAt = store.UnixMs(lastAt.Int64)
		}
		_ = json.Unmarshal([]byte(outl), &s.Outliers)
		_ = json.Unmarshal([]byte(cps), &s.ChangePoints)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list series: %w", err)
	}
	// Each series' open watch.
	ws, err := db.ListWatches(ctx, store.WatchFilter{Instance: f.Instance, Database: f.Database, State: store.WatchOpen})
	if err != nil || len(ws) == 0 {
		return out, err
	}
	type key struct {
		instance int64
		database string
		kind     store.Kind
	}
	open := map[key]*store.Watch{}
	for i := range ws {
		open[key{ws[i].InstanceID, ws[i].Database, ws[i].Kind}] = &ws[i]
	}
	for i := range out {
		out[i].Watch = open[key{out[i].InstanceID, out[i].Database, out[i].Kind}]
	}
	return out, nil
}
