package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/restorewatch/restorewatch/store"
)

// RestoreFactors returns the factors of SPEC §6.1 of the given restores,
// by restore id: what the regression engine compares across a change. ""
// means unknown. Restores with the same factors share one map, which the
// caller must not modify.
func (db *DB) RestoreFactors(ctx context.Context, ids []int64) (map[int64]map[string]string, error) {
	out := make(map[int64]map[string]string, len(ids))
	shared := map[[18]string]map[string]string{}
	err := db.eachRestore(ctx, ids, `SELECT r.id, COALESCE(r.backup_bytes, r.pages*8192, 0),
		COALESCE(r.instance_build,''), COALESCE(r.source_build,''), COALESCE(r.source_server,''), r.compressed, r.encrypted,
		r.checksum, COALESCE(r.device_kind,''), r.stripes, r.buffer_count, r.max_transfer_kib, r.io_alignment, r.ifi,
		r.cpu_count, r.memory_mb, COALESCE(r.modules,''), COALESCE(r.trace_flags,''), COALESCE(r.destination_files,'')`,
		func(rows *sql.Rows) error {
			var id, bytes int64
			var build, sbuild, sserver, dkind, mods, flags, dest string
			var comp, enc, chk, ifi sql.NullBool
			var stripes, bufc, mtk, align, cpu, mem sql.NullInt64
			if err := rows.Scan(&id, &bytes, &build, &sbuild, &sserver, &comp, &enc, &chk, &dkind, &stripes, &bufc, &mtk,
				&align, &ifi, &cpu, &mem, &mods, &flags, &dest); err != nil {
				return err
			}
			var files []string
			if dest != "" {
				_ = json.Unmarshal([]byte(dest), &files)
			}
			v := [18]string{build, sbuild, strings.ToUpper(sserver), boolFactor(comp, "compressed", "uncompressed"),
				boolFactor(enc, "encrypted", "not encrypted"), boolFactor(chk, "checksum", "no checksum"), dkind,
				intFactor(stripes), intFactor(bufc), kibFactor(mtk), intFactor(align), boolFactor(ifi, "enabled", "disabled"),
				intFactor(cpu), mbFactor(mem), mods, flags, store.SizeClass(bytes), store.DestinationFolders(files)}
			m := shared[v]
			if m == nil {
				m = make(map[string]string, len(v))
				for i, name := range factorNames {
					m[name] = v[i]
				}
				shared[v] = m
			}
			out[id] = m
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: restore factors: %w", err)
	}
	return out, nil
}

// factorNames name the values RestoreFactors reads, in its order.
var factorNames = [18]string{"instance_build", "source_build", "source_server", "compression", "encryption",
	"checksum", "device_kind", "stripes", "buffer_count", "max_transfer_size", "io_alignment", "ifi",
	"cpu_count", "memory", "loaded_modules", "trace_flags", "size_class", "destination"}

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
