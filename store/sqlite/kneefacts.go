package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/restorewatch/restorewatch/store"
)

// BackupOfDevices returns the newest full backup (type D) written to the
// first of devices, or nil when the backup history has none: a striped
// backup's files all name the same set.
func (db *DB) BackupOfDevices(ctx context.Context, devices []string) (*store.DeviceBackup, error) {
	if len(devices) == 0 {
		return nil, nil
	}
	var b store.DeviceBackup
	var id int64
	var size, comp sql.NullInt64
	err := db.read.QueryRowContext(ctx, `SELECT s.id, i.name, s.database_name, s.backup_size, s.compressed_backup_size, s.family_count
		FROM backup_media m JOIN backup_set s ON s.id = m.backup_set_id JOIN instance i ON i.id = s.instance_id
		WHERE m.physical_device_name = ? COLLATE NOCASE AND s.type = 'D'
		ORDER BY s.finish_utc DESC LIMIT 1`, strings.TrimSpace(devices[0])).
		Scan(&id, &b.Instance, &b.Database, &size, &comp, &b.Families)
	switch {
	case err == sql.ErrNoRows:
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("store: backup of %s: %w", devices[0], err)
	}
	b.Size, b.CompressedSize = size.Int64, comp.Int64
	err = db.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM backup_file WHERE backup_set_id = ? AND file_type IN ('S', 'F'))`,
		id).Scan(&b.Filestream)
	if err != nil {
		return nil, fmt.Errorf("store: backup of %s: %w", devices[0], err)
	}
	return &b, nil
}
