package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/restorewatch/restorewatch/store"
)

// ListInstances returns every instance (or the one named) with counts from
// the series and regression tables and its latest stated build (restores
// take their instance build from the same host snapshots, so there is no
// other source to fall back on).
func (db *DB) ListInstances(ctx context.Context, name string) ([]store.InstanceSummary, error) {
	q := `SELECT i.id, i.name, i.tags, i.restore_date_semantics, i.semantics_samples,
		COALESCE((SELECT h.version FROM host_snapshot h WHERE h.instance_id = i.id AND h.version IS NOT NULL
			ORDER BY h.observed_local DESC LIMIT 1), ''),
		(SELECT COUNT(DISTINCT s.database_name) FROM series s WHERE s.instance_id = i.id),
		(SELECT COALESCE(SUM(s.n),0) FROM series s WHERE s.instance_id = i.id),
		(SELECT COUNT(*) FROM series s WHERE s.instance_id = i.id AND s.verdict = 'regression'),
		(SELECT COUNT(*) FROM regression g WHERE g.instance_id = i.id AND g.status = 'open' AND g.direction = 'regression'),
		(SELECT MAX(s.last_at) FROM series s WHERE s.instance_id = i.id)
		FROM instance i`
	var args []any
	if name != "" {
		q, args = q+` WHERE i.name = ?`, append(args, store.InstanceName(name))
	}
	rows, err := db.read.QueryContext(ctx, q+` ORDER BY i.name`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list instances: %w", err)
	}
	defer rows.Close()
	var out []store.InstanceSummary
	for rows.Next() {
		var s store.InstanceSummary
		var tags string
		var last sql.NullInt64
		if err := rows.Scan(&s.ID, &s.Name, &tags, &s.RestoreDateSemantics, &s.SemanticsSamples, &s.Build, &s.Databases,
			&s.Restores, &s.Regressed, &s.OpenRegressions, &last); err != nil {
			return nil, fmt.Errorf("store: list instances: %w", err)
		}
		s.Tags, s.LastRestore = parseTags(tags), nTime(last)
		out = append(out, s)
	}
	return out, rows.Err()
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
	rows, err := db.read.QueryContext(ctx, `SELECT h.observed_local, h.utc_offset, h.source, h.origin, COALESCE(h.version,''),
		COALESCE(h.level,''), COALESCE(h.update_level,''), COALESCE(h.update_ref,''), COALESCE(h.edition,''),
		COALESCE(h.os,''), COALESCE(h.manufacturer,''), COALESCE(h.model,''), h.hypervisor, h.ifi, h.sockets, h.cores,
		h.memory_mb, h.trace_flags, h.modules, h.extra
		FROM host_snapshot h JOIN instance i ON i.id = h.instance_id WHERE i.name = ? ORDER BY h.observed_local, h.id`, store.InstanceName(instance))
	if err != nil {
		return nil, fmt.Errorf("store: host history: %w", err)
	}
	defer rows.Close()
	var out []store.HostRecord
	for rows.Next() {
		var h store.HostRecord
		var at int64
		var off, sockets, cores, mem sql.NullInt64
		var hyp, ifi sql.NullBool
		var flags, mods, extra string
		if err := rows.Scan(&at, &off, &h.Source, &h.Origin, &h.Version, &h.Level, &h.UpdateLevel, &h.UpdateRef, &h.Edition,
			&h.OS, &h.Manufacturer, &h.Model, &hyp, &ifi, &sockets, &cores, &mem, &flags, &mods, &extra); err != nil {
			return nil, fmt.Errorf("store: host history: %w", err)
		}
		h.ObservedLocal, h.UTCOffset = store.UnixMs(at), nInt(off)
		h.Hypervisor, h.IFI = nBool(hyp), nBool(ifi)
		h.Sockets, h.Cores, h.MemoryMB = nInt(sockets), nInt(cores), nInt(mem)
		_ = json.Unmarshal([]byte(flags), &h.TraceFlags)
		_ = json.Unmarshal([]byte(mods), &h.Modules)
		_ = json.Unmarshal([]byte(extra), &h.Extra)
		out = append(out, h)
	}
	return out, rows.Err()
}

// SetDefaultOffset records the UTC offset (minutes) to assume for an instance
// whose sources state none, and marks it for reconciliation.
func (db *DB) SetDefaultOffset(ctx context.Context, instance string, minutes int) error {
	instance = store.InstanceName(instance)
	_, err := db.write.ExecContext(ctx, `INSERT INTO instance (name, default_utc_offset, dirty, created_at) VALUES (?, ?, 1, ?)
		ON CONFLICT (name) DO UPDATE SET default_utc_offset = excluded.default_utc_offset, dirty = instance.dirty + 1, dirty_from = NULL`,
		instance, minutes, db.now().UnixMilli())
	if err != nil {
		return fmt.Errorf("store: set offset of %s: %w", instance, err)
	}
	return nil
}

// RestoresPerInstance estimates how many restores an instance holds, on
// average, without counting them: the highest restore id (ids are never
// reused, so this is at least the restores there are) over the instances.
// 0 when there are none.
func (db *DB) RestoresPerInstance(ctx context.Context) (int64, error) {
	var high, n int64
	if err := db.read.QueryRowContext(ctx, `SELECT (SELECT COALESCE(MAX(id), 0) FROM restore), (SELECT count(*) FROM instance)`).Scan(&high, &n); err != nil {
		return 0, fmt.Errorf("store: restores per instance: %w", err)
	}
	if n == 0 {
		return 0, nil
	}
	return (high + n - 1) / n, nil
}

// InstanceIDs returns every instance id.
func (db *DB) InstanceIDs(ctx context.Context) ([]int64, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id FROM instance ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: instance ids: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
