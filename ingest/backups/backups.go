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
	"strings"

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
