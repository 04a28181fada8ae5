package row

import (
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/restorewatch/restorewatch/store/derive"
)

// Cols are the columns reconciliation writes, in the order of
// Values.
var Cols = []string{"instance_id", "natural_key", "content_hash", "history_id", "log_id", "extra_log_id",
	"database_name", "kind", "at_utc", "started_utc", "finished_utc", "started_local", "finished_local",
	"restore_date_local", "offset_known", "duration_s", "duration_source", "backup_bytes", "compressed_bytes", "pages",
	"size_source", "logical_mibps", "read_mibps", "engine_mbps", "instance_build", "source_server", "source_database",
	"source_build", "family", "compressed", "encrypted", "checksum", "copy_only", "devices", "device_kind", "stripes",
	"buffer_count", "max_transfer_kib", "io_alignment", "ifi", "cpu_count", "memory_mb", "trace_flags", "modules",
	"user_name", "sources", "destination_files", "throughput_source"}

// Values returns the row of d for Cols, with content_hash
// computed over everything else.
func Values(d *derive.Derived, instanceID int64) []any {
	r := &d.Restore
	var hid, lid, mid any
	if d.History != nil {
		hid = d.History.ID
	}
	if d.Log != nil {
		lid = d.Log.ID
	}
	if d.Client != nil {
		mid = d.Client.ID
	}
	// A Restore-DbaDatabase row is cited in the first free log slot.
	if d.Dbatools != nil {
		switch {
		case lid == nil:
			lid = d.Dbatools.ID
		case mid == nil:
			mid = d.Dbatools.ID
		}
	}
	v := []any{instanceID, d.Key, int64(0), hid, lid, mid, r.Database, string(r.Kind), d.AtUTC,
		d.StartedUTC, d.FinishedUTC, d.StartedLocal, d.FinishedLocal, d.RestoreDateLocal, r.OffsetKnown, r.DurationS,
		r.DurationSource, r.BackupBytes, r.CompressedB,
		r.Pages, r.SizeSource, r.LogicalMiBps, r.ReadMiBps, r.EngineMBps, nullString(r.InstanceBuild),
		nullString(r.SourceServer), nullString(r.SourceDatabase), nullString(r.SourceBuild), nullString(r.Family),
		r.Compressed, r.Encrypted, r.Checksum, r.CopyOnly, StringsJSON(r.Devices), nullString(r.DeviceKind),
		r.Stripes, r.BufferCount, r.MaxTransferKiB, r.IOAlignment, r.IFI, r.CPUCount, r.MemoryMB,
		nullString(r.TraceFlags), nullString(r.Modules), nullString(r.UserName), r.Sources, destinationsJSON(r.DestinationFiles),
		r.ThroughputSource}
	v[2] = ContentHash(v)
	return v
}

// ContentHash hashes a restore row, all but its content_hash column, as the
// text "%v|" of each value with nil pointers as "nil" (the form earlier
// versions wrote, so stored hashes stay valid), without fmt's cost on the
// common types.
func ContentHash(v []any) int64 {
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
	return StringsJSON(files)
}

// StringsJSON is jsonText of a string list ("[]" for none) without
// encoding/json's reflection: the same text, byte for byte, so content
// hashes stored before stay valid.
func StringsJSON(ss []string) string {
	return string(appendStrings(make([]byte, 0, 16+32*len(ss)), ss))
}
