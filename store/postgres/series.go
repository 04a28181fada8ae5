package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
)

// LoadSeries reads every series of the given instances (all when ids is
// nil), ordered by instance id, database and kind (byte order, as
// store/sqlite orders them), each with its points in time order, its
// latest restore's family and the latest instance build known in it.
func (db *DB) LoadSeries(ctx context.Context, ids []int64) ([]store.SeriesRestores, error) {
	if ids != nil && len(ids) == 0 {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT r.instance_id, i.name, r.database_name, r.kind, r.id, r.at_utc,
		COALESCE(r.duration_s, 0), COALESCE(r.backup_bytes, r.pages*8192, 0), COALESCE(r.logical_mibps, 0),
		COALESCE(r.compressed, 0) <> 0, COALESCE(r.encrypted, 0) <> 0, r.io_alignment IS NOT DISTINCT FROM 4096,
		r.device_kind IS NOT DISTINCT FROM $2, COALESCE(r.stripes, 0) > 1, COALESCE(r.family, ''), COALESCE(r.instance_build, '')
		FROM restore r JOIN instance i ON i.id = r.instance_id
		WHERE $1::bigint[] IS NULL OR r.instance_id = ANY($1)
		ORDER BY r.instance_id, r.at_utc, r.id`, ids, store.DeviceVirtual)
	if err != nil {
		return nil, fmt.Errorf("store: load series: %w", err)
	}
	type key struct {
		id       int64
		db, kind string
	}
	index := map[key]int{}
	var out []store.SeriesRestores
	var k key
	var name, family, build string
	var p store.SeriesPoint
	var compressed, encrypted, align, virtual, striped bool
	_, err = pgx.ForEachRow(rows, []any{&k.id, &name, &k.db, &k.kind, &p.RestoreID, &p.AtMs, &p.DurationS, &p.Bytes, &p.MiBps,
		&compressed, &encrypted, &align, &virtual, &striped, &family, &build}, func() error {
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, store.SeriesRestores{InstanceID: k.id, Instance: name, Database: k.db, Kind: store.Kind(k.kind)})
		}
		s := &out[i]
		p.Cond = 0
		for _, c := range []struct {
			on   bool
			cond store.Conditions
		}{{compressed, store.CondCompressed}, {encrypted, store.CondEncrypted}, {align, store.CondAlign4K},
			{virtual, store.CondVirtual}, {striped, store.CondStriped}} {
			if c.on {
				p.Cond |= c.cond
			}
		}
		// Rows come in time order: the last one read is the latest.
		s.Points = append(s.Points, p)
		s.Family = family
		if build != "" {
			s.Build = build
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: load series: %w", err)
	}
	slices.SortFunc(out, func(a, b store.SeriesRestores) int {
		return cmp.Or(cmp.Compare(a.InstanceID, b.InstanceID), cmp.Compare(a.Database, b.Database), cmp.Compare(a.Kind, b.Kind))
	})
	return out, nil
}
