package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
)

var factorNames = [18]string{"instance_build", "source_build", "source_server", "compression", "encryption",
	"checksum", "device_kind", "stripes", "buffer_count", "max_transfer_size", "io_alignment", "ifi",
	"cpu_count", "memory", "loaded_modules", "trace_flags", "size_class", "destination"}

// RestoreFactors returns the factors of each restore (store/sqlite's
// words and classes), read 20,000 ids a statement.
func (db *DB) RestoreFactors(ctx context.Context, ids []int64) (map[int64]map[string]string, error) {
	out := make(map[int64]map[string]string, len(ids))
	shared := map[[18]string]map[string]string{}
	for len(ids) > 0 {
		n := min(len(ids), 20000)
		chunk := ids[:n]
		ids = ids[n:]
		rows, err := db.pool.Query(ctx, `SELECT r.id, COALESCE(r.backup_bytes, r.pages*8192, 0),
			COALESCE(r.instance_build,''), COALESCE(r.source_build,''), COALESCE(r.source_server,''), r.compressed, r.encrypted,
			r.checksum, COALESCE(r.device_kind,''), r.stripes, r.buffer_count, r.max_transfer_kib, r.io_alignment, r.ifi,
			r.cpu_count, r.memory_mb, COALESCE(r.modules,''), COALESCE(r.trace_flags,''), COALESCE(r.destination_files,'')
			FROM restore r WHERE r.id = ANY($1)`, chunk)
		if err != nil {
			return nil, fmt.Errorf("store: restore factors: %w", err)
		}
		for rows.Next() {
			var id, bytes int64
			var build, sbuild, sserver, dkind, mods, flags, dest string
			var comp, enc, chk, ifi, stripes, bufc, mtk, align, cpu, mem *int64
			if err := rows.Scan(&id, &bytes, &build, &sbuild, &sserver, &comp, &enc, &chk, &dkind, &stripes, &bufc, &mtk,
				&align, &ifi, &cpu, &mem, &mods, &flags, &dest); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: restore factors: %w", err)
			}
			var files []string
			if dest != "" {
				_ = json.Unmarshal([]byte(dest), &files)
			}
			v := [18]string{build, sbuild, strings.ToUpper(sserver), boolFactor(comp, "compressed", "uncompressed"),
				boolFactor(enc, "encrypted", "not encrypted"), boolFactor(chk, "checksum", "no checksum"), dkind,
				intFactor(stripes, ""), intFactor(bufc, ""), intFactor(mtk, " KiB"), intFactor(align, ""),
				boolFactor(ifi, "enabled", "disabled"), intFactor(cpu, ""), gibFactor(mem), mods, flags, store.SizeClass(bytes),
				store.DestinationFolders(files)}
			m := shared[v]
			if m == nil {
				m = make(map[string]string, len(v))
				for i, name := range factorNames {
					m[name] = v[i]
				}
				shared[v] = m
			}
			out[id] = m
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("store: restore factors: %w", err)
		}
	}
	return out, nil
}

func boolFactor(b *int64, yes, no string) string {
	switch {
	case b == nil:
		return ""
	case *b != 0:
		return yes
	}
	return no
}

func intFactor(v *int64, unit string) string {
	if v == nil {
		return ""
	}
	return strconv.FormatInt(*v, 10) + unit
}

func gibFactor(v *int64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatInt(*v/1024, 10) + " GiB"
}

// BackupOfDevices returns the newest full backup written to the first of
// devices (names compared ignoring case), or nil when there is none.
func (db *DB) BackupOfDevices(ctx context.Context, devices []string) (*store.DeviceBackup, error) {
	if len(devices) == 0 {
		return nil, nil
	}
	var b store.DeviceBackup
	var id int64
	var size, comp *int64
	err := db.pool.QueryRow(ctx, `SELECT s.id, i.name::text, s.database_name, s.backup_size, s.compressed_backup_size, s.family_count
		FROM backup_media m JOIN backup_set s ON s.id = m.backup_set_id JOIN instance i ON i.id = s.instance_id
		WHERE lower(m.physical_device_name) = lower($1) AND s.type = 'D'
		ORDER BY s.finish_utc DESC LIMIT 1`, strings.TrimSpace(devices[0])).
		Scan(&id, &b.Instance, &b.Database, &size, &comp, &b.Families)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("store: backup of %s: %w", devices[0], err)
	}
	if size != nil {
		b.Size = *size
	}
	if comp != nil {
		b.CompressedSize = *comp
	}
	err = db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM backup_file WHERE backup_set_id = $1 AND file_type IN ('S', 'F'))`,
		id).Scan(&b.Filestream)
	if err != nil {
		return nil, fmt.Errorf("store: backup of %s: %w", devices[0], err)
	}
	return &b, nil
}
