package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
)

// The pages' reads and writes built on PostgreSQL so far: instances, series,
// regressions, watches, exposures, totals, the files imported and the
// untimed records. Each is store/sqlite's query in PostgreSQL's words;
// TestPagesAnswerAsOnSQLite holds the two to the same answers on one
// warehouse migrated from SQLite to PostgreSQL.

// params numbers the placeholders of a query built from optional
// conditions.
type params []any

func (p *params) add(v any) string {
	*p = append(*p, v)
	return "$" + strconv.Itoa(len(*p))
}

func where(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// Totals counts restores from the series table (its n columns sum to the
// restores analysed).
func (db *DB) Totals(ctx context.Context) (store.Totals, error) {
	var t store.Totals
	var imp *int64
	err := db.pool.QueryRow(ctx, `SELECT
		(SELECT COALESCE(SUM(n),0)::bigint FROM series), (SELECT COUNT(*) FROM instance), (SELECT COUNT(*) FROM series),
		(SELECT MAX(COALESCE(finished_at, started_at)) FROM import_run)`).Scan(&t.Restores, &t.Instances, &t.Series, &imp)
	if err != nil {
		return t, fmt.Errorf("store: totals: %w", err)
	}
	if imp != nil {
		t.LastImport = store.UnixMs(*imp)
	}
	return t, nil
}

// CountAllRestores counts every restore in the warehouse.
func (db *DB) CountAllRestores(ctx context.Context) (int64, error) {
	var n int64
	if err := db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM restore`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count restores: %w", err)
	}
	return n, nil
}

// RestoresPerInstance estimates how many restores an instance holds, on
// average: the highest restore id over the instances.
func (db *DB) RestoresPerInstance(ctx context.Context) (int64, error) {
	var high, n int64
	if err := db.pool.QueryRow(ctx, `SELECT (SELECT COALESCE(MAX(id), 0) FROM restore), (SELECT count(*) FROM instance)`).Scan(&high, &n); err != nil {
		return 0, fmt.Errorf("store: restores per instance: %w", err)
	}
	if n == 0 {
		return 0, nil
	}
	return (high + n - 1) / n, nil
}

// InstanceIDs returns every instance id.
func (db *DB) InstanceIDs(ctx context.Context) ([]int64, error) {
	rows, err := db.pool.Query(ctx, `SELECT id FROM instance ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: instance ids: %w", err)
	}
	ids, err := collect(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("store: instance ids: %w", err)
	}
	return ids, nil
}

// ListInstances returns every instance (or the one named) with counts from
// the series and regression tables and its latest stated build.
func (db *DB) ListInstances(ctx context.Context, name string) ([]store.InstanceSummary, error) {
	var p params
	q := `SELECT i.id, i.name::text, i.tags, i.restore_date_semantics, i.semantics_samples,
		COALESCE((SELECT h.version FROM host_snapshot h WHERE h.instance_id = i.id AND h.version IS NOT NULL
			ORDER BY h.observed_local DESC LIMIT 1), ''),
		(SELECT COUNT(DISTINCT s.database_name) FROM series s WHERE s.instance_id = i.id),
		(SELECT COALESCE(SUM(s.n),0)::bigint FROM series s WHERE s.instance_id = i.id),
		(SELECT COUNT(*) FROM series s WHERE s.instance_id = i.id AND s.verdict = 'regression'),
		(SELECT COUNT(*) FROM regression g WHERE g.instance_id = i.id AND g.status = 'open' AND g.direction = 'regression'),
		(SELECT MAX(s.last_at) FROM series s WHERE s.instance_id = i.id)
		FROM instance i`
	if name != "" {
		q += ` WHERE i.name = ` + p.add(store.InstanceName(name))
	}
	rows, err := db.pool.Query(ctx, q+` ORDER BY i.name`, p...)
	if err != nil {
		return nil, fmt.Errorf("store: list instances: %w", err)
	}
	out, err := collect(rows, func(row pgx.CollectableRow) (store.InstanceSummary, error) {
		var s store.InstanceSummary
		var tags string
		var last *int64
		err := row.Scan(&s.ID, &s.Name, &tags, &s.RestoreDateSemantics, &s.SemanticsSamples, &s.Build, &s.Databases,
			&s.Restores, &s.Regressed, &s.OpenRegressions, &last)
		s.Tags, s.LastRestore = parseTags(tags), msTime(last)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list instances: %w", err)
	}
	return out, nil
}

// GetInstance returns one instance, or a not_found error.
func (db *DB) GetInstance(ctx context.Context, name string) (*store.InstanceSummary, error) {
	is, err := db.ListInstances(ctx, name)
	if err != nil {
		return nil, err
	}
	if len(is) == 0 {
		return nil, store.Errorf(store.ENOTFOUND, "instance %q not found", name)
	}
	return &is[0], nil
}

// HostHistory returns an instance's host snapshots, oldest first.
func (db *DB) HostHistory(ctx context.Context, instance string) ([]store.HostRecord, error) {
	rows, err := db.pool.Query(ctx, `SELECT h.observed_local, h.utc_offset, h.source, h.origin, COALESCE(h.version,''),
		COALESCE(h.level,''), COALESCE(h.update_level,''), COALESCE(h.update_ref,''), COALESCE(h.edition,''),
		COALESCE(h.os,''), COALESCE(h.manufacturer,''), COALESCE(h.model,''), h.hypervisor, h.ifi, h.sockets, h.cores,
		h.memory_mb, h.trace_flags, h.modules, h.extra
		FROM host_snapshot h JOIN instance i ON i.id = h.instance_id WHERE i.name = $1 ORDER BY h.observed_local, h.id`, store.InstanceName(instance))
	if err != nil {
		return nil, fmt.Errorf("store: host history: %w", err)
	}
	out, err := collect(rows, func(row pgx.CollectableRow) (store.HostRecord, error) {
		var h store.HostRecord
		var at int64
		var off, sockets, cores, mem, hyp, ifi *int64
		var flags, mods, extra string
		if err := row.Scan(&at, &off, &h.Source, &h.Origin, &h.Version, &h.Level, &h.UpdateLevel, &h.UpdateRef, &h.Edition,
			&h.OS, &h.Manufacturer, &h.Model, &hyp, &ifi, &sockets, &cores, &mem, &flags, &mods, &extra); err != nil {
			return h, err
		}
		h.ObservedLocal, h.UTCOffset = store.UnixMs(at), off
		h.Hypervisor, h.IFI = boolPtr(hyp), boolPtr(ifi)
		h.Sockets, h.Cores, h.MemoryMB = sockets, cores, mem
		_ = json.Unmarshal([]byte(flags), &h.TraceFlags)
		_ = json.Unmarshal([]byte(mods), &h.Modules)
		_ = json.Unmarshal([]byte(extra), &h.Extra)
		return h, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: host history: %w", err)
	}
	return out, nil
}

// SetDefaultOffset records the UTC offset (minutes) to assume for an
// instance whose sources state none, and marks it for reconciliation.
func (db *DB) SetDefaultOffset(ctx context.Context, instance string, minutes int) error {
	instance = store.InstanceName(instance)
	_, err := db.pool.Exec(ctx, `INSERT INTO instance (name, default_utc_offset, dirty, created_at) VALUES ($1, $2, 1, $3)
		ON CONFLICT (name) DO UPDATE SET default_utc_offset = excluded.default_utc_offset, dirty = instance.dirty + 1, dirty_from = NULL`,
		instance, minutes, db.now().UnixMilli())
	if err != nil {
		return fmt.Errorf("store: set offset of %s: %w", instance, err)
	}
	return nil
}

// ListExposures returns every known-issue exposure with its instance's name.
func (db *DB) ListExposures(ctx context.Context) ([]store.Exposure, error) {
	rows, err := db.pool.Query(ctx, `SELECT e.instance_id, i.name::text, e.issue_id, e.build, e.conditions
		FROM exposure e JOIN instance i ON i.id = e.instance_id ORDER BY e.issue_id, e.build, i.name`)
	if err != nil {
		return nil, fmt.Errorf("store: list exposures: %w", err)
	}
	out, err := collect(rows, func(row pgx.CollectableRow) (store.Exposure, error) {
		var e store.Exposure
		err := row.Scan(&e.InstanceID, &e.Instance, &e.IssueID, &e.Build, &e.Conditions)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list exposures: %w", err)
	}
	return out, nil
}

const regressionColumns = `g.id, g.instance_id, i.name::text, g.database_name, g.kind, g.direction, g.changed_at,
 COALESCE(g.change_restore_id,0), g.baseline_mibps, g.current_mibps, g.ratio, COALESCE(g.ratio_low,0),
 COALESCE(g.ratio_high,0), g.baseline_n, g.current_n, g.p_value, COALESCE(g.size_growth,0), COALESCE(g.duration_ratio,0),
 COALESCE(g.baseline_duration_s,0), COALESCE(g.current_duration_s,0), COALESCE(g.restores_per_year,0),
 g.changed_factors, g.known_issues, g.note, g.status, g.status_note, g.status_at, g.first_seen, g.last_seen`

// ListRegressions returns regressions, worst (lowest ratio) first.
func (db *DB) ListRegressions(ctx context.Context, f store.RegressionFilter) ([]store.Regression, error) {
	var conds []string
	var p params
	if f.ID != 0 {
		conds = append(conds, "g.id = "+p.add(f.ID))
	}
	if f.Instance != "" {
		conds = append(conds, "i.name = "+p.add(f.Instance))
	}
	if f.Database != "" {
		conds = append(conds, "g.database_name = "+p.add(f.Database))
	}
	switch f.Status {
	case "":
	case "active":
		conds = append(conds, "g.status <> 'resolved'")
	default:
		conds = append(conds, "g.status = "+p.add(f.Status))
	}
	if f.Direction == "" {
		conds = append(conds, "g.direction = 'regression'")
	} else if f.Direction != "any" {
		conds = append(conds, "g.direction = "+p.add(f.Direction))
	}
	rows, err := db.pool.Query(ctx, `SELECT `+regressionColumns+` FROM regression g JOIN instance i ON i.id = g.instance_id`+
		where(conds)+` ORDER BY g.status = 'resolved', g.ratio, g.id`, p...)
	if err != nil {
		return nil, fmt.Errorf("store: list regressions: %w", err)
	}
	out, err := collect(rows, func(row pgx.CollectableRow) (store.Regression, error) {
		var r store.Regression
		var kind, factors, issues string
		var changed, first, last int64
		var statusAt *int64
		if err := row.Scan(&r.ID, &r.InstanceID, &r.Instance, &r.Database, &kind, &r.Direction, &changed, &r.ChangeRestoreID,
			&r.BaselineMiBps, &r.CurrentMiBps, &r.Ratio, &r.RatioLow, &r.RatioHigh, &r.BaselineN, &r.CurrentN, &r.PValue,
			&r.SizeGrowth, &r.DurationRatio, &r.BaselineDurationS, &r.CurrentDurationS, &r.RestoresPerYear, &factors, &issues,
			&r.Note, &r.Status, &r.StatusNote, &statusAt, &first, &last); err != nil {
			return r, err
		}
		r.Kind, r.State = store.Kind(kind), "regression"
		r.ChangedAt = store.UnixMs(changed)
		r.FirstSeen, r.LastSeen = store.UnixMs(first), store.UnixMs(last)
		r.StatusAt = msTime(statusAt)
		_ = json.Unmarshal([]byte(factors), &r.ChangedFactors)
		_ = json.Unmarshal([]byte(issues), &r.KnownIssues)
		r.ChangedFactors, r.KnownIssues = nonNil(r.ChangedFactors), nonNil(r.KnownIssues)
		return r, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: list regressions: %w", err)
	}
	return out, nil
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
	tag, err := db.pool.Exec(ctx, `UPDATE regression SET status = $1, status_note = $2, status_at = $3 WHERE id = $4`,
		status, note, db.now().UnixMilli(), id)
	if err != nil {
		return fmt.Errorf("store: set regression status: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return store.Errorf(store.ENOTFOUND, "regression %d not found", id)
	}
	return nil
}

// ListSeries returns series with their verdicts and each one's open watch.
func (db *DB) ListSeries(ctx context.Context, f store.SeriesFilter) ([]store.Series, error) {
	var conds []string
	var p params
	if f.Instance != "" {
		conds = append(conds, "i.name = "+p.add(f.Instance))
	}
	if f.Database != "" {
		conds = append(conds, "s.database_name = "+p.add(f.Database))
	}
	rows, err := db.pool.Query(ctx, `SELECT s.id, s.instance_id, i.name::text, s.database_name, s.kind, COALESCE(s.family,''), s.n,
		s.n_measured, s.verdict, s.baseline_mibps, s.current_mibps, s.last_at, s.last_bytes, s.outliers, s.change_points, s.note
		FROM series s JOIN instance i ON i.id = s.instance_id`+where(conds)+` ORDER BY i.name, s.database_name, s.kind`, p...)
	if err != nil {
		return nil, fmt.Errorf("store: list series: %w", err)
	}
	out, err := collect(rows, func(row pgx.CollectableRow) (store.Series, error) {
		var s store.Series
		var kind, outl, cps string
		var lastAt *int64
		if err := row.Scan(&s.ID, &s.InstanceID, &s.Instance, &s.Database, &kind, &s.Family, &s.N, &s.NMeasured, &s.Verdict,
			&s.BaselineMiBps, &s.CurrentMiBps, &lastAt, &s.LastBytes, &outl, &cps, &s.Note); err != nil {
			return s, err
		}
		s.Kind = store.Kind(kind)
		if lastAt != nil {
			s.LastAt = store.UnixMs(*lastAt)
		}
		_ = json.Unmarshal([]byte(outl), &s.Outliers)
		_ = json.Unmarshal([]byte(cps), &s.ChangePoints)
		return s, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: list series: %w", err)
	}
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

// ListWatches lists the watches, open ones first, newest first.
func (db *DB) ListWatches(ctx context.Context, f store.WatchFilter) ([]store.Watch, error) {
	var conds []string
	var p params
	if f.Instance != "" {
		conds = append(conds, "i.name = "+p.add(store.InstanceName(f.Instance)))
	}
	if f.Database != "" {
		conds = append(conds, "w.database_name = "+p.add(f.Database))
	}
	if f.State != "" {
		conds = append(conds, "w.state = "+p.add(f.State))
	}
	rows, err := db.pool.Query(ctx, `SELECT w.id, w.instance_id, i.name::text, w.database_name, w.kind, w.direction, w.restore_id,
		w.opened_at, w.ratio, w.duration_ratio, w.usual_mibps, w.usual_n, w.state, w.closed_at, w.closed_note, w.first_seen
		FROM watch w JOIN instance i ON i.id = w.instance_id`+where(conds)+
		` ORDER BY w.state = 'open' DESC, w.opened_at DESC, w.id DESC LIMIT 1000`, p...)
	if err != nil {
		return nil, fmt.Errorf("store: list watches: %w", err)
	}
	out, err := collect(rows, func(row pgx.CollectableRow) (store.Watch, error) {
		var w store.Watch
		var kind string
		var opened, first int64
		var closed *int64
		if err := row.Scan(&w.ID, &w.InstanceID, &w.Instance, &w.Database, &kind, &w.Direction, &w.RestoreID, &opened, &w.Ratio,
			&w.DurationRatio, &w.UsualMiBps, &w.UsualN, &w.State, &closed, &w.ClosedNote, &first); err != nil {
			return w, err
		}
		w.Kind, w.OpenedAt, w.FirstSeen, w.ClosedAt = store.Kind(kind), store.UnixMs(opened), store.UnixMs(first), msTime(closed)
		return w, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: list watches: %w", err)
	}
	return out, nil
}

// ImportedFile returns the earlier import of the file with this
// fingerprint; ok is false when there is none.
func (db *DB) ImportedFile(ctx context.Context, fingerprint string) (f store.ImportedFile, ok bool, err error) {
	var at int64
	err = db.pool.QueryRow(ctx, `SELECT fingerprint, path, size, records, rejected, imported_at
		FROM imported_file WHERE fingerprint = $1`, fingerprint).Scan(&f.Fingerprint, &f.Path, &f.Size, &f.Records, &f.Rejected, &at)
	if errors.Is(err, pgx.ErrNoRows) {
		return f, false, nil
	}
	if err != nil {
		return f, false, fmt.Errorf("store: imported file: %w", err)
	}
	f.ImportedAt = store.UnixMs(at)
	return f, true, nil
}

// MarkImported records files whose records are committed.
func (db *DB) MarkImported(ctx context.Context, files []store.ImportedFile) error {
	if len(files) == 0 {
		return nil
	}
	now := db.now().UnixMilli()
	b := &pgx.Batch{}
	for _, f := range files {
		b.Queue(`INSERT INTO imported_file (fingerprint, path, size, records, rejected, imported_at)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (fingerprint) DO UPDATE SET path = excluded.path, imported_at = excluded.imported_at`,
			f.Fingerprint, f.Path, f.Size, f.Records, f.Rejected, now)
	}
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error { return tx.SendBatch(ctx, b).Close() })
	if err != nil {
		return fmt.Errorf("store: mark imported: %w", err)
	}
	return nil
}

// Untimed returns, per source, the log records kept without a restore
// because nothing dates them.
func (db *DB) Untimed(ctx context.Context) ([]store.Untimed, error) {
	rows, err := db.pool.Query(ctx, `SELECT source, SUM(records)::bigint, COUNT(*) FROM untimed_record GROUP BY source ORDER BY source`)
	if err != nil {
		return nil, fmt.Errorf("store: untimed: %w", err)
	}
	out, err := collect(rows, func(row pgx.CollectableRow) (store.Untimed, error) {
		var u store.Untimed
		err := row.Scan(&u.Source, &u.Records, &u.Instances)
		return u, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: untimed: %w", err)
	}
	return out, nil
}

// UntimedIn returns how many log records of the given instances are kept
// without a restore because nothing dates them.
func (db *DB) UntimedIn(ctx context.Context, instanceIDs []int64) (int64, error) {
	if len(instanceIDs) == 0 {
		return 0, nil
	}
	var n int64
	err := db.pool.QueryRow(ctx, `SELECT COALESCE(SUM(records), 0)::bigint FROM untimed_record WHERE instance_id = ANY($1)`, instanceIDs).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: untimed: %w", err)
	}
	return n, nil
}

func boolPtr(v *int64) *bool {
	if v == nil {
		return nil
	}
	b := *v != 0
	return &b
}

// collect is pgx.CollectRows answering nil for no rows, as database/sql's
// loops in store/sqlite do (a page's JSON says null either way).
func collect[T any](rows pgx.Rows, fn pgx.RowToFunc[T]) ([]T, error) {
	out, err := pgx.CollectRows(rows, fn)
	if len(out) == 0 {
		out = nil
	}
	return out, err
}
