package postgres

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
)

// What a restore plan reads (plan.Source), as store/sqlite reads it.

const dayMS = int64(24 * time.Hour / time.Millisecond)

// RestoreRates returns the measured restores of instance, and with fleet
// the fleet's newest perKind of each kind elsewhere, oldest first.
func (db *DB) RestoreRates(ctx context.Context, instance string, fleet bool, perKind int) ([]store.RestoreRate, error) {
	var out []store.RestoreRate
	var newest *int64
	if fleet {
		if err := db.pool.QueryRow(ctx, `SELECT MAX(at_utc) FROM restore`).Scan(&newest); err != nil {
			return nil, fmt.Errorf("store: restore rates: %w", err)
		}
	}
	for _, k := range []store.Kind{store.KindFull, store.KindDiff, store.KindLog} {
		var err error
		if out, err = db.readRestoreRates(ctx, out, ratesFrom+`WHERE i.name = $1 AND r.kind = $2 AND r.logical_mibps > 0`,
			store.InstanceName(instance), string(k)); err != nil {
			return nil, err
		}
		if newest != nil {
			if out, err = db.fleetRates(ctx, out, *newest, instance, k, max(perKind, 1)); err != nil {
				return nil, err
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}

// fleetRates appends the fleet's newest n measured restores of kind k on
// other instances: those of the newest day when there are n, else any.
func (db *DB) fleetRates(ctx context.Context, out []store.RestoreRate, newest int64, instance string, k store.Kind, n int) ([]store.RestoreRate, error) {
	const measured = `WHERE i.name <> $1 AND r.kind = $2 AND r.logical_mibps > 0 `
	day, err := db.readRestoreRates(ctx, nil, ratesFrom+measured+`AND r.at_utc >= $3 ORDER BY r.at_utc DESC, r.id DESC LIMIT $4`,
		store.InstanceName(instance), string(k), newest-dayMS, n)
	if err != nil || len(day) == n {
		return append(out, day...), err
	}
	return db.readRestoreRates(ctx, out, ratesFrom+measured+`ORDER BY r.at_utc DESC, r.id DESC LIMIT $3`, store.InstanceName(instance), string(k), n)
}

// RestoreRatesOf returns the rates of the measured restores among ids,
// oldest first.
func (db *DB) RestoreRatesOf(ctx context.Context, ids []int64) ([]store.RestoreRate, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	out, err := db.readRestoreRates(ctx, nil, ratesFrom+`WHERE r.id = ANY($1) AND r.logical_mibps > 0`, ids)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}

const ratesFrom = `FROM restore r JOIN instance i ON i.id = r.instance_id `

func (db *DB) readRestoreRates(ctx context.Context, out []store.RestoreRate, from string, args ...any) ([]store.RestoreRate, error) {
	rows, err := db.pool.Query(ctx, `SELECT r.id, i.name::text, r.database_name, r.kind, COALESCE(r.device_kind,''), r.logical_mibps,
		COALESCE(r.read_mibps,0), COALESCE(r.buffer_count,0), COALESCE(r.max_transfer_kib,0), COALESCE(r.backup_bytes,0),
		COALESCE(r.duration_s,0), r.at_utc `+from, args...)
	if err != nil {
		return nil, fmt.Errorf("store: restore rates: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r store.RestoreRate
		var at int64
		var kind string
		if err := rows.Scan(&r.ID, &r.Instance, &r.Database, &kind, &r.DeviceKind, &r.LogicalMiBps, &r.ReadMiBps, &r.BufferCount,
			&r.MaxTransferKiB, &r.Bytes, &r.DurationS, &at); err != nil {
			return nil, fmt.Errorf("store: restore rates: %w", err)
		}
		r.Kind, r.At = store.Kind(kind), store.UnixMs(at)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: restore rates: %w", err)
	}
	return out, nil
}

// FileFolders returns the folders where an instance keeps its databases'
// data and log files, as its own full backups record them.
func (db *DB) FileFolders(ctx context.Context, instance string) (data, log string, err error) {
	rows, err := db.pool.Query(ctx, `SELECT f.file_type, f.physical_name FROM backup_file f
		JOIN backup_set b ON b.id = f.backup_set_id JOIN instance i ON i.id = b.instance_id
		WHERE i.name = $1 AND b.type = 'D' ORDER BY b.finish_utc DESC LIMIT 2000`, store.InstanceName(instance))
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

// BackupSets returns one database's fulls and differentials and the log
// backups that finished at or after logsFrom, oldest first, with their
// media and files.
func (db *DB) BackupSets(ctx context.Context, instance, database string, logsFrom time.Time) ([]store.BackupSet, error) {
	from := int64(math.MinInt64)
	if !logsFrom.IsZero() {
		from = logsFrom.UnixMilli()
	}
	inst, name := store.InstanceName(instance), store.DatabaseName(database)
	rows, err := db.pool.Query(ctx, `SELECT b.id, i.name::text, b.database_name, b.backup_set_uuid,
		COALESCE(b.media_set_id,0), b.family_count, b.type, b.is_copy_only, b.is_damaged, b.has_backup_checksums,
		b.has_bulk_logged_data, b.first_lsn, b.last_lsn, b.checkpoint_lsn, b.database_backup_lsn, b.differential_base_lsn,
		b.differential_base_guid, b.fork_point_lsn, b.first_recovery_fork_guid, b.last_recovery_fork_guid, b.start_utc,
		b.finish_utc, b.utc_offset, COALESCE(b.backup_size,0), COALESCE(b.compressed_backup_size,0), b.software_build, b.server_name,
		b.machine_name, b.recovery_model, b.origin, b.family_guid
		FROM backup_set b JOIN instance i ON i.id = b.instance_id
		WHERE b.id IN (`+backupScope+`) ORDER BY b.finish_utc, b.id`, inst, name, from)
	if err != nil {
		return nil, fmt.Errorf("store: backup sets: %w", err)
	}
	var out []store.BackupSet
	idx := map[int64]int{}
	for rows.Next() {
		var b store.BackupSet
		var id, start, finish, copyOnly, damaged, checksums, bulk int64
		var offset *int64
		var origin string
		if err := rows.Scan(&id, &b.Instance, &b.Database, &b.UUID, &b.MediaSetID, &b.Families, &b.Type, &copyOnly,
			&damaged, &checksums, &bulk, &b.FirstLSN, &b.LastLSN, &b.CheckpointLSN, &b.DatabaseBackupLSN,
			&b.DiffBaseLSN, &b.DiffBaseGUID, &b.ForkPointLSN, &b.FirstForkGUID, &b.LastForkGUID, &start, &finish, &offset, &b.Size,
			&b.CompressedSize, &b.SoftwareBuild, &b.ServerName, &b.MachineName, &b.RecoveryModel, &origin, &b.FamilyGUID); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: backup sets: %w", err)
		}
		b.CopyOnly, b.Damaged, b.Checksums, b.BulkLogged = copyOnly != 0, damaged != 0, checksums != 0, bulk != 0
		b.Start, b.Finish = store.UnixMs(start), store.UnixMs(finish)
		b.Origin = store.Origin{File: origin}
		if offset != nil {
			o := int(*offset)
			b.UTCOffset = &o
		}
		idx[id] = len(out)
		out = append(out, b)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: backup sets: %w", err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	const scope = ` WHERE c.backup_set_id IN (` + backupScope + `)`
	media, err := db.pool.Query(ctx, `SELECT c.backup_set_id, c.family_sequence_number, c.mirror,
		COALESCE(c.device_type,0), c.physical_device_name FROM backup_media c`+scope+` ORDER BY c.backup_set_id,
		c.mirror, c.family_sequence_number`, inst, name, from)
	if err != nil {
		return nil, fmt.Errorf("store: backup media: %w", err)
	}
	for media.Next() {
		var id int64
		var m store.BackupMedia
		if err := media.Scan(&id, &m.Family, &m.Mirror, &m.DeviceType, &m.Device); err != nil {
			media.Close()
			return nil, fmt.Errorf("store: backup media: %w", err)
		}
		out[idx[id]].Media = append(out[idx[id]].Media, m)
	}
	media.Close()
	if err := media.Err(); err != nil {
		return nil, fmt.Errorf("store: backup media: %w", err)
	}
	files, err := db.pool.Query(ctx, `SELECT c.backup_set_id, c.logical_name, c.physical_name, c.file_type,
		COALESCE(c.file_size,0), c.filegroup FROM backup_file c`+scope+` ORDER BY c.backup_set_id, c.seq`, inst, name, from)
	if err != nil {
		return nil, fmt.Errorf("store: backup files: %w", err)
	}
	defer files.Close()
	for files.Next() {
		var id int64
		var f store.BackupFile
		if err := files.Scan(&id, &f.LogicalName, &f.PhysicalName, &f.Type, &f.Size, &f.Filegroup); err != nil {
			return nil, fmt.Errorf("store: backup files: %w", err)
		}
		out[idx[id]].Files = append(out[idx[id]].Files, f)
	}
	return out, files.Err()
}

// backupScope selects one database's backup sets: $1 the instance, $2 the
// database, $3 the earliest log backup's finish.
const backupScope = `SELECT b.id FROM backup_set b JOIN instance i ON i.id = b.instance_id
	WHERE i.name = $1 AND b.database_name = $2 AND b.type IN ('D', 'I', 'F', 'G', 'P', 'Q')
	UNION ALL SELECT b.id FROM backup_set b JOIN instance i ON i.id = b.instance_id
	WHERE i.name = $1 AND b.database_name = $2 AND b.type = 'L' AND b.finish_utc >= $3`

// BackupDatabases lists every (instance, database) with a backup history
// as "instance\x00database" keys, the instance in lower case.
func (db *DB) BackupDatabases(ctx context.Context) (map[string]bool, error) {
	rows, err := db.pool.Query(ctx, `SELECT DISTINCT i.name::text, b.database_name FROM backup_set b JOIN instance i ON i.id = b.instance_id`)
	if err != nil {
		return nil, fmt.Errorf("store: backup databases: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var inst, database string
		if err := rows.Scan(&inst, &database); err != nil {
			return nil, fmt.Errorf("store: backup databases: %w", err)
		}
		out[strings.ToLower(inst)+"\x00"+database] = true
	}
	return out, rows.Err()
}

// InstanceBackups returns each database of an instance with a backup
// history and its newest full, differential and log backup.
func (db *DB) InstanceBackups(ctx context.Context, instance string) ([]store.DatabaseBackups, error) {
	rows, err := db.pool.Query(ctx, `SELECT b.database_name,
			MAX(b.finish_utc) FILTER (WHERE b.type = 'D'), MAX(b.finish_utc) FILTER (WHERE b.type = 'I'),
			MAX(b.finish_utc) FILTER (WHERE b.type = 'L')
		FROM backup_set b JOIN instance i ON i.id = b.instance_id WHERE i.name = $1
		GROUP BY b.database_name ORDER BY b.database_name COLLATE "C"`, store.InstanceName(instance))
	if err != nil {
		return nil, fmt.Errorf("store: instance backups: %w", err)
	}
	out, err := collect(rows, func(row pgx.CollectableRow) (store.DatabaseBackups, error) {
		var d store.DatabaseBackups
		var full, diff, log *int64
		err := row.Scan(&d.Database, &full, &diff, &log)
		at := func(ms *int64) time.Time {
			if ms == nil {
				return time.Time{}
			}
			return store.UnixMs(*ms)
		}
		d.LastFull, d.LastDiff, d.LastLog = at(full), at(diff), at(log)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: instance backups: %w", err)
	}
	return out, nil
}
