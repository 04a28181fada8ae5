package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// RestoreFilter selects restores. Zero fields match everything.
type RestoreFilter struct {
	Instance string
	Database string
	Kind     Kind
	From, To time.Time // on the restore's time (UTC)
	Build    string    // instance build prefix ("13.0.4474")
	Source   string    // source server
	IDs      []int64
	Sort     string // "at" (default, newest first), "duration", "throughput", "instance", "database"
	Asc      bool
	Limit    int
	Offset   int
}

const restoreColumns = `r.id, i.name, r.database_name, r.kind, r.at_utc, r.started_utc, r.finished_utc, r.offset_known,
 r.duration_s, r.duration_source, r.backup_bytes, r.compressed_bytes, r.pages, r.size_source, r.logical_mibps,
 r.read_mibps, r.engine_mbps, COALESCE(r.instance_build,''), COALESCE(r.source_server,''),
 COALESCE(r.source_database,''), COALESCE(r.source_build,''), COALESCE(r.family,''), r.compressed, r.encrypted,
 r.checksum, r.copy_only, r.devices, COALESCE(r.device_kind,''), r.stripes, r.buffer_count, r.max_transfer_kib,
 r.io_alignment, r.ifi, r.cpu_count, r.memory_mb, COALESCE(r.trace_flags,''), COALESCE(r.modules,''),
 COALESCE(r.user_name,''), r.sources, COALESCE(r.destination_files,''), r.throughput_source`

func (f RestoreFilter) where() (string, []any) {
	var conds []string
	var args []any
	if f.Instance != "" {
		conds = append(conds, "i.name = ?")
		args = append(args, InstanceName(f.Instance))
	}
	if f.Database != "" {
		conds = append(conds, "r.database_name = ?")
		args = append(args, DatabaseName(f.Database))
	}
	if f.Kind != "" {
		conds = append(conds, "r.kind = ?")
		args = append(args, string(f.Kind))
	}
	if !f.From.IsZero() {
		conds = append(conds, "r.at_utc >= ?")
		args = append(args, f.From.UnixMilli())
	}
	if !f.To.IsZero() {
		conds = append(conds, "r.at_utc < ?")
		args = append(args, f.To.UnixMilli())
	}
	if f.Build != "" {
		conds = append(conds, "r.instance_build LIKE ? ESCAPE '\\'")
		args = append(args, likePrefix(f.Build))
	}
	if f.Source != "" {
		conds = append(conds, "r.source_server = ?")
		args = append(args, InstanceName(f.Source))
	}
	if len(f.IDs) > 0 {
		conds = append(conds, "r.id IN ("+strings.TrimSuffix(strings.Repeat("?,", len(f.IDs)), ",")+")")
		for _, id := range f.IDs {
			args = append(args, id)
		}
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

func likePrefix(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s) + "%"
}

// ListRestores returns the restores matching f and the total count without
// Limit/Offset.
func (db *DB) ListRestores(ctx context.Context, f RestoreFilter) ([]Restore, int, error) {
	where, args := f.where()
	var total int
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM restore r JOIN instance i ON i.id = r.instance_id`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: count restores: %w", err)
	}
	order := "r.at_utc"
	switch f.Sort {
	case "duration":
		order = "r.duration_s"
	case "throughput":
		order = "r.logical_mibps"
	case "instance":
		order = "i.name"
	case "database":
		order = "r.database_name"
	}
	dir := " DESC"
	if f.Asc {
		dir = " ASC"
	}
	q := `SELECT ` + restoreColumns + ` FROM restore r JOIN instance i ON i.id = r.instance_id` + where +
		` ORDER BY ` + order + dir + ` NULLS LAST, r.id` + dir
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d OFFSET %d", f.Limit, max(f.Offset, 0))
	}
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("store: list restores: %w", err)
	}
	defer rows.Close()
	var out []Restore
	for rows.Next() {
		r, err := scanRestore(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("store: list restores: %w", err)
		}
		out = append(out, r)
	}
	return out, total, rows.Err()
}

// EachRestore calls fn for every restore matching f in time order, streaming.
func (db *DB) EachRestore(ctx context.Context, f RestoreFilter, fn func(*Restore) error) error {
	where, args := f.where()
	rows, err := db.read.QueryContext(ctx, `SELECT `+restoreColumns+` FROM restore r JOIN instance i ON i.id = r.instance_id`+
		where+` ORDER BY r.instance_id, r.database_name, r.kind, r.at_utc, r.id`, args...)
	if err != nil {
		return fmt.Errorf("store: each restore: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRestore(rows)
		if err != nil {
			return fmt.Errorf("store: each restore: %w", err)
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// GetRestore returns one restore.
func (db *DB) GetRestore(ctx context.Context, id int64) (*Restore, error) {
	rs, _, err := db.ListRestores(ctx, RestoreFilter{IDs: []int64{id}})
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, Errorf(ENOTFOUND, "restore %d not found", id)
	}
	return &rs[0], nil
}

type scanner interface{ Scan(dest ...any) error }

func scanRestore(s scanner) (Restore, error) {
	var r Restore
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
	r.Kind = Kind(kind)
	r.At = time.UnixMilli(at).UTC()
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
	t := time.UnixMilli(v.Int64).UTC()
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
