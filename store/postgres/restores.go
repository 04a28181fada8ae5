package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
)

// Restores answers every list of restores as store/sqlite does (one filter,
// one meaning: store.RestoreQuery). Text orders and ranges compare bytewise
// (COLLATE "C"), as SQLite's do, whatever the database's collation.

const restoreColumns = `r.id, i.name::text, r.database_name, r.kind, r.at_utc, r.started_utc, r.finished_utc, r.offset_known,
 r.duration_s, r.duration_source, r.backup_bytes, r.compressed_bytes, r.pages, r.size_source, r.logical_mibps,
 r.read_mibps, r.engine_mbps, COALESCE(r.instance_build,''), COALESCE(r.source_server,''),
 COALESCE(r.source_database,''), COALESCE(r.source_build,''), COALESCE(r.family,''), r.compressed, r.encrypted,
 r.checksum, r.copy_only, r.devices, COALESCE(r.device_kind,''), r.stripes, r.buffer_count, r.max_transfer_kib,
 r.io_alignment, r.ifi, r.cpu_count, r.memory_mb, COALESCE(r.trace_flags,''), COALESCE(r.modules,''),
 COALESCE(r.user_name,''), r.sources, COALESCE(r.destination_files,''), r.throughput_source`

// maxIDPage is the largest page read as ids first, then rows by id.
const maxIDPage = 1000

// Restores answers a query of restores: a counted list page, a series
// page by keyset, or every match streamed to q.Each.
func (db *DB) Restores(ctx context.Context, q store.RestoreQuery) (store.RestorePage, error) {
	f := q.Filter.Normal()
	switch f.Sort {
	case "at", "duration", "throughput", "instance", "database":
	default:
		f.Sort = "at"
	}
	if q.Orders != nil && !q.Series && q.Each == nil && f.Fleetwide() {
		o, err := q.Pages(ctx, f)
		if err != nil {
			return store.RestorePage{}, err
		}
		ids, total, exact := o.Page(f, q.CountCap)
		rs, err := db.RestoresByID(ctx, ids)
		return store.RestorePage{Restores: rs, Total: total, Exact: exact}, err
	}
	var p params
	where, ok, err := db.cond(ctx, f, &p)
	if err != nil || !ok {
		return store.RestorePage{Exact: true}, err
	}
	if q.Series {
		return db.seriesPage(ctx, f, where, p, q)
	}
	return db.listPage(ctx, f, where, p, q)
}

func (db *DB) cond(ctx context.Context, f store.RestoreFilter, p *params) (string, bool, error) {
	conds := []string{"TRUE"}
	if f.Instance != "" {
		var id int64
		err := db.pool.QueryRow(ctx, `SELECT id FROM instance WHERE name = $1`, f.Instance).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return "", false, nil
		} else if err != nil {
			return "", false, fmt.Errorf("store: restores: %w", err)
		}
		conds = append(conds, "r.instance_id = "+p.add(id))
	}
	if f.Database != "" {
		conds = append(conds, "r.database_name = "+p.add(f.Database))
	}
	if f.Kind != "" {
		conds = append(conds, "r.kind = "+p.add(string(f.Kind)))
	}
	if !f.From.IsZero() {
		conds = append(conds, "r.at_utc >= "+p.add(f.From.UnixMilli()))
	}
	if !f.To.IsZero() {
		conds = append(conds, "r.at_utc < "+p.add(f.To.UnixMilli()))
	}
	if f.Build != "" {
		// A build or a prefix of one in whole components (store/sqlite's
		// store.BuildMatches): the range of what follows "prefix.".
		conds = append(conds, `(r.instance_build = `+p.add(f.Build)+` OR r.instance_build COLLATE "C" >= `+p.add(f.Build+".")+
			` AND r.instance_build COLLATE "C" < `+p.add(f.Build+"/")+`)`)
	}
	if f.Source != "" {
		conds = append(conds, "r.source_server = "+p.add(f.Source))
	}
	if len(f.IDs) > 0 {
		conds = append(conds, "r.id = ANY("+p.add(f.IDs)+")")
	}
	return strings.Join(conds, " AND "), true, nil
}

func (db *DB) listPage(ctx context.Context, f store.RestoreFilter, where string, p params, q store.RestoreQuery) (store.RestorePage, error) {
	from, order := "restore r", "r.at_utc"
	switch f.Sort {
	case "duration":
		order, where = "r.duration_s", where+" AND r.duration_s IS NOT NULL"
	case "throughput":
		order, where = "r.logical_mibps", where+" AND r.logical_mibps IS NOT NULL"
	case "instance":
		from, order = "restore r JOIN instance i ON i.id = r.instance_id", "i.name"
	case "database":
		order = `r.database_name COLLATE "C"`
	}
	dir := " DESC"
	if f.Asc {
		dir = " ASC"
	}
	orderBy := ` ORDER BY ` + order + dir + `, r.id` + dir
	page := ""
	if f.Limit > 0 {
		page = fmt.Sprintf(" LIMIT %d OFFSET %d", f.Limit, max(f.Offset, 0))
	} else if f.Offset > 0 {
		page = fmt.Sprintf(" OFFSET %d", f.Offset)
	}
	if q.Each != nil {
		return store.RestorePage{}, db.stream(ctx, `SELECT `+restoreColumns+` FROM restore r JOIN instance i ON i.id = r.instance_id
			WHERE `+where+orderBy+page, p, q.Each)
	}
	var out store.RestorePage
	cnt := `SELECT COUNT(*) FROM (SELECT 1 FROM restore r WHERE ` + where
	if q.CountCap > 0 {
		cnt += fmt.Sprintf(" LIMIT %d", q.CountCap+1)
	}
	if err := db.pool.QueryRow(ctx, cnt+`) AS m`, p...).Scan(&out.Total); err != nil {
		return store.RestorePage{}, fmt.Errorf("store: count restores: %w", err)
	}
	out.Exact = true
	if q.CountCap > 0 && out.Total > q.CountCap {
		out.Total, out.Exact = q.CountCap, false
	}
	if f.Limit <= 0 || f.Limit > maxIDPage {
		var err error
		out.Restores, err = db.collectRestores(ctx, `SELECT `+restoreColumns+` FROM restore r JOIN instance i ON i.id = r.instance_id
			WHERE `+where+orderBy+page, p)
		return out, err
	}
	ids, err := db.ids(ctx, `SELECT r.id FROM `+from+` WHERE `+where+orderBy+page, p)
	if err != nil || len(ids) == 0 {
		return out, err
	}
	out.Restores, err = db.restoresByID(ctx, ids)
	return out, err
}

func (db *DB) seriesPage(ctx context.Context, f store.RestoreFilter, where string, p params, q store.RestoreQuery) (store.RestorePage, error) {
	if q.After > 0 {
		var inst, at int64
		var dbName, kind string
		err := db.pool.QueryRow(ctx, `SELECT instance_id, database_name, kind, at_utc FROM restore WHERE id = $1`, q.After).
			Scan(&inst, &dbName, &kind, &at)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.RestorePage{}, store.Errorf(store.EINVALID, "cursor %d names no restore (it may have been removed since); start again without a cursor", q.After)
		} else if err != nil {
			return store.RestorePage{}, fmt.Errorf("store: restores after: %w", err)
		}
		i, d, k, a := p.add(inst), p.add(dbName), p.add(kind), p.add(at)
		where += ` AND (r.instance_id, r.database_name COLLATE "C", r.kind COLLATE "C", r.at_utc) >= (` + i + `, ` + d + `, ` + k + `, ` + a + `)
			AND NOT (r.instance_id = ` + i + ` AND r.database_name = ` + d + ` AND r.kind = ` + k + ` AND r.at_utc = ` + a + ` AND r.id <= ` + p.add(q.After) + `)`
	}
	orderBy := ` ORDER BY r.instance_id, r.database_name COLLATE "C", r.kind COLLATE "C", r.at_utc, r.id`
	if f.Limit > 0 {
		orderBy += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	if q.Each != nil || f.Limit <= 0 || f.Limit > maxIDPage {
		query := `SELECT ` + restoreColumns + ` FROM restore r JOIN instance i ON i.id = r.instance_id WHERE ` + where + orderBy
		if q.Each != nil {
			return store.RestorePage{}, db.stream(ctx, query, p, q.Each)
		}
		rs, err := db.collectRestores(ctx, query, p)
		return store.RestorePage{Restores: rs}, err
	}
	ids, err := db.ids(ctx, `SELECT r.id FROM restore r WHERE `+where+orderBy, p)
	if err != nil || len(ids) == 0 {
		return store.RestorePage{}, err
	}
	rs, err := db.restoresByID(ctx, ids)
	return store.RestorePage{Restores: rs}, err
}

func (db *DB) stream(ctx context.Context, query string, p params, fn func(*store.Restore) error) error {
	rows, err := db.pool.Query(ctx, query, p...)
	if err != nil {
		return fmt.Errorf("store: restores: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRestore(rows)
		if err != nil {
			return fmt.Errorf("store: restores: %w", err)
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: restores: %w", err)
	}
	return nil
}

func (db *DB) collectRestores(ctx context.Context, query string, p params) ([]store.Restore, error) {
	var out []store.Restore
	err := db.stream(ctx, query, p, func(r *store.Restore) error {
		out = append(out, *r)
		return nil
	})
	return out, err
}

// ListRestores returns one page of restores matching f and how many match.
func (db *DB) ListRestores(ctx context.Context, f store.RestoreFilter) ([]store.Restore, int, error) {
	p, err := db.Restores(ctx, store.RestoreQuery{Filter: f})
	return p.Restores, p.Total, err
}

// GetRestore returns one restore, or a not_found error.
func (db *DB) GetRestore(ctx context.Context, id int64) (*store.Restore, error) {
	rs, err := db.RestoresByID(ctx, []int64{id})
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, store.Errorf(store.ENOTFOUND, "restore %d not found", id)
	}
	return &rs[0], nil
}

// RestoresByID returns the restores with ids, in the order of ids; ids of
// no restore are left out.
func (db *DB) RestoresByID(ctx context.Context, ids []int64) ([]store.Restore, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return db.restoresByID(ctx, ids)
}

func (db *DB) restoresByID(ctx context.Context, ids []int64) ([]store.Restore, error) {
	byID := make(map[int64]store.Restore, len(ids))
	err := db.stream(ctx, `SELECT `+restoreColumns+` FROM restore r JOIN instance i ON i.id = r.instance_id WHERE r.id = ANY($1)`,
		params{ids}, func(r *store.Restore) error { byID[r.ID] = *r; return nil })
	if err != nil {
		return nil, fmt.Errorf("store: page restores: %w", err)
	}
	rs := make([]store.Restore, 0, len(ids))
	for _, id := range ids {
		if r, ok := byID[id]; ok {
			rs = append(rs, r)
		}
	}
	return rs, nil
}

func (db *DB) ids(ctx context.Context, q string, p params) ([]int64, error) {
	rows, err := db.pool.Query(ctx, q, p...)
	if err != nil {
		return nil, fmt.Errorf("store: page restores: %w", err)
	}
	ids, err := collect(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("store: page restores: %w", err)
	}
	return ids, nil
}

func scanRestore(s pgx.Rows) (store.Restore, error) {
	var r store.Restore
	var at, offsetKnown int64
	var started, finished, comp, enc, chk, copyOnly, ifi *int64
	var devices, destinations, kind string
	err := s.Scan(&r.ID, &r.Instance, &r.Database, &kind, &at, &started, &finished, &offsetKnown, &r.DurationS,
		&r.DurationSource, &r.BackupBytes, &r.CompressedB, &r.Pages, &r.SizeSource, &r.LogicalMiBps, &r.ReadMiBps, &r.EngineMBps,
		&r.InstanceBuild, &r.SourceServer, &r.SourceDatabase, &r.SourceBuild, &r.Family, &comp, &enc, &chk, &copyOnly, &devices,
		&r.DeviceKind, &r.Stripes, &r.BufferCount, &r.MaxTransferKiB, &r.IOAlignment, &ifi, &r.CPUCount, &r.MemoryMB,
		&r.TraceFlags, &r.Modules, &r.UserName, &r.Sources, &destinations, &r.ThroughputSource)
	if err != nil {
		return r, err
	}
	r.Kind, r.At, r.OffsetKnown = store.Kind(kind), store.UnixMs(at), offsetKnown != 0
	r.StartedAt, r.FinishedAt = msTime(started), msTime(finished)
	r.Compressed, r.Encrypted, r.Checksum, r.CopyOnly, r.IFI = boolPtr(comp), boolPtr(enc), boolPtr(chk), boolPtr(copyOnly), boolPtr(ifi)
	_ = json.Unmarshal([]byte(devices), &r.Devices)
	if r.Devices == nil {
		r.Devices = []string{}
	}
	if destinations != "" {
		_ = json.Unmarshal([]byte(destinations), &r.DestinationFiles)
	}
	return r, nil
}
