package store

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
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
	"user_name", "sources"}

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
		nullString(r.TraceFlags), nullString(r.Modules), nullString(r.UserName), r.Sources}
	h := fnv.New64a()
	for i, x := range v {
		if i == 2 {
			continue
		}
		switch x := x.(type) {
		case *float64:
			if x != nil {
				fmt.Fprintf(h, "%v|", *x)
			} else {
				h.Write([]byte("nil|"))
			}
		case *int64:
			if x != nil {
				fmt.Fprintf(h, "%d|", *x)
			} else {
				h.Write([]byte("nil|"))
			}
		case *bool:
			if x != nil {
				fmt.Fprintf(h, "%t|", *x)
			} else {
				h.Write([]byte("nil|"))
			}
		default:
			fmt.Fprintf(h, "%v|", x)
		}
	}
	v[2] = int64(h.Sum64() >> 1)
	return v
}

// rowsPerInsert is how many restores one INSERT statement carries: fewer
// statements cost less than more bound values in modernc's SQLite.
const rowsPerInsert = 20

func writeRestores(ctx context.Context, tx *sql.Tx, instanceID int64, out derived) error {
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
	var pending [][]any
	var full *sql.Stmt // the rowsPerInsert statement, prepared once per instance
	defer func() {
		if full != nil {
			full.Close()
		}
	}()
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		args := make([]any, 0, len(pending)*len(restoreCols))
		for _, v := range pending {
			args = append(args, v...)
		}
		n := len(pending)
		pending = pending[:0]
		if n < rowsPerInsert {
			_, err := tx.ExecContext(ctx, upsertSQL(n), args...)
			return err
		}
		if full == nil {
			var err error
			if full, err = tx.PrepareContext(ctx, upsertSQL(rowsPerInsert)); err != nil {
				return err
			}
		}
		_, err := full.ExecContext(ctx, args...)
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
		pending = append(pending, v)
		if len(pending) == rowsPerInsert {
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
