package postgres

import (
	"fmt"
	"strings"

	"github.com/restorewatch/restorewatch/store"
)

// backupSet writes one backup set of the batch. A set already stored (same
// instance and backup_set_uuid) is not added again, but media families and
// files it did not have yet are: an export splits one set over several
// rows, which may arrive in separate batches or imports.
func (w *batchWriter) backupSet(b *store.BackupSet) error {
	inst, err := w.instanceID(b.Instance)
	if err != nil {
		return err
	}
	w.carried++
	var setID int64
	var added bool
	// xmax = 0 tells a row this statement inserted from one it found.
	err = w.tx.QueryRow(w.ctx, `INSERT INTO backup_set (instance_id, database_name, backup_set_uuid, media_set_id,
	family_count, type, is_copy_only, is_damaged, has_backup_checksums, has_bulk_logged_data, first_lsn, last_lsn,
	checkpoint_lsn, database_backup_lsn, differential_base_lsn, differential_base_guid, fork_point_lsn,
	first_recovery_fork_guid, last_recovery_fork_guid, start_utc, finish_utc, utc_offset, backup_size, compressed_backup_size,
	software_build, server_name, machine_name, recovery_model, origin, family_guid)
	VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27,$28,$29,$30)
	ON CONFLICT (instance_id, backup_set_uuid) DO UPDATE SET instance_id = backup_set.instance_id
	RETURNING id, xmax = 0`,
		inst, b.Database, b.UUID, nonZero(b.MediaSetID), b.Families, b.Type, flag(b.CopyOnly), flag(b.Damaged), flag(b.Checksums),
		flag(b.BulkLogged), b.FirstLSN, b.LastLSN, b.CheckpointLSN, b.DatabaseBackupLSN, b.DiffBaseLSN,
		strings.ToUpper(b.DiffBaseGUID), b.ForkPointLSN, strings.ToUpper(b.FirstForkGUID), strings.ToUpper(b.LastForkGUID),
		b.Start.UnixMilli(), b.Finish.UnixMilli(), intPtr(b.UTCOffset), nonZero(b.Size), nonZero(b.CompressedSize), b.SoftwareBuild,
		b.ServerName, b.MachineName, b.RecoveryModel, b.Origin.String(), strings.ToUpper(strings.Trim(b.FamilyGUID, "{} "))).
		Scan(&setID, &added)
	if err != nil {
		return fmt.Errorf("backup set %s: %w", b.Origin, err)
	}
	if added {
		w.added++
	}
	w.members.BackupSet(inst, b)
	for _, m := range b.Media {
		if _, err := w.tx.Exec(w.ctx, `INSERT INTO backup_media (backup_set_id, family_sequence_number, mirror,
			device_type, physical_device_name) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
			setID, m.Family, m.Mirror, nonZero(int64(m.DeviceType)), m.Device); err != nil {
			return fmt.Errorf("backup media %s: %w", b.Origin, err)
		}
	}
	for _, f := range b.Files {
		if _, err := w.tx.Exec(w.ctx, `INSERT INTO backup_file (backup_set_id, logical_name, physical_name, file_type,
			file_size, filegroup) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
			setID, f.LogicalName, f.PhysicalName, f.Type, nonZero(f.Size), f.Filegroup); err != nil {
			return fmt.Errorf("backup file %s: %w", b.Origin, err)
		}
	}
	return nil
}

// flushMembers records the availability-group memberships the batch's sets
// and snapshots named, once per database.
func (w *batchWriter) flushMembers() error {
	for k, m := range w.members {
		if _, err := w.tx.Exec(w.ctx, `INSERT INTO ag_database (instance_id, database_name, ag_name, listener, group_database_id, observed_utc)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (instance_id, database_name, ag_name) DO UPDATE
			SET observed_utc = GREATEST(ag_database.observed_utc, excluded.observed_utc),
			listener = CASE WHEN excluded.listener <> '' THEN excluded.listener ELSE ag_database.listener END,
			group_database_id = CASE WHEN excluded.group_database_id <> '' THEN excluded.group_database_id ELSE ag_database.group_database_id END`,
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
	if _, err := w.tx.Exec(w.ctx, `DELETE FROM ag_database WHERE instance_id = $1 AND observed_utc < $2`, id, at); err != nil {
		return fmt.Errorf("availability groups of %s: %w", h.Instance, err)
	}
	return nil
}
