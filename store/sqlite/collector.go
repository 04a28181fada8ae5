package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// keepRuns bounds the runs kept per instance: a 15-minute interval makes
// about five days of them.
const keepRuns = 500

// StartRun records that a pass over instance began and returns its id.
func (db *DB) StartRun(ctx context.Context, instance string, started time.Time) (int64, error) {
	instance = store.InstanceName(instance)
	if err := (&store.CollectorRun{Instance: instance, Started: started}).Validate(); err != nil {
		return 0, err
	}
	var id int64
	err := db.write.QueryRowContext(ctx, `INSERT INTO collector_run (instance, started, status) VALUES (?, ?, ?) RETURNING id`,
		instance, started.UnixMilli(), store.RunRunning).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("store: start run of %s: %w", instance, err)
	}
	return id, nil
}

// FinishRun records the outcome of the run r.ID and drops the instance's
// oldest runs beyond the ones kept.
func (db *DB) FinishRun(ctx context.Context, r store.CollectorRun) error {
	if r.Finished == nil {
		t := db.now()
		r.Finished = &t
	}
	if err := store.CheckInstantPtr("finished", r.Finished); err != nil {
		return store.Errorf(store.EINVALID, "run record: %s", store.ErrorMessage(err))
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: finish run %d: %w", r.ID, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE collector_run SET finished = ?, status = ?, rows = ?, errors = ?, notes = ? WHERE id = ?`,
		r.Finished.UnixMilli(), r.Status, jsonText(nonNilCounts(r.Rows)), jsonText(nonNilMap(r.Errors)), jsonText(nonNil(r.Notes)), r.ID)
	if err != nil {
		return fmt.Errorf("store: finish run %d: %w", r.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.Errorf(store.ENOTFOUND, "store: finish run: no run %d", r.ID)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM collector_run WHERE instance = (SELECT instance FROM collector_run WHERE id = ?)
		AND id <= (SELECT id FROM collector_run WHERE instance = (SELECT instance FROM collector_run WHERE id = ?)
		           ORDER BY id DESC LIMIT 1 OFFSET ?)`, r.ID, r.ID, keepRuns); err != nil {
		return fmt.Errorf("store: finish run %d: prune: %w", r.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: finish run %d: %w", r.ID, err)
	}
	return nil
}

const runColumns = `id, instance, started, finished, status, rows, errors, notes`

// LatestRuns returns the last run of every instance, by instance name. It
// steps from one instance to the next through collector_run_instance (two
// index seeks an instance) instead of grouping every run kept: 10,000
// instances keep up to 5,000,000 runs.
func (db *DB) LatestRuns(ctx context.Context) ([]store.CollectorRun, error) {
	return db.runs(ctx, `WITH RECURSIVE name(n) AS (
			SELECT MIN(instance) FROM collector_run
			UNION ALL
			SELECT (SELECT MIN(instance) FROM collector_run WHERE instance > name.n) FROM name WHERE name.n IS NOT NULL)
		SELECT `+runColumns+` FROM collector_run
		WHERE id IN (SELECT (SELECT MAX(id) FROM collector_run WHERE instance = name.n) FROM name WHERE name.n IS NOT NULL)
		ORDER BY instance COLLATE NOCASE`)
}

// Runs returns an instance's runs, newest first, at most limit.
func (db *DB) Runs(ctx context.Context, instance string, limit int) ([]store.CollectorRun, error) {
	return db.runs(ctx, `SELECT `+runColumns+` FROM collector_run WHERE instance = ? ORDER BY id DESC LIMIT ?`, store.InstanceName(instance), limit)
}

func (db *DB) runs(ctx context.Context, q string, args ...any) ([]store.CollectorRun, error) {
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: collector runs: %w", err)
	}
	defer rows.Close()
	var out []store.CollectorRun
	for rows.Next() {
		var r store.CollectorRun
		var started int64
		var finished sql.NullInt64
		var counts, errs, notes string
		if err := rows.Scan(&r.ID, &r.Instance, &started, &finished, &r.Status, &counts, &errs, &notes); err != nil {
			return nil, fmt.Errorf("store: collector runs: %w", err)
		}
		r.Started = store.UnixMs(started)
		r.Finished = nTime(finished)
		_ = json.Unmarshal([]byte(counts), &r.Rows)
		_ = json.Unmarshal([]byte(errs), &r.Errors)
		_ = json.Unmarshal([]byte(notes), &r.Notes)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: collector runs: %w", err)
	}
	return out, nil
}

// Watermark returns the stored watermark of an instance's source; false when
// none is stored (the source starts from the beginning).
func (db *DB) Watermark(ctx context.Context, instance, source string) (string, bool, error) {
	instance = store.InstanceName(instance)
	var v string
	// The read pool: a pass must not queue behind other passes' imports to
	// learn where to start; SetWatermark has committed before the next pass.
	err := db.read.QueryRowContext(ctx, `SELECT value FROM watermark WHERE instance = ? AND source = ?`, instance, source).Scan(&v)
	switch {
	case err == sql.ErrNoRows:
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("store: watermark %s/%s: %w", instance, source, err)
	}
	return v, true, nil
}

// SetWatermark stores the watermark of an instance's source. The collector
// calls it only after the records read up to it are committed.
func (db *DB) SetWatermark(ctx context.Context, instance, source, value string) error {
	instance = store.InstanceName(instance)
	_, err := db.write.ExecContext(ctx, `INSERT INTO watermark (instance, source, value, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (instance, source) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		instance, source, value, db.now().UnixMilli())
	if err != nil {
		return fmt.Errorf("store: set watermark %s/%s: %w", instance, source, err)
	}
	return nil
}

// SetInstanceTags records the configured tags (env, team, rto) of an
// instance, creating its row if needed.
func (db *DB) SetInstanceTags(ctx context.Context, instance string, tags map[string]string) error {
	_, err := db.write.ExecContext(ctx, `INSERT INTO instance (name, tags, created_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET tags = excluded.tags, tags_rev = instance.tags_rev + 1
		WHERE instance.tags <> excluded.tags`, store.InstanceName(instance), jsonText(nonNilMap(tags)), db.now().UnixMilli())
	if err != nil {
		return fmt.Errorf("store: set tags of %s: %w", instance, err)
	}
	return nil
}

func nonNilCounts(m map[string]int64) map[string]int64 {
	if m == nil {
		return map[string]int64{}
	}
	return m
}

func utcMillis(local time.Time, offsetMin int) int64 {
	return local.UnixMilli() - int64(offsetMin)*60_000
}

// AddInflightSamples stores one sampling of an instance: a point on each
// running restore's curve, and the end of every curve of the instance that
// this sampling no longer shows (so an empty sampling ends them all).
func (db *DB) AddInflightSamples(ctx context.Context, instance string, samples []store.InflightSample) error {
	instance = store.InstanceName(instance)
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: inflight samples of %s: %w", instance, err)
	}
	defer tx.Rollback()
	seen := make([]any, 0, len(samples)+1)
	seen = append(seen, instance)
	for _, s := range samples {
		var id int64
		err := tx.QueryRowContext(ctx, `INSERT INTO inflight_restore (instance, database_name, session_id, start_local, start_utc,
			utc_offset, command, statement, last_seen_utc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (instance, database_name, start_local, session_id) DO UPDATE SET
			last_seen_utc = excluded.last_seen_utc, utc_offset = excluded.utc_offset, ended = 0
			RETURNING id`, instance, store.DatabaseName(s.Database), s.SessionID, s.Start.UnixMilli(), utcMillis(s.Start, s.UTCOffset),
			s.UTCOffset, s.Command, s.Statement, utcMillis(s.SampledAt, s.UTCOffset)).Scan(&id)
		if err != nil {
			return fmt.Errorf("store: inflight samples of %s: %w", instance, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO inflight_sample (restore_id, sampled_local, percent, est_remaining_ms, wait_type)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (restore_id, sampled_local) DO NOTHING`,
			id, s.SampledAt.UnixMilli(), s.Percent, s.EstRemainingMs, nullString(s.WaitType)); err != nil {
			return fmt.Errorf("store: inflight samples of %s: %w", instance, err)
		}
		seen = append(seen, id)
	}
	q := `UPDATE inflight_restore SET ended = 1 WHERE instance = ? AND ended = 0`
	if len(seen) > 1 {
		q += ` AND id NOT IN (?` + strings.Repeat(", ?", len(seen)-2) + `)`
	}
	if _, err := tx.ExecContext(ctx, q, seen...); err != nil {
		return fmt.Errorf("store: inflight samples of %s: %w", instance, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: inflight samples of %s: %w", instance, err)
	}
	return nil
}

const curveColumns = `r.id, r.instance, r.database_name, r.session_id, r.command, r.statement, r.start_local, r.start_utc,
	r.utc_offset, r.last_seen_utc, r.ended`

// InflightCurves returns the curves of restores seen running at or after
// since (an instant), oldest start first, with their points in time order.
func (db *DB) InflightCurves(ctx context.Context, since time.Time) ([]store.InflightCurve, error) {
	return db.curves(ctx, `WHERE r.last_seen_utc >= ? ORDER BY r.start_utc, r.id`, since.UnixMilli())
}

// InflightCurveFor returns the curve of instance's restore of database whose
// statement started within tolerance of started (the instance's wall clock):
// the restore page's way to find the curve of a finished restore, whose start
// it knows from other sources only to a few seconds. ENOTFOUND when none.
func (db *DB) InflightCurveFor(ctx context.Context, instance, database string, started time.Time, tolerance time.Duration) (*store.InflightCurve, error) {
	cs, err := db.curves(ctx, `WHERE r.instance = ? AND r.database_name = ? AND r.start_local BETWEEN ? AND ?
		ORDER BY ABS(r.start_local - ?), r.id LIMIT 1`, store.InstanceName(instance), store.DatabaseName(database),
		started.Add(-tolerance).UnixMilli(), started.Add(tolerance).UnixMilli(), started.UnixMilli())
	if err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		return nil, store.Errorf(store.ENOTFOUND, "no progress curve of %s on %s near %s", database, instance, started.Format(time.DateTime))
	}
	return &cs[0], nil
}

func (db *DB) curves(ctx context.Context, where string, args ...any) ([]store.InflightCurve, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+curveColumns+` FROM inflight_restore AS r `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("store: inflight curves: %w", err)
	}
	var out []store.InflightCurve
	var ids []int64
	for rows.Next() {
		var c store.InflightCurve
		var id, start, startUTC, seen int64
		if err := rows.Scan(&id, &c.Instance, &c.Database, &c.SessionID, &c.Command, &c.Statement, &start, &startUTC,
			&c.UTCOffset, &seen, &c.Ended); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: inflight curves: %w", err)
		}
		c.Start, c.StartUTC, c.LastSeen = store.UnixMs(start), store.UnixMs(startUTC), store.UnixMs(seen)
		out = append(out, c)
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: inflight curves: %w", err)
	}
	for i, id := range ids {
		pts, err := db.read.QueryContext(ctx, `SELECT sampled_local, percent, est_remaining_ms, COALESCE(wait_type, '')
			FROM inflight_sample WHERE restore_id = ? ORDER BY sampled_local`, id)
		if err != nil {
			return nil, fmt.Errorf("store: inflight curves: %w", err)
		}
		for pts.Next() {
			var p store.CurvePoint
			var at int64
			var est sql.NullInt64
			if err := pts.Scan(&at, &p.Percent, &est, &p.WaitType); err != nil {
				pts.Close()
				return nil, fmt.Errorf("store: inflight curves: %w", err)
			}
			p.At, p.EstRemainingMs = store.UnixMs(at), est.Int64
			out[i].Points = append(out[i].Points, p)
		}
		pts.Close()
		if err := pts.Err(); err != nil {
			return nil, fmt.Errorf("store: inflight curves: %w", err)
		}
	}
	return out, nil
}
