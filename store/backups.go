package store

import (
	"math"
	"strings"
	"time"
)

// BackupSet is one msdb backupset row with its media families and files:
// what a restore plan is built from. Unlike the restore records, its times
// are real instants (UTC): every source converts with backupset.time_zone.
type BackupSet struct {
	Instance string `json:"instance"` // the instance whose msdb recorded the backup
	Database string `json:"database"`
	UUID     string `json:"backup_set_uuid"`
	// MediaSetID is msdb's media_set_id (or dbatools' BackupSetId when the
	// source has no uuid); informational.
	MediaSetID int64 `json:"media_set_id"`
	// Families is backupmediaset.media_family_count, the stripes a restore
	// must name; 0 when the source does not say.
	Families          int       `json:"families"`
	Type              string    `json:"type"` // D, I, L, F, G, P, Q
	CopyOnly          bool      `json:"is_copy_only"`
	Damaged           bool      `json:"is_damaged"`
	Checksums         bool      `json:"has_backup_checksums"`
	BulkLogged        bool      `json:"has_bulk_logged_data"`
	FirstLSN          string    `json:"first_lsn"`
	LastLSN           string    `json:"last_lsn"`
	CheckpointLSN     string    `json:"checkpoint_lsn"`
	DatabaseBackupLSN string    `json:"database_backup_lsn"`
	DiffBaseLSN       string    `json:"differential_base_lsn"`
	DiffBaseGUID      string    `json:"differential_base_guid"`
	ForkPointLSN      string    `json:"fork_point_lsn"`
	FirstForkGUID     string    `json:"first_recovery_fork_guid"`
	LastForkGUID      string    `json:"last_recovery_fork_guid"`
	Start             time.Time `json:"backup_start"`  // UTC
	Finish            time.Time `json:"backup_finish"` // UTC
	// UTCOffset is the backup host's offset in minutes (time_zone × 15),
	// nil when unknown: STOPAT is read in that server's local time.
	UTCOffset      *int   `json:"utc_offset"`
	Size           int64  `json:"backup_size"`            // 0 = unknown
	CompressedSize int64  `json:"compressed_backup_size"` // 0 = unknown
	SoftwareBuild  string `json:"software_build"`         // "15.0.4153"
	ServerName     string `json:"server_name"`
	MachineName    string `json:"machine_name"`
	RecoveryModel  string `json:"recovery_model"`
	// FamilyGUID is backupset.family_guid, the database's identity since
	// it was created ("" = unknown); AvailabilityGroup the AG the source
	// says the database belonged to ("" = none said).
	FamilyGUID        string `json:"family_guid,omitempty"`
	AvailabilityGroup string `json:"availability_group,omitempty"`
	// AGListener and GroupDatabaseID complete AvailabilityGroup where the
	// collector read the membership (sys.dm_hadr_database_replica_states).
	AGListener      string        `json:"ag_listener,omitempty"`
	GroupDatabaseID string        `json:"group_database_id,omitempty"`
	Media           []BackupMedia `json:"media"`
	Files           []BackupFile  `json:"files"`
	Origin          Origin        `json:"-"`
}

// BackupMedia is one backupmediafamily row: one stripe (family) of the set,
// or a mirror of one.
type BackupMedia struct {
	Family     int    `json:"family_sequence_number"`
	Mirror     int    `json:"mirror"`
	DeviceType int    `json:"device_type"` // 2 disk, 5 tape, 7 virtual device, 9 URL; 0 unknown
	Device     string `json:"physical_device_name"`
}

// BackupFile is one backupfile row: a database file the set holds.
type BackupFile struct {
	LogicalName  string `json:"logical_name"`
	PhysicalName string `json:"physical_name"`
	Type         string `json:"file_type"` // D data, L log, F full-text catalog / FILESTREAM
	Size         int64  `json:"file_size"`
	Filegroup    string `json:"filegroup"`
}

// Validate reports whether the set can be kept: a plan needs its identity,
// type, LSN range and times.
func (b *BackupSet) Validate() error {
	switch {
	case strings.TrimSpace(b.Instance) == "":
		return Errorf(EINVALID, "backup set: instance is empty")
	case b.Database == "":
		return Errorf(EINVALID, "backup set: database_name is empty")
	case strings.TrimSpace(b.UUID) == "":
		return Errorf(EINVALID, "backup set: backup_set_uuid is empty")
	case !strings.Contains("DILFGPQ", b.Type) || len(b.Type) != 1:
		return Errorf(EINVALID, "backup set: unknown type %q (want D, I, L, F, G, P or Q)", b.Type)
	case b.Finish.IsZero() || b.Start.IsZero():
		return Errorf(EINVALID, "backup set: backup_start_date or backup_finish_date is empty")
	case b.Finish.Before(b.Start):
		return Errorf(EINVALID, "backup set: finishes before it starts")
	case b.Families < 0 || b.Families > MaxMediaFamilies:
		return Errorf(EINVALID, "backup set: media_family_count %d, SQL Server's limit is %d", b.Families, MaxMediaFamilies)
	case len(b.Media) > maxDevices:
		return Errorf(EINVALID, "backup set: %d media families and mirrors, at most %d", len(b.Media), maxDevices)
	case len(b.Files) > MaxBackupFiles:
		return Errorf(EINVALID, "backup set: %d files, SQL Server's limit is %d", len(b.Files), MaxBackupFiles)
	}
	if err := firstError(CheckInstant("backup_start_date", b.Start), CheckInstant("backup_finish_date", b.Finish),
		checkOffset("time_zone", b.UTCOffset)); err != nil {
		return Errorf(EINVALID, "backup set: %s", ErrorMessage(err))
	}
	for name, v := range map[string]*string{"first_lsn": &b.FirstLSN, "last_lsn": &b.LastLSN, "checkpoint_lsn": &b.CheckpointLSN,
		"database_backup_lsn": &b.DatabaseBackupLSN, "differential_base_lsn": &b.DiffBaseLSN, "fork_point_lsn": &b.ForkPointLSN} {
		if *v == "" && name != "first_lsn" && name != "last_lsn" {
			continue
		}
		c, err := CanonicalLSN(*v)
		if err != nil {
			return Errorf(EINVALID, "backup set: %s: %v", name, err)
		}
		*v = c
	}
	if err := b.checkLSNs(); err != nil {
		return err
	}
	families := map[int]bool{}
	for _, m := range b.Media {
		if strings.TrimSpace(m.Device) == "" {
			return Errorf(EINVALID, "backup set: a media family has no physical_device_name")
		}
		families[m.Family] = true
	}
	if len(families) > MaxMediaFamilies {
		return Errorf(EINVALID, "backup set: %d media families, SQL Server's limit is %d", len(families), MaxMediaFamilies)
	}
	return nil
}

// checkLSNs holds a set's canonical LSNs to what SQL Server's documented
// behaviour makes possible (backupset: a backup holds the log from first_lsn
// up to last_lsn, and redo starts at checkpoint_lsn, inside it): the first
// no later than the last, the checkpoint no later than the last, a data
// backup's checkpoint no earlier than its first LSN. database_backup_lsn is
// not held to anything: real msdb histories record log backups taken while
// a full ran, and fulls, whose database_backup_lsn is after their own
// last_lsn (testdata/issue39/README.md); such a row is imported and the
// plan's chain decides whether it is used, saying why not.
func (b *BackupSet) checkLSNs() error {
	after := func(a, c string) bool { return a != "" && a != "0" && c != "" && CompareLSN(a, c) > 0 }
	switch {
	case after(b.FirstLSN, b.LastLSN):
		return Errorf(EINVALID, "backup set: first_lsn %s is after last_lsn %s", b.FirstLSN, b.LastLSN)
	case after(b.CheckpointLSN, b.LastLSN):
		return Errorf(EINVALID, "backup set: checkpoint_lsn %s is after last_lsn %s", b.CheckpointLSN, b.LastLSN)
	case (b.Type == "D" || b.Type == "I") && after(b.FirstLSN, b.CheckpointLSN):
		return Errorf(EINVALID, "backup set: a data backup's checkpoint_lsn %s is before its first_lsn %s", b.CheckpointLSN, b.FirstLSN)
	}
	return nil
}

// NoLogs is the logsFrom of BackupSets that leaves every log backup out.
var NoLogs = time.UnixMilli(math.MaxInt64)

// DatabaseBackups is one database of an instance's backup history: when its
// newest full, differential and log backups finished (zero: none of that
// type).
type DatabaseBackups struct {
	Database                    string
	LastFull, LastDiff, LastLog time.Time
}

// AGMembership is one database of an instance that is a replica of an
// availability group database, as the collector reads it from
// sys.dm_hadr_database_replica_states: GroupDatabaseID identifies the AG
// database on every replica. The collector tags the database's backup
// sets with it (BackupSet.AvailabilityGroup …), and an import records
// it: pushed from another zone, it travels with them.
type AGMembership struct {
	Database        string `json:"database"`
	AG              string `json:"availability_group"`
	Listener        string `json:"listener"`
	GroupDatabaseID string `json:"group_database_id"`
	// Distributed marks a distributed availability group (or a Managed
	// Instance link): its replicas are availability groups. The collector
	// records the database's own AG, never this one.
	Distributed bool `json:"distributed,omitempty"`
}

// Replicas is where one database's backup history lives: the instances
// whose msdb recorded its backups (Instances, the named one first when the
// name was an instance), the database's name as stored, and how they were
// found to be one database (Via; "" when it is one instance's history).
type Replicas struct {
	Instances []string `json:"instances"`
	Database  string   `json:"database"`
	Via       string   `json:"via,omitempty"`
	// Candidates are instances that recorded backups of a database of the
	// same name when nothing recorded says they are its replicas (no
	// availability-group membership, no family GUID in the history named):
	// a plan merges those whose LSNs prove they continue its chain
	// (plan.ProveByLSN), and says so.
	Candidates []string `json:"candidates,omitempty"`
}
