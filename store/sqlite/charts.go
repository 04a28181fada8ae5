package sqlite

// The lean restore views charts and cohorts read.

import (
	"context"
	"database/sql"
	"fmt"
	"math"

	"github.com/restorewatch/restorewatch/store"
)

// RelativeSpeeds returns the measured restores matching f (newest first,
// at most f.Limit when set) with their speed relative to their series'
// baseline. With an empty filter it reads every measured restore once,
// which is what the fleet-wide build cohorts need; callers cache it.
func (db *DB) RelativeSpeeds(ctx context.Context, f store.RestoreFilter) ([]store.RelativeSpeed, error) {
	where, args, ok, err := db.cond(ctx, f.Normal())
	if err != nil || !ok {
		return nil, err
	}
	// A filter uses its own index, never the throughput one ("+" keeps that
	// term off every index). The whole fleet is RelativeByBuild's.
	q := `SELECT r.at_utc, COALESCE(r.instance_build,''), COALESCE(r.source_build,''), r.logical_mibps,
		COALESCE(r.logical_mibps / s.baseline_mibps, 0), COALESCE(r.duration_s, 0)
		FROM restore r LEFT JOIN series s ON s.instance_id = r.instance_id AND s.database_name = r.database_name
		AND s.kind = r.kind WHERE ` + where + ` AND +r.logical_mibps > 0`
	if f.Limit > 0 {
		q += fmt.Sprintf(" ORDER BY r.at_utc DESC LIMIT %d", f.Limit)
	}
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: relative speeds: %w", err)
	}
	defer rows.Close()
	var out []store.RelativeSpeed
	for rows.Next() {
		var s store.RelativeSpeed
		var at int64
		if err := rows.Scan(&at, &s.InstanceBuild, &s.SourceBuild, &s.MiBps, &s.Rel, &s.DurationS); err != nil {
			return nil, fmt.Errorf("store: relative speeds: %w", err)
		}
		s.At = store.UnixMs(at)
		out = append(out, s)
	}
	return out, rows.Err()
}

// RelativeByBuild reads every measured restore's speed relative to its
// series' baseline (RelativeSpeed.Rel, where positive) grouped by the
// instance build and by the source build that took the backup, and how
// many restores were measured. It streams: a point per restore of a 10 M
// warehouse held gigabytes.
func (db *DB) RelativeByBuild(ctx context.Context) (byInstance, bySource map[string][]float64, measured int, err error) {
	byInstance, bySource = map[string][]float64{}, map[string][]float64{}
	add := func(m map[string][]float64, b []byte, rel float64) {
		if len(b) == 0 {
			return
		}
		if xs, ok := m[string(b)]; ok { // no allocation for the lookup
			m[string(b)] = append(xs, rel)
			return
		}
		m[string(b)] = []float64{rel}
	}
	err = db.bulkRead(ctx, 8192, func(c *sql.Conn) error {
		rows, err := c.QueryContext(ctx, `SELECT COALESCE(r.instance_build,''), COALESCE(r.source_build,''),
			COALESCE(r.logical_mibps / s.baseline_mibps, 0)
			FROM restore r NOT INDEXED JOIN series s ON s.instance_id = r.instance_id AND s.database_name = r.database_name
			AND s.kind = r.kind WHERE +r.logical_mibps > 0`)
		if err != nil {
			return err
		}
		defer rows.Close()
		var build, source sql.RawBytes
		var rel float64
		for rows.Next() {
			if err := rows.Scan(&build, &source, &rel); err != nil {
				return err
			}
			if rel <= 0 {
				continue
			}
			measured++
			if !math.IsInf(rel, 0) {
				add(byInstance, build, rel)
				add(bySource, source, rel)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, nil, 0, fmt.Errorf("store: relative speeds by build: %w", err)
	}
	return byInstance, bySource, measured, nil
}

// ChartPoints returns the restores matching f, newest first, at most
// f.Limit, with only the columns a chart needs. A series (instance,
// database and kind) is one seek on restore_series, whose order this is.
func (db *DB) ChartPoints(ctx context.Context, f store.RestoreFilter) ([]store.ChartPoint, error) {
	where, args, ok, err := db.cond(ctx, f.Normal())
	if err != nil || !ok {
		return nil, err
	}
	q := `SELECT r.id, r.at_utc, r.database_name, r.kind, r.logical_mibps, r.duration_s, r.backup_bytes,
		r.buffer_count, r.max_transfer_kib, r.io_alignment FROM restore r WHERE ` + where + ` ORDER BY r.at_utc DESC, r.id DESC`
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: chart points: %w", err)
	}
	defer rows.Close()
	out := make([]store.ChartPoint, 0, max(f.Limit, 0))
	var mb, dur sql.NullFloat64
	var bytes, bufc, mtk, align sql.NullInt64
	var kind string
	for rows.Next() {
		var p store.ChartPoint
		var at int64
		if err := rows.Scan(&p.ID, &at, &p.Database, &kind, &mb, &dur, &bytes, &bufc, &mtk, &align); err != nil {
			return nil, fmt.Errorf("store: chart points: %w", err)
		}
		p.At, p.Kind, p.MiBps, p.DurationS = store.UnixMs(at), store.Kind(kind), nFloat(mb), nFloat(dur)
		p.BackupBytes, p.BufferCount, p.MaxTransferKiB, p.IOAlignment = nInt(bytes), nInt(bufc), nInt(mtk), nInt(align)
		out = append(out, p)
	}
	return out, rows.Err()
}
