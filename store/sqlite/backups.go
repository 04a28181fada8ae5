package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// backupSet writes one backup set of the batch and reports whether it was
// new. A set already stored (same instance and backup_set_uuid) is not
// added again, but media families and files it did not have yet are: an
// export splits one set over several rows, which may arrive in separate
// batches or imports.
func (w *batchWriter) backupSet(b *store.BackupSet) (added bool, err error) {
	inst, err := w.instanceID(b.Instance)
	if err != nil {
		return false, err
	}
	ins, err := w.stmt(insertBackupSet)
	if err != nil {
		return false, err
	}
	res, err := ins.ExecContext(w.ctx, inst, b.Database, b.UUID, nullZero(b.MediaSetID), b.Families, b.Type, b.CopyOnly, b.Damaged, b.Checksums,
		b.BulkLogged, b.FirstLSN, b.LastLSN, b.CheckpointLSN, b.DatabaseBackupLSN, b.DiffBaseLSN,
		strings.ToUpper(b.DiffBaseGUID), b.ForkPointLSN, strings.ToUpper(b.FirstForkGUID), strings.ToUpper(b.LastForkGUID),
		ms(b.Start), ms(b.Finish), nullInt(b.UTCOffset), nullZero(b.Size), nullZero(b.CompressedSize), b.SoftwareBuild, b.ServerName,
		b.MachineName, b.RecoveryModel, b.Origin.String(), strings.ToUpper(strings.Trim(b.FamilyGUID, "{} ")))
	if err != nil {
		return false, fmt.Errorf("backup set %s: %w", b.Origin, err)
	}
	w.members.BackupSet(inst, b)
	n, _ := res.RowsAffected()
	sel, err := w.stmt(selectBackupSetID)
	if err != nil {
		return false, err
	}
	var setID int64
	if err := sel.QueryRowContext(w.ctx, inst, b.UUID).Scan(&setID); err != nil {
		return false, fmt.Errorf("backup set %s: %w", b.Origin, err)
	}
	media, err := w.stmt(insertBackupMedia)
	if err != nil {
		return false, err
	}
	for _, m := range b.Media {
		if _, err := media.ExecContext(w.ctx, setID, m.Family, m.Mirror, nullZero(int64(m.DeviceType)), m.Device); err != nil {
			return false, fmt.Errorf("backup media %s: %w", b.Origin, err)
		}
	}
	files, err := w.stmt(insertBackupFile)
	if err != nil {
		return false, err
	}
	for _, f := range b.Files {
		if _, err := files.ExecContext(w.ctx, setID, f.LogicalName, f.PhysicalName, f.Type, nullZero(f.Size), f.Filegroup); err != nil {
			return false, fmt.Errorf("backup file %s: %w", b.Origin, err)
		}
	}
	return n > 0, nil
}

// flushMembers records the availability-group memberships the batch's sets
// named, once per database: without a group database id when only the AG's
// name is known (an import), which a collector's later reading completes.
func (w *batchWriter) flushMembers() error {
	for k, m := range w.members {
		if _, err := w.tx.ExecContext(w.ctx, `INSERT INTO ag_database (instance_id, database_name, ag_name, listener, group_database_id, observed_utc)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET observed_utc = MAX(observed_utc, excluded.observed_utc),
			listener = CASE WHEN excluded.listener <> '' THEN excluded.listener ELSE listener END,
			group_database_id = CASE WHEN excluded.group_database_id <> '' THEN excluded.group_database_id ELSE group_database_id END`,
			k.Instance, k.Database, k.AG, m.Listener, m.GroupDB, m.At); err != nil {
			return fmt.Errorf("availability group %s: %w", k.AG, err)
		}
	}
	clear(w.members)
	return nil
}

// currentMembers keeps the instance's availability-group membership as the
// snapshot read it (row.Members.Snapshot): those recorded before it that it
// no longer lists are forgotten.
func (w *batchWriter) currentMembers(id int64, h *store.HostSnapshot) error {
	at := w.members.Snapshot(id, h)
	if _, err := w.tx.ExecContext(w.ctx, `DELETE FROM ag_database WHERE instance_id = ? AND observed_utc < ?`, id, at); err != nil {
		return fmt.Errorf("availability groups of %s: %w", h.Instance, err)
	}
	return nil
}

const (
	insertBackupSet = `INSERT INTO backup_set (instance_id, database_name, backup_set_uuid, media_set_id,
	family_count, type, is_copy_only, is_damaged, has_backup_checksums, has_bulk_logged_data, first_lsn, last_lsn,
	checkpoint_lsn, database_backup_lsn, differential_base_lsn, differential_base_guid, fork_point_lsn,
	first_recovery_fork_guid, last_recovery_fork_guid, start_utc, finish_utc, utc_offset, backup_size, compressed_backup_size,
	software_build, server_name, machine_name, recovery_model, origin, family_guid)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (instance_id, backup_set_uuid) DO NOTHING`
	selectBackupSetID = `SELECT id FROM backup_set WHERE instance_id = ? AND backup_set_uuid = ?`
	insertBackupMedia = `INSERT INTO backup_media (backup_set_id, family_sequence_number, mirror,
	device_type, physical_device_name) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
	insertBackupFile = `INSERT INTO backup_file (backup_set_id, logical_name, physical_name, file_type,
	file_size, filegroup) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
)

// BackupSets returns the backup sets of one database recorded on one
// instance, oldest first, with media families and files: every full and
// differential, and the log backups that finished at or after logsFrom
// (zero: all of them; NoLogs: none). A restore plan reads its base first and
// then only the logs that can follow it (plan.Make): a log-shipped
// database's whole history is tens of thousands of log backups.
func (db *DB) BackupSets(ctx context.Context, instance, database string, logsFrom time.Time) ([]store.BackupSet, error) {
	from := int64(math.MinInt64)
	if !logsFrom.IsZero() {
		from = logsFrom.UnixMilli()
	}
	rows, err := db.read.QueryContext(ctx, `SELECT b.id, i.name, b.database_name, b.backup_set_uuid,
		COALESCE(b.media_set_id,0), b.family_count, b.type, b.is_copy_only, b.is_damaged, b.has_backup_checksums,
		b.has_bulk_logged_data, b.first_lsn, b.last_lsn, b.checkpoint_lsn, b.database_backup_lsn, b.differential_base_lsn,
		b.differential_base_guid, b.fork_point_lsn, b.first_recovery_fork_guid, b.last_recovery_fork_guid, b.start_utc,
		b.finish_utc, b.utc_offset, COALESCE(b.backup_size,0), COALESCE(b.compressed_backup_size,0), b.software_build, b.server_name,
		b.machine_name, b.recovery_model, b.origin, b.family_guid
		FROM backup_set b JOIN instance i ON i.id = b.instance_id
		WHERE b.id IN (`+backupScope+`) ORDER BY b.finish_utc, b.id`, backupScopeArgs(instance, database, from)...)
	if err != nil {
		return nil, fmt.Errorf("store: backup sets: %w", err)
	}
	defer rows.Close()
	var out []store.BackupSet
	idx := map[int64]int{}
	for rows.Next() {
		var b store.BackupSet
		var id, start, finish int64
		var offset sql.NullInt64
		var origin string
		if err := rows.Scan(&id, &b.Instance, &b.Database, &b.UUID, &b.MediaSetID, &b.Families, &b.Type, &b.CopyOnly,
			&b.Damaged, &b.Checksums, &b.BulkLogged, &b.FirstLSN, &b.LastLSN, &b.CheckpointLSN, &b.DatabaseBackupLSN,
			&b.DiffBaseLSN, &b.DiffBaseGUID, &b.ForkPointLSN, &b.FirstForkGUID, &b.LastForkGUID, &start, &finish, &offset, &b.Size,
			&b.CompressedSize, &b.SoftwareBuild, &b.ServerName, &b.MachineName, &b.RecoveryModel, &origin, &b.FamilyGUID); err != nil {
			return nil, fmt.Errorf("store: backup sets: %w", err)
		}
		b.Start, b.Finish = store.UnixMs(start), store.UnixMs(finish)
		b.Origin = store.Origin{File: origin}
		if offset.Valid {
			o := int(offset.Int64)
			b.UTCOffset = &o
		}
		idx[id] = len(out)
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: backup sets: %w", err)
	}
	rows.Close()
	if len(out) == 0 {
		return nil, nil
	}
	if err := db.backupChildren(ctx, instance, database, from, out, idx); err != nil {
		return nil, err
	}
	return out, nil
}

// backupScope selects the ids of the sets BackupSets reads, each part a
// seek on backup_set_type (migration 0026): the database's other sets by
// type, its logs from a time on.
const backupScope = `SELECT b.id FROM backup_set b JOIN instance i ON i.id = b.instance_id
	WHERE i.name = ? AND b.database_name = ? AND b.type IN ('D', 'I', 'F', 'G', 'P', 'Q')
	UNION ALL SELECT b.id FROM backup_set b JOIN instance i ON i.id = b.instance_id
	WHERE i.name = ? AND b.database_name = ? AND b.type = 'L' AND b.finish_utc >= ?`

func backupScopeArgs(instance, database string, from int64) []any {
	inst, name := store.InstanceName(instance), store.DatabaseName(database)
	return []any{inst, name, inst, name, from}
}

// backupChildren adds the media families and files of the sets BackupSets
// read (the same scope: idx holds them all).
func (db *DB) backupChildren(ctx context.Context, instance, database string, from int64, out []store.BackupSet, idx map[int64]int) error {
	const scope = ` WHERE c.backup_set_id IN (` + backupScope + `)`
	args := backupScopeArgs(instance, database, from)
	rows, err := db.read.QueryContext(ctx, `SELECT c.backup_set_id, c.family_sequence_number, c.mirror,
		COALESCE(c.device_type,0), c.physical_device_name FROM backup_media c`+scope+` ORDER BY c.backup_set_id,
		c.mirror, c.family_sequence_number`, args...)
	if err != nil {
		return fmt.Errorf("store: backup media: %w", err)
	}
	for rows.Next() {
		var id int64
		var m store.BackupMedia
		if err := rows.Scan(&id, &m.Family, &m.Mirror, &m.DeviceType, &m.Device); err != nil {
			rows.Close()
			return fmt.Errorf("store: backup media: %w", err)
		}
		out[idx[id]].Media = append(out[idx[id]].Media, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: backup media: %w", err)
	}
	rows, err = db.read.QueryContext(ctx, `SELECT c.backup_set_id, c.logical_name, c.physical_name, c.file_type,
		COALESCE(c.file_size,0), c.filegroup FROM backup_file c`+scope+` ORDER BY c.backup_set_id, c.rowid`, args...)
	if err != nil {
		return fmt.Errorf("store: backup files: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var f store.BackupFile
		if err := rows.Scan(&id, &f.LogicalName, &f.PhysicalName, &f.Type, &f.Size, &f.Filegroup); err != nil {
			return fmt.Errorf("store: backup files: %w", err)
		}
		out[idx[id]].Files = append(out[idx[id]].Files, f)
	}
	return rows.Err()
}

// BackupDatabases lists every (instance, database) with a backup history,
// as "instance\x00database" keys with the instance name as stored.
func (db *DB) BackupDatabases(ctx context.Context) (map[string]bool, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT DISTINCT i.name, b.database_name FROM backup_set b JOIN instance i ON i.id = b.instance_id`)
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

// InstanceBackups lists the databases an instance's backup history holds,
// by name, each with its newest backups: what a restore plan can start
// from, for an instance known only by its backups (a production server
// whose databases are restored elsewhere) as for one with restores. It
// reads backup_set_type by seeks, one per database and type, whatever the
// length of the history (a log-shipped database keeps tens of thousands of
// log backups).
func (db *DB) InstanceBackups(ctx context.Context, instance string) ([]store.DatabaseBackups, error) {
	rows, err := db.read.QueryContext(ctx, `WITH RECURSIVE
		inst(id) AS (SELECT id FROM instance WHERE name = ?),
		dbs(name) AS (
			SELECT (SELECT MIN(database_name) FROM backup_set, inst WHERE instance_id = inst.id)
			UNION ALL
			SELECT (SELECT MIN(database_name) FROM backup_set, inst WHERE instance_id = inst.id AND database_name > dbs.name)
			FROM dbs WHERE dbs.name IS NOT NULL)
		SELECT dbs.name,
			(SELECT MAX(finish_utc) FROM backup_set, inst WHERE instance_id = inst.id AND database_name = dbs.name AND type = 'D'),
			(SELECT MAX(finish_utc) FROM backup_set, inst WHERE instance_id = inst.id AND database_name = dbs.name AND type = 'I'),
			(SELECT MAX(finish_utc) FROM backup_set, inst WHERE instance_id = inst.id AND database_name = dbs.name AND type = 'L')
		FROM dbs WHERE dbs.name IS NOT NULL`, store.InstanceName(instance))
	if err != nil {
		return nil, fmt.Errorf("store: instance backups: %w", err)
	}
	defer rows.Close()
	var out []store.DatabaseBackups
	at := func(ms sql.NullInt64) time.Time {
		if !ms.Valid {
			return time.Time{}
		}
		return store.UnixMs(ms.Int64)
	}
	for rows.Next() {
		var d store.DatabaseBackups
		var full, diff, log sql.NullInt64
		if err := rows.Scan(&d.Database, &full, &diff, &log); err != nil {
			return nil, fmt.Errorf("store: instance backups: %w", err)
		}
		d.LastFull, d.LastDiff, d.LastLog = at(full), at(diff), at(log)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: instance backups: %w", err)
	}
	return out, nil
}
