// Package backups reads backup-history CSV files into store.BackupSet
// records for restore plans. Two shapes are understood:
//
//   - the CSV of restorewatch's ingest/csv/backup_history_export.sql (one
//     row per database file of each backup set, devices '|'-joined in
//     stripe order), from sqlcmd, Invoke-Sqlcmd | Export-Csv or SSMS;
//   - dbatools' `Get-DbaDbBackupHistory -IncludeCopyOnly -Raw | Export-Csv`
//     (one row per media family, columns named as in dbatools'
//     public/Get-DbaDbBackupHistory.ps1: Database, server, Start, End, Path,
//     TotalSize, CompressedBackupSize, Type, MediaSetId, MediaFamilyId,
//     BackupSetId, DeviceType, first_lsn, last_lsn, checkpoint_lsn,
//     database_backup_lsn, is_copy_only, last_recovery_fork_guid,
//     recovery_model, software_major_version).
//
// dbatools' default (grouped) objects carry the paths and files as arrays,
// which Export-Csv writes as "System.String[]" and "System.Object[]": such a
// file is refused with the command that exports the raw rows.
package backups

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/ingest/textenc"
	"github.com/restorewatch/restorewatch/store"
)

// Options fill in what a file does not say.
type Options struct {
	File     string // names the file in origins and errors
	Instance string // for rows that name no instance
	// DateFormat forces the order of day and month in culture dates, as
	// ingest/csv reads --date-format (DMY, MDY, YMD, dd.MM.yyyy, 02/01/2006);
	// empty = inferred from the file (a first number above 12 is a day),
	// else month first.
	DateFormat string
}

// Stats is what a parse read.
type Stats struct {
	Rows    int64
	Sets    int64
	Rejects []store.Reject
}

// RawCommand is the dbatools export that keeps real paths.
const RawCommand = "Get-DbaDbBackupHistory -SqlInstance SERVER -IncludeCopyOnly -Raw | Export-Csv -Path backups.csv -NoTypeInformation -Encoding UTF8"

// ErrDefaultExport is returned for dbatools' default, grouped export.
var ErrDefaultExport = errors.New("this is Get-DbaDbBackupHistory's default output, whose backup paths and file lists Export-Csv writes as System.String[] and System.Object[]: export the raw rows instead: " + RawCommand)

type shape int

const (
	export shape = iota + 1
	dbatoolsRaw
)

// Parse reads a whole file and returns its backup sets, rows of one set
// merged (stripes, files). A row that cannot be read is a reject naming
// file:line; an error means the file is of no known shape or unreadable.
func Parse(ctx context.Context, r io.Reader, opt Options) ([]store.BackupSet, Stats, error) {
	var st Stats
	order, err := dateOrder(opt.DateFormat)
	if err != nil {
		return nil, st, store.Errorf(store.EINVALID, "%s", err.Error())
	}
	dec, err := textenc.UTF8Reader(r)
	if err != nil {
		return nil, st, err
	}
	cr := csv.NewReader(dec)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = false
	var cols map[string]int
	var sh shape
	var rows []row
	for {
		if err := ctx.Err(); err != nil {
			return nil, st, err
		}
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				st.Rejects = append(st.Rejects, store.Reject{File: opt.File, Line: pe.Line, Reason: pe.Err.Error()})
				continue
			}
			return nil, st, err
		}
		if skip(rec) {
			continue
		}
		if cols == nil {
			cols, sh, err = header(rec)
			if err != nil {
				return nil, st, fmt.Errorf("%s:%d: %w", opt.File, line, err)
			}
			continue
		}
		st.Rows++
		rows = append(rows, row{line: line, get: getter(cols, rec)})
	}
	if cols == nil {
		return nil, st, store.Errorf(store.EINVALID, "%s: no header line: not a backup history export", opt.File)
	}
	if order == "" {
		order = inferOrder(rows)
	}
	sets, rejects := build(rows, sh, order, opt)
	st.Rejects = append(st.Rejects, rejects...)
	st.Sets = int64(len(sets))
	return sets, st, nil
}

type row struct {
	line int
	get  func(names ...string) string
}

// skip passes over sqlcmd's dashed underline, "(N rows affected)",
// PowerShell 5's #TYPE line and blank lines.
func skip(rec []string) bool {
	if len(rec) == 0 {
		return true
	}
	first := strings.TrimSpace(strings.TrimLeft(rec[0], "\ufeff"))
	if len(rec) == 1 && (first == "" || strings.HasPrefix(first, "#TYPE") || strings.HasPrefix(first, "(") && strings.HasSuffix(first, "affected)")) {
		return true
	}
	return strings.Trim(first, "-") == "" && strings.HasPrefix(first, "--")
}

func header(rec []string) (map[string]int, shape, error) {
	cols := map[string]int{}
	for i, c := range rec {
		c = strings.ToLower(strings.TrimSpace(strings.Trim(strings.TrimLeft(c, "\ufeff"), `"`)))
		if _, dup := cols[c]; !dup {
			cols[c] = i
		}
	}
	has := func(n string) bool { _, ok := cols[n]; return ok }
	switch {
	case has("filelist") || has("sqlinstance") && has("path") && !has("mediasetid"):
		return nil, 0, ErrDefaultExport
	case has("backup_set_uuid") && has("first_lsn") && has("backup_finish_date"):
		return cols, export, nil
	case has("mediasetid") && has("backupsetid") && has("path") && has("first_lsn"):
		return cols, dbatoolsRaw, nil
	}
	return nil, 0, store.Errorf(store.EINVALID, "the header names neither backup_history_export.sql's columns "+
		"(backup_set_uuid, first_lsn, backup_finish_date …) nor those of %s", RawCommand)
}

// getter returns the first named column present, unquoted: @quote_text=1
// wraps text in quotes a second client may quote again ("""x""").
func getter(cols map[string]int, rec []string) func(...string) string {
	return func(names ...string) string {
		for _, n := range names {
			if i, ok := cols[n]; ok && i < len(rec) {
				v := strings.TrimSpace(rec[i])
				if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
					v = strings.ReplaceAll(v[1:len(v)-1], `""`, `"`)
				}
				if v == "NULL" {
					return ""
				}
				return v
			}
		}
		return ""
	}
}

// build turns rows into sets, keyed by instance and set identity.
func build(rows []row, sh shape, order string, opt Options) ([]store.BackupSet, []store.Reject) {
	var sets []store.BackupSet
	var rejects []store.Reject
	idx := map[string]int{}
	for _, r := range rows {
		b, key, err := parseRow(r, sh, order, opt)
		if err != nil {
			rejects = append(rejects, store.Reject{File: opt.File, Line: r.line, Reason: err.Error()})
			continue
		}
		i, ok := idx[key]
		if !ok {
			idx[key] = len(sets)
			sets = append(sets, b)
			continue
		}
		s := &sets[i]
		for _, m := range b.Media {
			if sh == dbatoolsRaw {
				m.Family = len(s.Media) + 1 // one row per family, in the order dbatools lists them
			}
			if !hasMedia(s.Media, m) {
				s.Media = append(s.Media, m)
			}
		}
		for _, f := range b.Files {
			if !hasFile(s.Files, f.LogicalName) {
				s.Files = append(s.Files, f)
			}
		}
		if sh == dbatoolsRaw {
			s.Families = len(s.Media)
		}
	}
	return sets, rejects
}

func hasMedia(ms []store.BackupMedia, m store.BackupMedia) bool {
	for _, x := range ms {
		if x.Family == m.Family && x.Mirror == m.Mirror {
			return true
		}
	}
	return false
}

func hasFile(fs []store.BackupFile, name string) bool {
	for _, f := range fs {
		if f.LogicalName == name {
			return true
		}
	}
	return false
}

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

// Putter is a sink that also stores backup sets: a store.Import does
// (through its warehouse); a sink without it (a dry run) stores nothing.
type Putter interface {
	BackupSets(ctx context.Context, sets []store.BackupSet) (int64, error)
}

// Store parses a file and hands its sets to sink, in batches of
// store.BatchSize; rejects go to sink.Reject. Stats.Sets counts the sets
// that were new to the warehouse (all of them when the sink stores none).
func Store(ctx context.Context, r io.Reader, opt Options, sink store.Sink) (Stats, error) {
	sets, st, err := Parse(ctx, r, opt)
	for _, x := range st.Rejects {
		sink.Reject(x)
	}
	if err != nil {
		return st, err
	}
	put, ok := sink.(Putter)
	if !ok {
		return st, nil
	}
	st.Sets = 0
	for len(sets) > 0 {
		n := min(len(sets), store.BatchSize)
		added, err := put.BackupSets(ctx, sets[:n])
		if err != nil {
			return st, err
		}
		st.Sets += added
		sets = sets[n:]
	}
	return st, nil
}
