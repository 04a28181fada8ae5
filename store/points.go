package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SeriesPoint is the lean view of a restore the regression engine reads:
// what it needs to judge throughput and to tell what changed.
type SeriesPoint struct {
	RestoreID   int64
	At          time.Time
	DurationS   float64 // 0 = unknown
	Bytes       int64   // 0 = unknown
	MiBps       float64 // 0 = unknown
	Family      string
	Factors     map[string]string
	Compressed  bool
	Encrypted   bool
	Alignment4K bool
	Virtual     bool
	Striped     bool
}

// SeriesRestores is one series' restores in time order.
type SeriesRestores struct {
	InstanceID int64
	Instance   string
	Database   string
	Kind       Kind
	Build      string // the instance's latest known build
	Points     []SeriesPoint
}

// EachSeries streams every series of the given instances (all when ids is
// nil) to fn, one series at a time, so memory follows the largest series.
func (db *DB) EachSeries(ctx context.Context, ids []int64, fn func(*SeriesRestores) error) error {
	q := `SELECT r.instance_id, i.name, r.database_name, r.kind, r.id, r.at_utc, COALESCE(r.duration_s,0),
		COALESCE(r.backup_bytes, r.pages*8192, 0), COALESCE(r.logical_mibps,0), COALESCE(r.family,''),
		COALESCE(r.instance_build,''), COALESCE(r.source_build,''), COALESCE(r.source_server,''), r.compressed, r.encrypted,
		r.checksum, COALESCE(r.device_kind,''), r.stripes, r.buffer_count, r.max_transfer_kib, r.io_alignment, r.ifi,
		r.cpu_count, r.memory_mb, COALESCE(r.modules,''), COALESCE(r.trace_flags,'')
		FROM restore r JOIN instance i ON i.id = r.instance_id`
	var args []any
	if ids != nil {
		if len(ids) == 0 {
			return nil
		}
		q += " WHERE r.instance_id IN (" + strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",") + ")"
		for _, id := range ids {
			args = append(args, id)
		}
	}
	q += " ORDER BY r.instance_id, r.database_name, r.kind, r.at_utc, r.id"
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("store: each series: %w", err)
	}
	defer rows.Close()
	var cur *SeriesRestores
	flush := func() error {
		if cur == nil {
			return nil
		}
		s := cur
		cur = nil
		return fn(s)
	}
	for rows.Next() {
		var iid, id, at, bytes int64
		var name, dbn, kind, family, build, sbuild, sserver, dkind, mods, flags string
		var dur, mb float64
		var comp, enc, chk, ifi sql.NullBool
		var stripes, bufc, mtk, align, cpu, mem sql.NullInt64
		if err := rows.Scan(&iid, &name, &dbn, &kind, &id, &at, &dur, &bytes, &mb, &family, &build, &sbuild, &sserver,
			&comp, &enc, &chk, &dkind, &stripes, &bufc, &mtk, &align, &ifi, &cpu, &mem, &mods, &flags); err != nil {
			return fmt.Errorf("store: each series: %w", err)
		}
		if cur == nil || cur.InstanceID != iid || cur.Database != dbn || string(cur.Kind) != kind {
			if err := flush(); err != nil {
				return err
			}
			cur = &SeriesRestores{InstanceID: iid, Instance: name, Database: dbn, Kind: Kind(kind)}
		}
		if build != "" {
			cur.Build = build
		}
		p := SeriesPoint{RestoreID: id, At: time.UnixMilli(at).UTC(), DurationS: dur, Bytes: bytes, MiBps: mb,
			Family: family, Compressed: comp.Valid && comp.Bool, Encrypted: enc.Valid && enc.Bool,
			Alignment4K: align.Valid && align.Int64 == 4096, Virtual: dkind == DeviceVirtual,
			Striped: stripes.Valid && stripes.Int64 > 1}
		p.Factors = map[string]string{
			"instance_build":    build,
			"source_build":      sbuild,
			"source_server":     strings.ToUpper(sserver),
			"compression":       boolFactor(comp, "compressed", "uncompressed"),
			"encryption":        boolFactor(enc, "encrypted", "not encrypted"),
			"checksum":          boolFactor(chk, "checksum", "no checksum"),
			"device_kind":       dkind,
			"stripes":           intFactor(stripes),
			"buffer_count":      intFactor(bufc),
			"max_transfer_size": kibFactor(mtk),
			"io_alignment":      intFactor(align),
			"ifi":               boolFactor(ifi, "enabled", "disabled"),
			"cpu_count":         intFactor(cpu),
			"memory":            mbFactor(mem),
			"loaded_modules":    mods,
			"trace_flags":       flags,
			"size_class":        SizeClass(bytes),
		}
		cur.Points = append(cur.Points, p)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: each series: %w", err)
	}
	return flush()
}

// SizeClass buckets a backup size by powers of ten, so "the database grew
// into a new class" can be a factor without every byte being a change.
func SizeClass(bytes int64) string {
	const gib = 1 << 30
	switch {
	case bytes <= 0:
		return ""
	case bytes < gib:
		return "< 1 GiB"
	case bytes < 10*gib:
		return "1–10 GiB"
	case bytes < 100*gib:
		return "10–100 GiB"
	case bytes < 1024*gib:
		return "100 GiB–1 TiB"
	}
	return "≥ 1 TiB"
}

func boolFactor(b sql.NullBool, yes, no string) string {
	if !b.Valid {
		return ""
	}
	if b.Bool {
		return yes
	}
	return no
}

func intFactor(v sql.NullInt64) string {
	if !v.Valid {
		return ""
	}
	return strconv.FormatInt(v.Int64, 10)
}

func kibFactor(v sql.NullInt64) string {
	if !v.Valid {
		return ""
	}
	return strconv.FormatInt(v.Int64, 10) + " KiB"
}

func mbFactor(v sql.NullInt64) string {
	if !v.Valid {
		return ""
	}
	return strconv.FormatInt(v.Int64/1024, 10) + " GiB"
}
