package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/restorewatch/restorewatch/store"
)

// The read queries of the dashboard. Every one runs on the read pool and is
// shaped so that a warehouse of a million restores answers from an index or
// from the small series table (one row per instance, database and kind), never
// from a scan of every restore per page view; the two that must scan (build
// cohorts, the fleet throughput trend) are cached by the web layer against
// DataVersion.

// Ping checks that the warehouse answers a query.
func (db *DB) Ping(ctx context.Context) error {
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT 1`).Scan(&n); err != nil {
		// The driver's text may name the file: it goes to the log through
		// Error(), the page shows only the coded message.
		return fmt.Errorf("%w: %v", store.Errorf(store.EUNAVAILABLE, "the warehouse does not answer"), err)
	}
	return nil
}

// DataVersion changes whenever an import, a reconciliation (the restores'
// change log, so new restores show before their analysis ends), an analysis
// run, a status change or a change of an instance's tags could have changed
// what a page shows. Each part is a primary-key or indexed maximum, so
// asking costs well under a millisecond, but two sums of small tables: the
// status changes' times (so a change moves the version even when the clock
// has gone back since the last one) and the instances' counts of tag
// changes.
func (db *DB) DataVersion(ctx context.Context) (string, error) {
	var imp, ser, reg, status, inst, changes, backups, tags int64
	// backup_set's newest id: the collector and pushes store backup history
	// without an import_run, and plans (and the overview's RTO figures)
	// rest on it.
	err := db.read.QueryRowContext(ctx, `SELECT
		(SELECT COALESCE(MAX(id),0) FROM import_run), (SELECT COALESCE(MAX(id),0) FROM series),
		(SELECT COALESCE(MAX(id),0) FROM regression), (SELECT COALESCE(SUM(status_at),0) FROM regression),
		(SELECT COALESCE(MAX(id),0) FROM instance),
		(SELECT COALESCE(MAX(seq),0) FROM sqlite_sequence WHERE name = 'restore_change'),
		(SELECT COALESCE(MAX(id),0) FROM backup_set), (SELECT COALESCE(SUM(tags_rev),0) FROM instance)`).Scan(&imp, &ser, &reg, &status, &inst, &changes, &backups, &tags)
	if err != nil {
		return "", fmt.Errorf("store: data version: %w", err)
	}
	return fmt.Sprintf("%d.%d.%d.%d.%d.%d.%d.%d", imp, ser, reg, status, inst, changes, backups, tags), nil
}

// HasTable reports whether the warehouse has a table of that name, so a page
// can tell "feature not set up" from an error.
func (db *DB) HasTable(ctx context.Context, name string) (bool, error) {
	var n int
	err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: has table: %w", err)
	}
	return n > 0, nil
}

// Totals counts restores from the series table (its n columns sum to the
// restores analysed).
func (db *DB) Totals(ctx context.Context) (store.Totals, error) {
	var t store.Totals
	var imp sql.NullInt64
	err := db.read.QueryRowContext(ctx, `SELECT
		(SELECT COALESCE(SUM(n),0) FROM series), (SELECT COUNT(*) FROM instance), (SELECT COUNT(*) FROM series),
		(SELECT MAX(COALESCE(finished_at, started_at)) FROM import_run)`).Scan(&t.Restores, &t.Instances, &t.Series, &imp)
	if err != nil {
		return t, fmt.Errorf("store: totals: %w", err)
	}
	if imp.Valid {
		t.LastImport = store.UnixMs(imp.Int64)
	}
	return t, nil
}

// CountAllRestores counts every restore in the warehouse.
func (db *DB) CountAllRestores(ctx context.Context) (int64, error) {
	var n int64
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM restore`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count restores: %w", err)
	}
	return n, nil
}

// RTOCandidates returns one row per database with a series of full
// restores, with its sizes and speed, and one (sizes and speed zero) per
// database that has only other restores (a log-shipped secondary) or only
// a backup history (issue 38: every database over its RTO is on the
// overview, projected by its restore plan). Diff and log sizes come from
// the series table and one index range per database (restore_series), so
// the cost follows the number of databases, not of restores.
func (db *DB) RTOCandidates(ctx context.Context) ([]store.RTOCandidate, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT i.name, i.tags, f.database_name, COALESCE(f.last_bytes,0),
		COALESCE(f.current_mibps, f.baseline_mibps, 0), COALESCE(f.last_at,0),
		COALESCE((SELECT d.last_bytes FROM series d WHERE d.instance_id = f.instance_id AND d.database_name = f.database_name
			AND d.kind = 'diff' AND d.last_at > f.last_at), 0),
		COALESCE((SELECT SUM(r.backup_bytes) FROM restore r WHERE r.instance_id = f.instance_id
			AND r.database_name = f.database_name AND r.kind = 'log' AND r.at_utc > f.last_at), 0)
		FROM series f JOIN instance i ON i.id = f.instance_id WHERE f.kind = 'full'
		UNION ALL
		SELECT i.name, i.tags, x.database_name, 0, 0, 0, 0, 0
		FROM (SELECT instance_id, database_name FROM series WHERE kind <> 'full'
			UNION SELECT DISTINCT instance_id, database_name FROM backup_set) x
		JOIN instance i ON i.id = x.instance_id
		WHERE NOT EXISTS (SELECT 1 FROM series f WHERE f.instance_id = x.instance_id AND f.database_name = x.database_name
			AND f.kind = 'full')
		ORDER BY 1, 3`)
	if err != nil {
		return nil, fmt.Errorf("store: rto candidates: %w", err)
	}
	defer rows.Close()
	var out []store.RTOCandidate
	for rows.Next() {
		var c store.RTOCandidate
		var tags string
		var last int64
		if err := rows.Scan(&c.Instance, &tags, &c.Database, &c.FullBytes, &c.MiBps, &last, &c.DiffBytes, &c.LogBytes); err != nil {
			return nil, fmt.Errorf("store: rto candidates: %w", err)
		}
		c.Tags = parseTags(tags)
		if last > 0 {
			c.LastFull = store.UnixMs(last)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// parseTags reads the instance's tags column, a JSON object of strings; a
// value of another type is kept as its JSON text.
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

// ListExposures returns every known-issue exposure with its instance's name.
func (db *DB) ListExposures(ctx context.Context) ([]store.Exposure, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT e.instance_id, i.name, e.issue_id, e.build, e.conditions
		FROM exposure e JOIN instance i ON i.id = e.instance_id ORDER BY e.issue_id, e.build, i.name`)
	if err != nil {
		return nil, fmt.Errorf("store: list exposures: %w", err)
	}
	defer rows.Close()
	var out []store.Exposure
	for rows.Next() {
		var e store.Exposure
		if err := rows.Scan(&e.InstanceID, &e.Instance, &e.IssueID, &e.Build, &e.Conditions); err != nil {
			return nil, fmt.Errorf("store: list exposures: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
