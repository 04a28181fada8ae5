package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
)

// keepRuns bounds the runs kept per instance, as on SQLite.
const keepRuns = 500

// StartRun records that a pass over instance began and returns its id.
func (db *DB) StartRun(ctx context.Context, instance string, started time.Time) (int64, error) {
	instance = store.InstanceName(instance)
	if err := (&store.CollectorRun{Instance: instance, Started: started}).Validate(); err != nil {
		return 0, err
	}
	var id int64
	err := db.pool.QueryRow(ctx, `INSERT INTO collector_run (instance, started, status) VALUES ($1, $2, $3) RETURNING id`,
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
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var instance string
		err := tx.QueryRow(ctx, `UPDATE collector_run SET finished = $1, status = $2, rows = $3, errors = $4, notes = $5
			WHERE id = $6 RETURNING instance`, r.Finished.UnixMilli(), r.Status, jsonText(nonNilCounts(r.Rows)),
			jsonText(nonNilMap(r.Errors)), jsonText(nonNil(r.Notes)), r.ID).Scan(&instance)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.Errorf(store.ENOTFOUND, "store: finish run: no run %d", r.ID)
		}
		if err != nil {
			return fmt.Errorf("store: finish run %d: %w", r.ID, err)
		}
		if err := pruneRuns(ctx, tx, instance); err != nil {
			return fmt.Errorf("store: finish run %d: prune: %w", r.ID, err)
		}
		return nil
	})
}

func pruneRuns(ctx context.Context, tx pgx.Tx, instance string) error {
	_, err := tx.Exec(ctx, `DELETE FROM collector_run WHERE instance = $1
		AND id <= (SELECT id FROM collector_run WHERE instance = $1 ORDER BY id DESC LIMIT 1 OFFSET $2)`, instance, keepRuns)
	return err
}

const runColumns = `r.id, r.instance::text, r.started, r.finished, r.status, r.rows, r.errors, r.notes`

// LatestRuns returns the last run of every instance, by instance name.
func (db *DB) LatestRuns(ctx context.Context) ([]store.CollectorRun, error) {
	return db.runs(ctx, `SELECT DISTINCT ON (r.instance) `+runColumns+` FROM collector_run AS r ORDER BY r.instance, r.id DESC`)
}

// Runs returns an instance's runs, newest first, at most limit.
func (db *DB) Runs(ctx context.Context, instance string, limit int) ([]store.CollectorRun, error) {
	return db.runs(ctx, `SELECT `+runColumns+` FROM collector_run AS r WHERE r.instance = $1 ORDER BY r.id DESC LIMIT $2`,
		store.InstanceName(instance), limit)
}

func (db *DB) runs(ctx context.Context, q string, args ...any) ([]store.CollectorRun, error) {
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: collector runs: %w", err)
	}
	out, err := collect(rows, func(row pgx.CollectableRow) (store.CollectorRun, error) {
		var r store.CollectorRun
		var started int64
		var finished *int64
		var counts, errs, notes string
		if err := row.Scan(&r.ID, &r.Instance, &started, &finished, &r.Status, &counts, &errs, &notes); err != nil {
			return r, err
		}
		r.Started, r.Finished = store.UnixMs(started), msTime(finished)
		_ = json.Unmarshal([]byte(counts), &r.Rows)
		_ = json.Unmarshal([]byte(errs), &r.Errors)
		_ = json.Unmarshal([]byte(notes), &r.Notes)
		return r, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: collector runs: %w", err)
	}
	return out, nil
}

// Watermark returns the stored watermark of an instance's source; false when
// none is stored.
func (db *DB) Watermark(ctx context.Context, instance, source string) (string, bool, error) {
	instance = store.InstanceName(instance)
	var v string
	err := db.pool.QueryRow(ctx, `SELECT value FROM watermark WHERE instance = $1 AND source = $2`, instance, source).Scan(&v)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("store: watermark %s/%s: %w", instance, source, err)
	}
	return v, true, nil
}

// SetWatermark stores the watermark of an instance's source.
func (db *DB) SetWatermark(ctx context.Context, instance, source, value string) error {
	instance = store.InstanceName(instance)
	_, err := db.pool.Exec(ctx, `INSERT INTO watermark (instance, source, value, updated_at) VALUES ($1, $2, $3, $4)
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
	_, err := db.pool.Exec(ctx, `INSERT INTO instance (name, tags, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET tags = excluded.tags, tags_rev = instance.tags_rev + 1
		WHERE instance.tags <> excluded.tags`, store.InstanceName(instance), jsonText(nonNilMap(tags)), db.now().UnixMilli())
	if err != nil {
		return fmt.Errorf("store: set tags of %s: %w", instance, err)
	}
	return nil
}

// InstanceTags returns the configured tags of an instance (none: empty).
func (db *DB) InstanceTags(ctx context.Context, instance string) (map[string]string, error) {
	var raw string
	err := db.pool.QueryRow(ctx, `SELECT tags FROM instance WHERE name = $1`, store.InstanceName(instance)).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: tags of %s: %w", instance, err)
	}
	return parseTags(raw), nil
}

// parseTags reads the tags' JSON object, a value that is not a string kept
// as its JSON text (as store/sqlite reads it).
func parseTags(s string) map[string]string {
	var raw map[string]json.RawMessage
	out := map[string]string{}
	if json.Unmarshal([]byte(s), &raw) != nil {
		return out
	}
	for k, v := range raw {
		var str string
		if json.Unmarshal(v, &str) == nil {
			out[k] = str
		} else {
			out[k] = string(v)
		}
	}
	return out
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func nonNilCounts(m map[string]int64) map[string]int64 {
	if m == nil {
		return map[string]int64{}
	}
	return m
}

func msTime(v *int64) *time.Time {
	if v == nil {
		return nil
	}
	t := store.UnixMs(*v)
	return &t
}
