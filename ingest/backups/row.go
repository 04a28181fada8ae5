package backups

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// One CSV row of either shape to a backup set (or to one more stripe or
// file of a set already read).

var typeWords = map[string]string{"full": "D", "database": "D", "differential": "I", "log": "L", "file": "F",
	"differential file": "G", "partial full": "P", "partial": "P", "partial differential": "Q"}

func parseRow(r row, sh shape, order string, opt Options) (store.BackupSet, string, error) {
	g := r.get
	b := store.BackupSet{Origin: store.Origin{Source: "backups", File: opt.File, Line: r.line}}
	b.Instance = g("instance", "server", "server_name")
	if b.Instance == "" {
		b.Instance = opt.Instance
	}
	if b.Instance == "" {
		return b, "", fmt.Errorf("the row names no instance: give --instance")
	}
	b.Database = g("database_name", "database")
	b.Type = strings.ToUpper(g("type"))
	if t, ok := typeWords[strings.ToLower(b.Type)]; ok {
		b.Type = t
	}
	b.FirstLSN, b.LastLSN = g("first_lsn", "firstlsn"), g("last_lsn", "lastlsn")
	b.CheckpointLSN, b.DatabaseBackupLSN = g("checkpoint_lsn", "checkpointlsn"), g("database_backup_lsn", "databasebackuplsn")
	b.DiffBaseLSN, b.DiffBaseGUID = g("differential_base_lsn"), g("differential_base_guid")
	b.ForkPointLSN, b.FirstForkGUID, b.LastForkGUID = g("fork_point_lsn"), g("first_recovery_fork_guid"), g("last_recovery_fork_guid")
	b.RecoveryModel, b.ServerName, b.MachineName = g("recovery_model"), g("server_name", "server"), g("machine_name")
	// The AG the database belonged to (dbatools' AvailabilityGroupName, the
	// export query's availability_group) and its family GUID: what lets a
	// plan merge the histories of an AG's replicas.
	b.FamilyGUID, b.AvailabilityGroup = g("family_guid", "familyguid"), g("availability_group", "availabilitygroupname")
	var err error
	bits := []struct {
		name string
		dst  *bool
	}{{"is_copy_only", &b.CopyOnly}, {"is_damaged", &b.Damaged}, {"has_backup_checksums", &b.Checksums}, {"has_bulk_logged_data", &b.BulkLogged}}
	for _, x := range bits {
		if *x.dst, err = parseBit(g(x.name)); err != nil {
			return b, "", fmt.Errorf("%s: %v", x.name, err)
		}
	}
	ints := []struct {
		names []string
		dst   *int64
	}{{[]string{"backup_size", "totalsize"}, &b.Size}, {[]string{"compressed_backup_size", "compressedbackupsize"}, &b.CompressedSize},
		{[]string{"media_set_id", "mediasetid"}, &b.MediaSetID}}
	for _, x := range ints {
		if *x.dst, err = parseInt(g(x.names...)); err != nil {
			return b, "", fmt.Errorf("%s: %v", x.names[0], err)
		}
	}
	if b.Start, err = parseDate(g("backup_start_date", "start"), order); err != nil {
		return b, "", fmt.Errorf("backup_start_date: %v", err)
	}
	if b.Finish, err = parseDate(g("backup_finish_date", "end"), order); err != nil {
		return b, "", fmt.Errorf("backup_finish_date: %v", err)
	}
	if tz := g("time_zone"); tz != "" && tz != "127" {
		q, err := strconv.Atoi(tz)
		if err != nil || q < -48 || q > 48 {
			return b, "", fmt.Errorf("time_zone %q: want -48..48 quarter hours or 127", tz)
		}
		off := q * 15
		b.UTCOffset = &off
		b.Start = b.Start.Add(-time.Duration(off) * time.Minute)
		b.Finish = b.Finish.Add(-time.Duration(off) * time.Minute)
	}
	if maj := g("software_major_version"); maj != "" {
		b.SoftwareBuild = strings.Trim(maj+"."+g("software_minor_version")+"."+g("software_build_version"), ".")
	}
	var key string
	switch sh {
	case export:
		b.UUID = g("backup_set_uuid")
		if n, err := parseInt(g("media_family_count")); err != nil {
			return b, "", fmt.Errorf("media_family_count: %v", err)
		} else {
			b.Families = int(n)
		}
		dt, err := parseInt(g("device_type"))
		if err != nil {
			return b, "", fmt.Errorf("device_type: %v", err)
		}
		for i, d := range strings.Split(g("physical_device_names"), "|") {
			if d = strings.TrimSpace(d); d != "" {
				b.Media = append(b.Media, store.BackupMedia{Family: i + 1, DeviceType: int(dt), Device: d})
			}
		}
		if name := g("logical_name"); name != "" {
			size, err := parseInt(g("file_size"))
			if err != nil {
				return b, "", fmt.Errorf("file_size: %v", err)
			}
			b.Files = append(b.Files, store.BackupFile{LogicalName: name, PhysicalName: g("physical_name"),
				Type: strings.ToUpper(g("file_type")), Size: size, Filegroup: g("filegroup_name")})
		}
		key = strings.ToLower(b.Instance) + "\x00" + strings.ToUpper(b.UUID)
	case dbatoolsRaw:
		id := g("backupsetid")
		if id == "" {
			return b, "", fmt.Errorf("BackupSetId is empty")
		}
		// dbatools' raw rows carry no backup_set_uuid: the set's id in the
		// server's msdb identifies it there.
		b.UUID = "MSDB-BACKUP-SET-" + id
		path := g("path", "fullname")
		if strings.HasPrefix(path, "System.") && strings.HasSuffix(path, "[]") {
			return b, "", ErrDefaultExport
		}
		b.Media = []store.BackupMedia{{Family: 1, DeviceType: deviceType(g("devicetype")), Device: path}}
		b.Families = 1
		key = strings.ToLower(b.Instance) + "\x00" + b.UUID
	}
	if err := b.Validate(); err != nil {
		return b, "", err
	}
	return b, key, nil
}

// deviceType maps dbatools' DeviceType words back to msdb's numbers.
func deviceType(s string) int {
	switch strings.ToLower(s) {
	case "disk", "permanent disk device":
		return 2
	case "tape", "permanent tape device":
		return 5
	case "virtual device":
		return 7
	case "url":
		return 9
	}
	return 0
}

func parseBit(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "", "0", "false", "falsch", "faux":
		return false, nil
	case "1", "true", "wahr", "vrai":
		return true, nil
	}
	return false, fmt.Errorf("%q is not a bit", s)
}

// parseInt reads sizes and ids; msdb's numeric(20,0) may come as "123.0"
// or, from a culture-formatted client, "123,0".
func parseInt(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	if i := strings.IndexAny(s, ".,"); i >= 0 && strings.Trim(s[i+1:], "0") == "" {
		s = s[:i]
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	return v, nil
}
