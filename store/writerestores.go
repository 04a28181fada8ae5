package store

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
)

// restoreCols are the columns reconciliation writes, in the order of
// derivedRestore.values.
var restoreCols = []string{"instance_id", "natural_key", "content_hash", "history_id", "log_id", "extra_log_id",
	"database_name", "kind", "at_utc", "started_utc", "finished_utc", "started_local", "finished_local",
	"restore_date_local", "offset_known", "duration_s", "duration_source", "backup_bytes", "compressed_bytes", "pages",
	"size_source", "logical_mibps", "read_mibps", "engine_mbps", "instance_build", "source_server", "source_database",
	"source_build", "family", "compressed", "encrypted", "checksum", "copy_only", "devices", "device_kind", "stripes",
	"buffer_count", "max_transfer_kib", "io_alignment", "ifi", "cpu_count", "memory_mb", "trace_flags", "modules",
	"user_name", "sources", "destination_files"}

// values returns the row of d for restoreCols, with content_hash computed
// over everything else.
func (d *derivedRestore) values(instanceID int64) []any {
	r := &d.r
	var hid, lid, mid any
	if d.h != nil {
		hid = d.h.id
	}
	if d.l != nil {
		lid = d.l.id
	}
	if d.m != nil {
		mid = d.m.id
	}
	v := []any{instanceID, d.key, int64(0), hid, lid, mid, r.Database, string(r.Kind), d.utcS,
		d.rest["started_utc"], d.rest["finished_utc"], d.rest["started_local"], d.rest["finished_local"],
		d.rest["restore_date_local"], r.OffsetKnown, r.DurationS, r.DurationSource, r.BackupBytes, r.CompressedB,
		r.Pages, r.SizeSource, r.LogicalMiBps, r.ReadMiBps, r.EngineMBps, nullString(r.InstanceBuild),
		nullString(r.SourceServer), nullString(r.SourceDatabase), nullString(r.SourceBuild), nullString(r.Family),
		r.Compressed, r.Encrypted, r.Checksum, r.CopyOnly, jsonText(nonNil(r.Devices)), nullString(r.DeviceKind),
		r.Stripes, r.BufferCount, r.MaxTransferKiB, r.IOAlignment, r.IFI, r.CPUCount, r.MemoryMB,
		nullString(r.TraceFlags), nullString(r.Modules), nullString(r.UserName), r.Sources, destinationsJSON(r.DestinationFiles)}
	v[2] = contentHash(v)
	return v
}

// contentHash hashes a restore row, all but its content_hash column, as the
// text "%v|" of each value with nil pointers as "nil" (the form earlier
// versions wrote, so stored hashes stay valid), without fmt's cost on the
// common types.
func contentHash(v []any) int64 {
	h := fnv.New64a()
	buf := make([]byte, 0, 512)
	for i, x := range v {
		if i == 2 {
			continue
		}
		switch x := x.(type) {
		case *float64:
			if x == nil {
				buf = append(buf, "nil"...)
			} else {
				buf = strconv.AppendFloat(buf, *x, 'g', -1, 64)
			}
		case *int64:
			if x == nil {
				buf = append(buf, "nil"...)
			} else {
				buf = strconv.AppendInt(buf, *x, 10)
			}
		case *bool:
			if x == nil {
				buf = append(buf, "nil"...)
			} else {
				buf = strconv.AppendBool(buf, *x)
			}
		case nil:
			buf = append(buf, "<nil>"...)
		case string:
			buf = append(buf, x...)
		case int64:
			buf = strconv.AppendInt(buf, x, 10)
		case int:
			buf = strconv.AppendInt(buf, int64(x), 10)
		case bool:
			buf = strconv.AppendBool(buf, x)
		case float64:
			buf = strconv.AppendFloat(buf, x, 'g', -1, 64)
		default:
			buf = fmt.Appendf(buf, "%v", x)
		}
		buf = append(buf, '|')
	}
	h.Write(buf)
	return int64(h.Sum64() >> 1)
}

// destinationsJSON is the destination_files column: NULL when no source
// said where the files went.
func destinationsJSON(files []string) any {
	if len(files) == 0 {
		return nil
	}
	return jsonText(files)
}

// rowsPerInsert is how many restores one INSERT statement carries: fewer
// statements cost less than more bound values in modernc's SQLite.
const rowsPerInsert = 20

// restoreWriter writes derived restores inside one reconciliation
// transaction, keeping its multi-row statement prepared across instances.
type restoreWriter struct {
	ctx  context.Context
	tx   *sql.Tx
	full *sql.Stmt // the rowsPerInsert statement
	args []any
}

func (w *restoreWriter) close() {
	if w.full != nil {
		w.full.Close()
	}
}

// write brings the instance's restore rows to out: new and changed rows are
// upserted by natural key, unchanged ones (same content hash) left alone,
// and rows no longer derived deleted.
func (w *restoreWriter) write(instanceID int64, out derived) error {
	ctx, tx := w.ctx, w.tx
	existing := map[int64]int64{} // natural_key -> content_hash
	rows, err := tx.QueryContext(ctx, `SELECT natural_key, content_hash FROM restore WHERE instance_id = ?`, instanceID)
	if err != nil {
		return err
	}
	for rows.Next() {
		var k, h int64
		if err := rows.Scan(&k, &h); err != nil {
			rows.Close()
			return err
		}
		existing[k] = h
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	pending := 0
	flush := func() error {
		if pending == 0 {
			return nil
		}
		n := pending
		pending = 0
		args := w.args
		w.args = w.args[:0]
		if n < rowsPerInsert {
			_, err := tx.ExecContext(ctx, upsertSQL(n), args...)
			return err
		}
		if w.full == nil {
			var err error
			if w.full, err = tx.PrepareContext(ctx, upsertSQL(rowsPerInsert)); err != nil {
				return err
			}
		}
		_, err := w.full.ExecContext(ctx, args...)
		return err
	}
	produced := make(map[int64]bool, len(out.restores))
	for i := range out.restores {
		d := &out.restores[i]
		produced[d.key] = true
		v := d.values(instanceID)
		if h, ok := existing[d.key]; ok && h == v[2].(int64) {
			continue // unchanged: no write
		}
		w.args = append(w.args, v...)
		pending++
		if pending == rowsPerInsert {
			if err := flush(); err != nil {
				return fmt.Errorf("write restores: %w", err)
			}
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("write restores: %w", err)
	}
	for k := range existing {
		if !produced[k] {
			if _, err := tx.ExecContext(ctx, `DELETE FROM restore WHERE natural_key = ?`, k); err != nil {
				return fmt.Errorf("delete stale restore: %w", err)
			}
		}
	}
	return nil
}

var upsertCache sync.Map // rows -> statement text

// upsertSQL builds a multi-row upsert keyed by natural_key, so a restore keeps
// its id when its facts change.
func upsertSQL(n int) string {
	if q, ok := upsertCache.Load(n); ok {
		return q.(string)
	}
	var b strings.Builder
	b.WriteString("INSERT INTO restore (" + strings.Join(restoreCols, ", ") + ") VALUES ")
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", len(restoreCols)), ",") + ")"
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(one)
	}
	b.WriteString(" ON CONFLICT (natural_key) DO UPDATE SET ")
	first := true
	for _, c := range restoreCols {
		if c == "natural_key" || c == "instance_id" {
			continue
		}
		if !first {
			b.WriteString(", ")
		}
		first = false
		b.WriteString(c + " = excluded." + c)
	}
	q := b.String()
	upsertCache.Store(n, q)
	return q
}
