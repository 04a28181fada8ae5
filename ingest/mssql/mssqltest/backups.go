package mssqltest

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
	"github.com/restorewatch/restorewatch/store"
)

// The backup history an instance answers backup_history.sql with: msdb's
// backupset rows (ids 1, 2, … in the order added), their stripes and, for
// fulls, their files. Kept beside the Instance rather than in it so the
// source's test double lives in one file.
var backups = struct {
	sync.Mutex
	m  map[*Instance][]store.BackupSet
	ag map[*Instance][]store.AGMembership
	// noDefinitions are the instances whose login lacks VIEW ANY
	// DEFINITION: catalog views show it no row.
	noDefinitions map[*Instance]bool
}{m: map[*Instance][]store.BackupSet{}, ag: map[*Instance][]store.AGMembership{}, noDefinitions: map[*Instance]bool{}}

// WithoutViewDefinition makes the collector's login lack VIEW ANY
// DEFINITION: sys.availability_group_listeners shows it nothing.
func (in *Instance) WithoutViewDefinition() {
	backups.Lock()
	defer backups.Unlock()
	backups.noDefinitions[in] = true
}

// SetAvailability replaces the instance's availability-group databases
// (a database removed from its AG, a replica evicted).
func (in *Instance) SetAvailability(ms ...store.AGMembership) {
	backups.Lock()
	defer backups.Unlock()
	backups.ag[in] = append([]store.AGMembership(nil), ms...)
}

// AddAvailability makes the instance a replica of availability-group
// databases, as sys.dm_hadr_database_replica_states shows them.
func (in *Instance) AddAvailability(ms ...store.AGMembership) {
	backups.Lock()
	defer backups.Unlock()
	backups.ag[in] = append(backups.ag[in], ms...)
}

// AddBackups appends backup sets to the instance's msdb. Times are UTC;
// msdb holds them in the set's own offset (UTCOffset, else the instance's),
// with time_zone saying which.
func (in *Instance) AddBackups(sets ...store.BackupSet) {
	backups.Lock()
	defer backups.Unlock()
	backups.m[in] = append(backups.m[in], sets...)
}

// ResetBackups empties the instance's backup history, as a rebuilt msdb
// whose identity restarts.
func (in *Instance) ResetBackups() {
	backups.Lock()
	defer backups.Unlock()
	delete(backups.m, in)
}

func (in *Instance) backupSets() []store.BackupSet {
	backups.Lock()
	defer backups.Unlock()
	return append([]store.BackupSet(nil), backups.m[in]...)
}

// localOf is a set's time as msdb holds it, and its time_zone.
func (in *Instance) localOf(b store.BackupSet, t time.Time) (time.Time, any) {
	off := in.offset
	if b.UTCOffset != nil {
		off = *b.UTCOffset
	}
	return t.Add(time.Duration(off) * time.Minute), int64(off / 15)
}

// backupPart answers backup_history.sql's queries.
func (in *Instance) backupPart(name string, p paramSet) ([]tdstest.ResultSet, error) {
	sets := in.backupSets()
	wm, upto := p.int("@watermark"), p.int("@upto")
	switch name {
	case "backup_history/check":
		rs := tdstest.ResultSet{Columns: []tdstest.Column{col("min_id", tdstest.Int, 0), col("max_id", tdstest.Int, 0),
			col("watermark_date", tdstest.DateTime, 0)}}
		var lo, hi, at any
		if len(sets) > 0 {
			lo, hi = int64(1), int64(len(sets))
		}
		if wm >= 1 && wm <= int64(len(sets)) {
			at, _ = in.localOf(sets[wm-1], sets[wm-1].Finish)
			at = roundDatetime(at.(time.Time))
		}
		rs.Rows = [][]any{{lo, hi, at}}
		return []tdstest.ResultSet{rs}, nil
	case "backup_history/rows":
		rs := tdstest.ResultSet{Columns: backupColumns}
		for i, b := range sets {
			id := int64(i + 1)
			if id <= wm || id > upto || int64(len(rs.Rows)) >= p.int("@batch") {
				continue
			}
			start, tz := in.localOf(b, b.Start)
			finish, _ := in.localOf(b, b.Finish)
			var devs []string
			var devType any
			for _, m := range b.Media {
				if m.Mirror == 0 {
					devs = append(devs, m.Device)
					devType = int64(m.DeviceType)
				}
			}
			var major, minor, build any
			if v := strings.Split(b.SoftwareBuild, "."); len(v) == 3 {
				a, _ := strconv.Atoi(v[0])
				c, _ := strconv.Atoi(v[1])
				d, _ := strconv.Atoi(v[2])
				major, minor, build = int64(a), int64(c), int64(d)
			}
			rs.Rows = append(rs.Rows, []any{id, nv(b.UUID), b.Database, nz(b.MediaSetID), int64(b.Families), b.Type, b.CopyOnly,
				b.Damaged, b.Checksums, b.BulkLogged, nv(b.FirstLSN), nv(b.LastLSN), nv(b.CheckpointLSN), nv(b.DatabaseBackupLSN),
				nv(b.DiffBaseLSN), nv(b.DiffBaseGUID), nv(b.ForkPointLSN), nv(b.FirstForkGUID), nv(b.LastForkGUID),
				roundDatetime(start), roundDatetime(finish), tz, nz(b.Size), nz(b.CompressedSize), major, minor, build,
				nv(b.ServerName), nv(b.MachineName), nv(b.RecoveryModel), devType, nv(strings.Join(devs, "|")), nv(b.FamilyGUID)})
		}
		return []tdstest.ResultSet{rs}, nil
	case "backup_history/availability":
		backups.Lock()
		ms := append([]store.AGMembership(nil), backups.ag[in]...)
		hidden := backups.noDefinitions[in]
		backups.Unlock()
		// As the query orders them: by database, its own AG before a
		// distributed one, then by name.
		slices.SortStableFunc(ms, func(a, b store.AGMembership) int {
			if c := strings.Compare(a.Database, b.Database); c != 0 {
				return c
			}
			if a.Distributed != b.Distributed {
				if a.Distributed {
					return 1
				}
				return -1
			}
			return strings.Compare(a.AG, b.AG)
		})
		rs := tdstest.ResultSet{Columns: []tdstest.Column{col("ag_name", tdstest.NVarChar, 128), col("database_name", tdstest.NVarChar, 128),
			col("group_database_id", tdstest.UniqueIdentifier, 0), col("listener", tdstest.NVarChar, 63),
			col("is_distributed", tdstest.Int, 0), col("can_view_definition", tdstest.Int, 0)}}
		for _, m := range ms {
			listener, canView := nv(m.Listener), int64(1)
			if hidden {
				listener, canView = nil, 0
			}
			dist := int64(0)
			if m.Distributed {
				dist = 1
			}
			rs.Rows = append(rs.Rows, []any{m.AG, m.Database, nv(m.GroupDatabaseID), listener, dist, canView})
		}
		return []tdstest.ResultSet{rs}, nil
	case "backup_history/files":
		rs := tdstest.ResultSet{Columns: []tdstest.Column{col("backup_set_id", tdstest.Int, 0), col("logical_name", tdstest.NVarChar, 128),
			col("physical_name", tdstest.NVarChar, 260), col("file_type", tdstest.Char, 1), numeric("file_size", 20),
			col("filegroup_name", tdstest.NVarChar, 128)}}
		for i, b := range sets {
			id := int64(i + 1)
			if id <= wm || id > upto || b.Type != "D" {
				continue
			}
			for _, f := range b.Files {
				rs.Rows = append(rs.Rows, []any{id, f.LogicalName, f.PhysicalName, f.Type, nz(f.Size), nv(f.Filegroup)})
			}
		}
		return []tdstest.ResultSet{rs}, nil
	}
	return nil, tdstest.Error{Number: 2812, Message: "Could not find stored procedure '" + name + "'."}
}

func nz(v int64) any {
	if v == 0 {
		return nil
	}
	return v
}

var backupColumns = []tdstest.Column{
	col("backup_set_id", tdstest.Int, 0), col("backup_set_uuid", tdstest.UniqueIdentifier, 0),
	col("database_name", tdstest.NVarChar, 128), col("media_set_id", tdstest.Int, 0), col("media_family_count", tdstest.TinyInt, 0),
	col("type", tdstest.Char, 1), col("is_copy_only", tdstest.Bit, 0), col("is_damaged", tdstest.Bit, 0),
	col("has_backup_checksums", tdstest.Bit, 0), col("has_bulk_logged_data", tdstest.Bit, 0),
	numeric("first_lsn", 25), numeric("last_lsn", 25), numeric("checkpoint_lsn", 25), numeric("database_backup_lsn", 25),
	numeric("differential_base_lsn", 25), col("differential_base_guid", tdstest.UniqueIdentifier, 0),
	numeric("fork_point_lsn", 25), col("first_recovery_fork_guid", tdstest.UniqueIdentifier, 0),
	col("last_recovery_fork_guid", tdstest.UniqueIdentifier, 0), col("backup_start_date", tdstest.DateTime, 0),
	col("backup_finish_date", tdstest.DateTime, 0), col("time_zone", tdstest.SmallInt, 0),
	numeric("backup_size", 20), numeric("compressed_backup_size", 20), col("software_major_version", tdstest.TinyInt, 0),
	col("software_minor_version", tdstest.TinyInt, 0), col("software_build_version", tdstest.SmallInt, 0),
	col("server_name", tdstest.NVarChar, 128), col("machine_name", tdstest.NVarChar, 128),
	col("recovery_model", tdstest.NVarChar, 60), col("device_type", tdstest.TinyInt, 0),
	col("physical_device_names", tdstest.NVarChar, tdstest.Max), col("family_guid", tdstest.UniqueIdentifier, 0),
}
