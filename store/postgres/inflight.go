package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
)

func utcMillis(local time.Time, offsetMin int) int64 {
	return local.UnixMilli() - int64(offsetMin)*60_000
}

// AddInflightSamples stores one sampling of an instance: a point on each
// running restore's curve, and the end of every curve of the instance this
// sampling no longer shows.
func (db *DB) AddInflightSamples(ctx context.Context, instance string, samples []store.InflightSample) error {
	instance = store.InstanceName(instance)
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		seen := []int64{}
		for _, s := range samples {
			var id int64
			err := tx.QueryRow(ctx, `INSERT INTO inflight_restore (instance, database_name, session_id, start_local, start_utc,
				utc_offset, command, statement, last_seen_utc) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
				ON CONFLICT (instance, database_name, start_local, session_id) DO UPDATE SET
				last_seen_utc = excluded.last_seen_utc, utc_offset = excluded.utc_offset, ended = 0
				RETURNING id`, instance, store.DatabaseName(s.Database), s.SessionID, s.Start.UnixMilli(), utcMillis(s.Start, s.UTCOffset),
				s.UTCOffset, s.Command, s.Statement, utcMillis(s.SampledAt, s.UTCOffset)).Scan(&id)
			if err != nil {
				return err
			}
			var wait *string
			if s.WaitType != "" {
				wait = &s.WaitType
			}
			if _, err := tx.Exec(ctx, `INSERT INTO inflight_sample (restore_id, sampled_local, percent, est_remaining_ms, wait_type)
				VALUES ($1, $2, $3, $4, $5) ON CONFLICT (restore_id, sampled_local) DO NOTHING`,
				id, s.SampledAt.UnixMilli(), s.Percent, s.EstRemainingMs, wait); err != nil {
				return err
			}
			seen = append(seen, id)
		}
		_, err := tx.Exec(ctx, `UPDATE inflight_restore SET ended = 1 WHERE instance = $1 AND ended = 0 AND NOT (id = ANY($2))`,
			instance, seen)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: inflight samples of %s: %w", instance, err)
	}
	return nil
}

const curveColumns = `r.id, r.instance::text, r.database_name, r.session_id, r.command, r.statement, r.start_local, r.start_utc,
	r.utc_offset, r.last_seen_utc, r.ended`

// InflightCurves returns the curves of restores seen running at or after
// since, oldest start first, with their points in time order.
func (db *DB) InflightCurves(ctx context.Context, since time.Time) ([]store.InflightCurve, error) {
	return db.curves(ctx, `WHERE r.last_seen_utc >= $1 ORDER BY r.start_utc, r.id`, since.UnixMilli())
}

// InflightCurveFor returns the curve of instance's restore of database
// whose statement started within tolerance of started; ENOTFOUND when none.
func (db *DB) InflightCurveFor(ctx context.Context, instance, database string, started time.Time, tolerance time.Duration) (*store.InflightCurve, error) {
	cs, err := db.curves(ctx, `WHERE r.instance = $1 AND r.database_name = $2 AND r.start_local BETWEEN $3 AND $4
		ORDER BY ABS(r.start_local - $5), r.id LIMIT 1`, store.InstanceName(instance), store.DatabaseName(database),
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
	rows, err := db.pool.Query(ctx, `SELECT `+curveColumns+` FROM inflight_restore AS r `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("store: inflight curves: %w", err)
	}
	var out []store.InflightCurve
	var ids []int64
	for rows.Next() {
		var c store.InflightCurve
		var id, start, startUTC, seen, ended int64
		if err := rows.Scan(&id, &c.Instance, &c.Database, &c.SessionID, &c.Command, &c.Statement, &start, &startUTC,
			&c.UTCOffset, &seen, &ended); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: inflight curves: %w", err)
		}
		c.Start, c.StartUTC, c.LastSeen, c.Ended = store.UnixMs(start), store.UnixMs(startUTC), store.UnixMs(seen), ended != 0
		out = append(out, c)
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: inflight curves: %w", err)
	}
	for i, id := range ids {
		pts, err := db.pool.Query(ctx, `SELECT sampled_local, percent, est_remaining_ms, COALESCE(wait_type, '')
			FROM inflight_sample WHERE restore_id = $1 ORDER BY sampled_local`, id)
		if err != nil {
			return nil, fmt.Errorf("store: inflight curves: %w", err)
		}
		for pts.Next() {
			var p store.CurvePoint
			var at int64
			var est *int64
			if err := pts.Scan(&at, &p.Percent, &est, &p.WaitType); err != nil {
				pts.Close()
				return nil, fmt.Errorf("store: inflight curves: %w", err)
			}
			p.At = store.UnixMs(at)
			if est != nil {
				p.EstRemainingMs = *est
			}
			out[i].Points = append(out[i].Points, p)
		}
		pts.Close()
		if err := pts.Err(); err != nil {
			return nil, fmt.Errorf("store: inflight curves: %w", err)
		}
	}
	return out, nil
}
