package postgres

import (
	"context"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
)

// RelativeSpeeds returns each measured restore matching f with its speed
// relative to its series' baseline (0 when the series has none).
func (db *DB) RelativeSpeeds(ctx context.Context, f store.RestoreFilter) ([]store.RelativeSpeed, error) {
	var p params
	where, ok, err := db.cond(ctx, f.Normal(), &p)
	if err != nil || !ok {
		return nil, err
	}
	q := `SELECT r.at_utc, COALESCE(r.instance_build,''), COALESCE(r.source_build,''), r.logical_mibps,
		COALESCE(r.logical_mibps / NULLIF(s.baseline_mibps, 0), 0), COALESCE(r.duration_s, 0)
		FROM restore r LEFT JOIN series s ON s.instance_id = r.instance_id AND s.database_name = r.database_name
		AND s.kind = r.kind WHERE ` + where + ` AND r.logical_mibps > 0`
	if f.Limit > 0 {
		q += fmt.Sprintf(" ORDER BY r.at_utc DESC LIMIT %d", f.Limit)
	}
	rows, err := db.pool.Query(ctx, q, p...)
	if err != nil {
		return nil, fmt.Errorf("store: relative speeds: %w", err)
	}
	out, err := collect(rows, func(row pgx.CollectableRow) (store.RelativeSpeed, error) {
		var s store.RelativeSpeed
		var at int64
		err := row.Scan(&at, &s.InstanceBuild, &s.SourceBuild, &s.MiBps, &s.Rel, &s.DurationS)
		s.At = store.UnixMs(at)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: relative speeds: %w", err)
	}
	return out, nil
}

// RelativeByBuild returns every measured restore's speed relative to its
// series' baseline, by restoring build and by source build.
func (db *DB) RelativeByBuild(ctx context.Context) (byInstance, bySource map[string][]float64, measured int, err error) {
	byInstance, bySource = map[string][]float64{}, map[string][]float64{}
	rows, err := db.pool.Query(ctx, `SELECT COALESCE(r.instance_build,''), COALESCE(r.source_build,''),
		COALESCE(r.logical_mibps / NULLIF(s.baseline_mibps, 0), 0)
		FROM restore r JOIN series s ON s.instance_id = r.instance_id AND s.database_name = r.database_name
		AND s.kind = r.kind WHERE r.logical_mibps > 0`)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("store: relative speeds by build: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var build, source string
		var rel float64
		if err := rows.Scan(&build, &source, &rel); err != nil {
			return nil, nil, 0, fmt.Errorf("store: relative speeds by build: %w", err)
		}
		if rel <= 0 {
			continue
		}
		measured++
		if !math.IsInf(rel, 0) {
			if build != "" {
				byInstance[build] = append(byInstance[build], rel)
			}
			if source != "" {
				bySource[source] = append(bySource[source], rel)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, 0, fmt.Errorf("store: relative speeds by build: %w", err)
	}
	return byInstance, bySource, measured, nil
}

// ChartPoints returns the restores matching f as a chart plots them,
// newest first.
func (db *DB) ChartPoints(ctx context.Context, f store.RestoreFilter) ([]store.ChartPoint, error) {
	var p params
	where, ok, err := db.cond(ctx, f.Normal(), &p)
	if err != nil || !ok {
		return nil, err
	}
	q := `SELECT r.id, r.at_utc, r.database_name, r.kind, r.logical_mibps, r.duration_s, r.backup_bytes,
		r.buffer_count, r.max_transfer_kib, r.io_alignment FROM restore r WHERE ` + where + ` ORDER BY r.at_utc DESC, r.id DESC`
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := db.pool.Query(ctx, q, p...)
	if err != nil {
		return nil, fmt.Errorf("store: chart points: %w", err)
	}
	defer rows.Close()
	out := make([]store.ChartPoint, 0, max(f.Limit, 0))
	for rows.Next() {
		var pt store.ChartPoint
		var at int64
		var kind string
		if err := rows.Scan(&pt.ID, &at, &pt.Database, &kind, &pt.MiBps, &pt.DurationS, &pt.BackupBytes, &pt.BufferCount,
			&pt.MaxTransferKiB, &pt.IOAlignment); err != nil {
			return nil, fmt.Errorf("store: chart points: %w", err)
		}
		pt.At, pt.Kind = store.UnixMs(at), store.Kind(kind)
		out = append(out, pt)
	}
	return out, rows.Err()
}

// RTOCandidates returns one row per database with a series of full
// restores, with its sizes and speed, and one (sizes and speed zero) per
// database with only other restores or only a backup history.
func (db *DB) RTOCandidates(ctx context.Context) ([]store.RTOCandidate, error) {
	rows, err := db.pool.Query(ctx, `SELECT * FROM (SELECT i.name::text AS instance, i.tags, f.database_name, COALESCE(f.last_bytes,0),
		COALESCE(f.current_mibps, f.baseline_mibps, 0), COALESCE(f.last_at,0),
		COALESCE((SELECT d.last_bytes FROM series d WHERE d.instance_id = f.instance_id AND d.database_name = f.database_name
			AND d.kind = 'diff' AND d.last_at > f.last_at), 0),
		COALESCE((SELECT SUM(r.backup_bytes) FROM restore r WHERE r.instance_id = f.instance_id
			AND r.database_name = f.database_name AND r.kind = 'log' AND r.at_utc > f.last_at), 0)::bigint
		FROM series f JOIN instance i ON i.id = f.instance_id WHERE f.kind = 'full'
		UNION ALL
		SELECT i.name::text, i.tags, x.database_name, 0, 0, 0, 0, 0
		FROM (SELECT instance_id, database_name FROM series WHERE kind <> 'full'
			UNION SELECT DISTINCT instance_id, database_name FROM backup_set) x
		JOIN instance i ON i.id = x.instance_id
		WHERE NOT EXISTS (SELECT 1 FROM series f WHERE f.instance_id = x.instance_id AND f.database_name = x.database_name
			AND f.kind = 'full')) AS c
		ORDER BY lower(c.instance) COLLATE "C", c.database_name COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("store: rto candidates: %w", err)
	}
	out, err := collect(rows, func(row pgx.CollectableRow) (store.RTOCandidate, error) {
		var c store.RTOCandidate
		var tags string
		var last int64
		err := row.Scan(&c.Instance, &tags, &c.Database, &c.FullBytes, &c.MiBps, &last, &c.DiffBytes, &c.LogBytes)
		c.Tags = parseTags(tags)
		if last > 0 {
			c.LastFull = store.UnixMs(last)
		}
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: rto candidates: %w", err)
	}
	return out, nil
}
