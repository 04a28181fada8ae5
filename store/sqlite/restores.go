package sqlite

// The one way restores are read by a filter: lists, pages, the API's
// keyset pages, exports and the CLI all call DB.Restores.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

const restoreColumns = `r.id, i.name, r.database_name, r.kind, r.at_utc, r.started_utc, r.finished_utc, r.offset_known,
 r.duration_s, r.duration_source, r.backup_bytes, r.compressed_bytes, r.pages, r.size_source, r.logical_mibps,
 r.read_mibps, r.engine_mbps, COALESCE(r.instance_build,''), COALESCE(r.source_server,''),
 COALESCE(r.source_database,''), COALESCE(r.source_build,''), COALESCE(r.family,''), r.compressed, r.encrypted,
 r.checksum, r.copy_only, r.devices, COALESCE(r.device_kind,''), r.stripes, r.buffer_count, r.max_transfer_kib,
 r.io_alignment, r.ifi, r.cpu_count, r.memory_mb, COALESCE(r.trace_flags,''), COALESCE(r.modules,''),
 COALESCE(r.user_name,''), r.sources, COALESCE(r.destination_files,''), r.throughput_source`

// Restores answers every query of restores by a filter.
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
	where, args, ok, err := db.cond(ctx, f)
	if err != nil || !ok {
		return store.RestorePage{Exact: true}, err
	}
	if q.Series {
		return db.seriesPage(ctx, f, where, args, q)
	}
	return db.listPage(ctx, f, where, args, q)
}

// maxIDPage is the largest page read ids first (then rows by id); a larger
// one, or all, is streamed by one query.
const maxIDPage = 1000

// listPage answers a list: f's order, counted up to q.CountCap.
func (db *DB) listPage(ctx context.Context, f store.RestoreFilter, where string, args []any, q store.RestoreQuery) (store.RestorePage, error) {
	// An order by a measure is a sort of what the filter selects.
	from, order := "restore r", "r.at_utc"
	switch f.Sort {
	case "duration":
		order, where = "r.duration_s", where+" AND r.duration_s IS NOT NULL"
	case "throughput":
		order, where = "r.logical_mibps", where+" AND r.logical_mibps IS NOT NULL"
	case "instance":
		from, order = "restore r JOIN instance i ON i.id = r.instance_id", "i.name"
	case "database":
		order = "r.database_name"
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
		page = fmt.Sprintf(" LIMIT -1 OFFSET %d", f.Offset)
	}
	if q.Each != nil {
		return store.RestorePage{}, db.stream(ctx, `SELECT `+restoreColumns+` FROM restore r JOIN instance i ON i.id = r.instance_id
			WHERE `+where+orderBy+page, args, q.Each)
	}
	var p store.RestorePage
	cnt := `SELECT COUNT(*) FROM (SELECT 1 FROM restore r WHERE ` + where
	if q.CountCap > 0 {
		cnt += fmt.Sprintf(" LIMIT %d", q.CountCap+1)
	}
	if err := db.read.QueryRowContext(ctx, cnt+`)`, args...).Scan(&p.Total); err != nil {
		return store.RestorePage{}, fmt.Errorf("store: count restores: %w", err)
	}
	p.Exact = true
	if q.CountCap > 0 && p.Total > q.CountCap {
		p.Total, p.Exact = q.CountCap, false
	}
	if f.Limit <= 0 || f.Limit > maxIDPage {
		var err error
		p.Restores, err = db.collect(ctx, `SELECT `+restoreColumns+` FROM restore r JOIN instance i ON i.id = r.instance_id
			WHERE `+where+orderBy+page, args)
		return p, err
	}
	// The page's ids first, from the index alone (a deep OFFSET then skips
	// index entries, not table rows), then those rows in full.
	ids, err := db.ids(ctx, `SELECT r.id FROM `+from+` WHERE `+where+orderBy+page, args...)
	if err != nil || len(ids) == 0 {
		return p, err
	}
	p.Restores, err = db.restoresByID(ctx, ids)
	return p, err
}

// seriesPage answers a Series query: at most f.Limit restores in series
// order after the restore q.After.
func (db *DB) seriesPage(ctx context.Context, f store.RestoreFilter, where string, args []any, q store.RestoreQuery) (store.RestorePage, error) {
	// Terms other than the instance are kept off every index ("+"): the
	// order is restore_series', so walking it beats sorting what another
	// index finds.
	where = plusTerms.Replace(where)
	if f.Instance != "" && f.Database != "" {
		where = strings.Replace(where, "+r.database_name", "r.database_name", 1)
	}
	if q.After > 0 {
		var inst int64
		var dbName, kind string
		var at int64
		err := db.read.QueryRowContext(ctx, `SELECT instance_id, database_name, kind, at_utc FROM restore WHERE id = ?`, q.After).
			Scan(&inst, &dbName, &kind, &at)
		if err == sql.ErrNoRows {
			return store.RestorePage{}, store.Errorf(store.EINVALID, "cursor %d names no restore (it may have been removed since); start again without a cursor", q.After)
		} else if err != nil {
			return store.RestorePage{}, fmt.Errorf("store: restores after: %w", err)
		}
		where += ` AND (r.instance_id, r.database_name, r.kind, r.at_utc) >= (?, ?, ?, ?)
			AND NOT (r.instance_id = ? AND r.database_name = ? AND r.kind = ? AND r.at_utc = ? AND r.id <= ?)`
		args = append(args, inst, dbName, kind, at, inst, dbName, kind, at, q.After)
	}
	orderBy := ` ORDER BY r.instance_id, r.database_name, r.kind, r.at_utc, r.id`
	if f.Limit > 0 {
		orderBy += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	if q.Each != nil || f.Limit <= 0 || f.Limit > maxIDPage {
		query := `SELECT ` + restoreColumns + ` FROM restore r JOIN instance i ON i.id = r.instance_id WHERE ` + where + orderBy
		if q.Each != nil {
			return store.RestorePage{}, db.stream(ctx, query, args, q.Each)
		}
		rs, err := db.collect(ctx, query, args)
		return store.RestorePage{Restores: rs}, err
	}
	ids, err := db.ids(ctx, `SELECT r.id FROM restore r WHERE `+where+orderBy, args...)
	if err != nil || len(ids) == 0 {
		return store.RestorePage{}, err
	}
	rs, err := db.restoresByID(ctx, ids)
	return store.RestorePage{Restores: rs}, err
}

// stream calls fn for each restore query returns.
func (db *DB) stream(ctx context.Context, query string, args []any, fn func(*store.Restore) error) error {
	rows, err := db.read.QueryContext(ctx, query, args...)
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

// collect returns the restores query returns.
func (db *DB) collect(ctx context.Context, query string, args []any) ([]store.Restore, error) {
	var out []store.Restore
	err := db.stream(ctx, query, args, func(r *store.Restore) error {
		out = append(out, *r)
		return nil
	})
	return out, err
}

// ListRestores returns the restores matching f and how many match (Restores
// with a plain query).
func (db *DB) ListRestores(ctx context.Context, f store.RestoreFilter) ([]store.Restore, int, error) {
	p, err := db.Restores(ctx, store.RestoreQuery{Filter: f})
	return p.Restores, p.Total, err
}

// GetRestore returns one restore.
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

// RestoresByID returns the restores with the given ids, in that order
// (ids that name no restore are left out).
func (db *DB) RestoresByID(ctx context.Context, ids []int64) ([]store.Restore, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return db.restoresByID(ctx, ids)
}

// restoresByID reads the restores with the given ids in full, in the
// order of ids.
func (db *DB) restoresByID(ctx context.Context, ids []int64) ([]store.Restore, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+restoreColumns+` FROM restore r JOIN instance i ON i.id = r.instance_id
		WHERE r.id IN (`+strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")+`)`, int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("store: page restores: %w", err)
	}
	defer rows.Close()
	byID := make(map[int64]store.Restore, len(ids))
	for rows.Next() {
		r, err := scanRestore(rows)
		if err != nil {
			return nil, fmt.Errorf("store: page restores: %w", err)
		}
		byID[r.ID] = r
	}
	if err := rows.Err(); err != nil {
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

func (db *DB) ids(ctx context.Context, q string, args ...any) ([]int64, error) {
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: page restores: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: page restores: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

type scanner interface{ Scan(dest ...any) error }

func scanRestore(s scanner) (store.Restore, error) {
	var r store.Restore
	var at int64
	var started, finished, bbytes, cbytes, pages, stripes, bufc, mtk, align, cpu, mem sql.NullInt64
	var dur, lmb, rmb, emb sql.NullFloat64
	var comp, enc, chk, copyOnly, ifi sql.NullBool
	var devices, destinations, kind string
	err := s.Scan(&r.ID, &r.Instance, &r.Database, &kind, &at, &started, &finished, &r.OffsetKnown, &dur,
		&r.DurationSource, &bbytes, &cbytes, &pages, &r.SizeSource, &lmb, &rmb, &emb, &r.InstanceBuild, &r.SourceServer,
		&r.SourceDatabase, &r.SourceBuild, &r.Family, &comp, &enc, &chk, &copyOnly, &devices, &r.DeviceKind, &stripes,
		&bufc, &mtk, &align, &ifi, &cpu, &mem, &r.TraceFlags, &r.Modules, &r.UserName, &r.Sources, &destinations,
		&r.ThroughputSource)
	if err != nil {
		return r, err
	}
	r.Kind = store.Kind(kind)
	r.At = store.UnixMs(at)
	r.StartedAt = nTime(started)
	r.FinishedAt = nTime(finished)
	r.DurationS = nFloat(dur)
	r.BackupBytes, r.CompressedB, r.Pages = nInt(bbytes), nInt(cbytes), nInt(pages)
	r.LogicalMiBps, r.ReadMiBps, r.EngineMBps = nFloat(lmb), nFloat(rmb), nFloat(emb)
	r.Compressed, r.Encrypted, r.Checksum, r.CopyOnly, r.IFI = nBool(comp), nBool(enc), nBool(chk), nBool(copyOnly), nBool(ifi)
	r.Stripes, r.BufferCount, r.MaxTransferKiB, r.IOAlignment = nInt(stripes), nInt(bufc), nInt(mtk), nInt(align)
	r.CPUCount, r.MemoryMB = nInt(cpu), nInt(mem)
	_ = json.Unmarshal([]byte(devices), &r.Devices)
	if r.Devices == nil {
		r.Devices = []string{}
	}
	if destinations != "" {
		_ = json.Unmarshal([]byte(destinations), &r.DestinationFiles)
	}
	return r, nil
}

func nTime(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := store.UnixMs(v.Int64)
	return &t
}

func nFloat(v sql.NullFloat64) *float64 {
	if !v.Valid {
		return nil
	}
	return &v.Float64
}

func nInt(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

func nBool(v sql.NullBool) *bool {
	if !v.Valid {
		return nil
	}
	return &v.Bool
}
