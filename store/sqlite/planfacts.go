package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/restorewatch/restorewatch/store"
)

// RestoreRates returns the measured full, differential and log restores of
// one instance (all of them, through restore_instance_at) and, when fleet is
// set, up to perKind of the fleet's most recent ones of each kind (by
// at_utc, then id, as the dashboard's orders rank them), for the expected
// durations of a restore plan, oldest first. The dashboard takes the
// fleet's part from its cached orders instead (RestoreOrders.Measured, then
// RestoreRatesOf); here fleetRates reads it through the same index.
func (db *DB) RestoreRates(ctx context.Context, instance string, fleet bool, perKind int) ([]store.RestoreRate, error) {
	var out []store.RestoreRate
	var newest sql.NullInt64 // the fleet's newest restore
	if fleet {
		// Through each instance's end of restore_instance_at.
		if err := db.read.QueryRowContext(ctx, `SELECT MAX((SELECT MAX(at_utc) FROM restore WHERE instance_id = i.id))
			FROM instance i`).Scan(&newest); err != nil {
			return nil, fmt.Errorf("store: restore rates: %w", err)
		}
	}
	for _, k := range []store.Kind{store.KindFull, store.KindDiff, store.KindLog} {
		var err error
		if out, err = db.readRestoreRates(ctx, out, ratesFrom+`WHERE i.name = ? AND r.kind = ? AND r.logical_mibps > 0`,
			store.InstanceName(instance), k); err != nil {
			return nil, err
		}
		if newest.Valid {
			if out, err = db.fleetRates(ctx, out, newest.Int64, instance, k, max(perKind, 1)); err != nil {
				return nil, err
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}

// fleetRates appends to out the newest n measured restores of kind k on
// instances other than instance, the fleet's newest restore being at
// newest (UTC ms). No index orders the fleet's restores by
// time (each would cost a large import a sort, BENCHMARKS.md): the restores
// of the fleet's last day are read first, instance by instance through
// restore_instance_at, and every restore before that day is older than
// every one in it, so when the day holds n they are the fleet's newest.
// Otherwise (a kind the fleet rarely restores) every restore is scanned for
// them, as it once was for every kind. Measured gain of the day's path
// over the scan (TestRestoreRatesAreTheFleetsNewest holds them equal):
// `rw plan` at 10 M 13.1 → 2.8–3.2 s (BENCHMARKS.md).
func (db *DB) fleetRates(ctx context.Context, out []store.RestoreRate, newest int64, instance string, k store.Kind, n int) ([]store.RestoreRate, error) {
	const measured = `WHERE i.name <> ? AND r.kind = ? AND r.logical_mibps > 0 `
	// CROSS JOIN keeps the instances the outer loop: without statistics
	// SQLite otherwise scans restore_scan, every restore, for the kind.
	day, err := db.readRestoreRates(ctx, nil, `FROM instance i CROSS JOIN restore r ON r.instance_id = i.id `+measured+
		`AND r.at_utc >= ? ORDER BY r.at_utc DESC, r.id DESC LIMIT ?`, store.InstanceName(instance), k, newest-dayMS, n)
	if err != nil || len(day) == n {
		return append(out, day...), err
	}
	return db.readRestoreRates(ctx, out, ratesFrom+measured+`ORDER BY r.at_utc DESC, r.id DESC LIMIT ?`, store.InstanceName(instance), k, n)
}

// RestoreRatesOf returns the measured restores among ids as RestoreRates,
// oldest first: the fleet's part of a plan's rates once the caller knows
// which restores are the fleet's newest of each kind.
func (db *DB) RestoreRatesOf(ctx context.Context, ids []int64) ([]store.RestoreRate, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("store: restore rates: %w", err)
	}
	out, err := db.readRestoreRates(ctx, nil, ratesFrom+`WHERE r.id IN (SELECT value FROM json_each(?)) AND r.logical_mibps > 0`, string(b))
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}

// ratesFrom is the usual FROM clause of readRestoreRates.
const ratesFrom = `FROM restore r JOIN instance i ON i.id = r.instance_id `

// readRestoreRates appends to out the RestoreRates of the restores r (with
// their instance i) that from (a FROM clause and what follows) selects.
func (db *DB) readRestoreRates(ctx context.Context, out []store.RestoreRate, from string, args ...any) ([]store.RestoreRate, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT r.id, i.name, r.database_name, r.kind, COALESCE(r.device_kind,''), r.logical_mibps,
		COALESCE(r.read_mibps,0), COALESCE(r.buffer_count,0), COALESCE(r.max_transfer_kib,0), COALESCE(r.backup_bytes,0),
		COALESCE(r.duration_s,0), r.at_utc `+from, args...)
	if err != nil {
		return nil, fmt.Errorf("store: restore rates: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r store.RestoreRate
		var at int64
		if err := rows.Scan(&r.ID, &r.Instance, &r.Database, &r.Kind, &r.DeviceKind, &r.LogicalMiBps, &r.ReadMiBps, &r.BufferCount,
			&r.MaxTransferKiB, &r.Bytes, &r.DurationS, &at); err != nil {
			return nil, fmt.Errorf("store: restore rates: %w", err)
		}
		r.At = store.UnixMs(at)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: restore rates: %w", err)
	}
	return out, nil
}

// InstanceTags returns an instance's tags (where an "rto" target may be
// set); an unknown instance has none.
func (db *DB) InstanceTags(ctx context.Context, instance string) (map[string]string, error) {
	var tags string
	err := db.read.QueryRowContext(ctx, `SELECT tags FROM instance WHERE name = ?`, store.InstanceName(instance)).Scan(&tags)
	if err == sql.ErrNoRows {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: instance tags: %w", err)
	}
	return parseTags(tags), nil
}

// FileFolders returns the folders where an instance keeps its databases'
// data and log files, as its own backups record them (the most common
// folder of each file type); empty when no backup of it lists files.
func (db *DB) FileFolders(ctx context.Context, instance string) (data, log string, err error) {
	rows, err := db.read.QueryContext(ctx, `SELECT f.file_type, f.physical_name FROM backup_file f
		JOIN backup_set b ON b.id = f.backup_set_id JOIN instance i ON i.id = b.instance_id
		WHERE i.name = ? AND b.type = 'D' ORDER BY b.finish_utc DESC LIMIT 2000`, store.InstanceName(instance))
	if err != nil {
		return "", "", fmt.Errorf("store: file folders: %w", err)
	}
	defer rows.Close()
	counts := map[string]map[string]int{"D": {}, "L": {}}
	for rows.Next() {
		var typ, name string
		if err := rows.Scan(&typ, &name); err != nil {
			return "", "", fmt.Errorf("store: file folders: %w", err)
		}
		if i := strings.LastIndexAny(name, `\/`); i > 0 && counts[typ] != nil {
			counts[typ][name[:i]]++
		}
	}
	if err := rows.Err(); err != nil {
		return "", "", fmt.Errorf("store: file folders: %w", err)
	}
	top := func(m map[string]int) string {
		best := ""
		for k, n := range m {
			if n > m[best] || n == m[best] && k < best {
				best = k
			}
		}
		return best
	}
	return top(counts["D"]), top(counts["L"]), nil
}
