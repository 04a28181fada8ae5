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
// It holds every set in memory: Store streams a file of any size.
func Parse(ctx context.Context, r io.Reader, opt Options) ([]store.BackupSet, Stats, error) {
	var all []store.BackupSet
	st, err := scan(ctx, r, opt, func(sets []store.BackupSet) error {
		all = append(all, sets...)
		return nil
	})
	if err != nil {
		return nil, st, err
	}
	all = mergeSets(all)
	st.Sets = int64(len(all))
	return all, st, nil
}

// Bounds of scan's memory: rows held while the order of day and month is
// unknown, and sets handed on at once.
const (
	maxUndecided = 20000
	batchSets    = 1000
)

// scan reads the file and hands its sets to emit in batches of batchSets,
// rows of one set that follow each other merged; a set whose rows are
// apart arrives in pieces that the warehouse (or Parse) merges. Rows wait
// only while culture dates leave day and month undecided, at most
// maxUndecided of them.
func scan(ctx context.Context, r io.Reader, opt Options, emit func([]store.BackupSet) error) (Stats, error) {
	var st Stats
	order, err := dateOrder(opt.DateFormat)
	if err != nil {
		return st, store.Errorf(store.EINVALID, "%s", err.Error())
	}
	dec, err := textenc.UTF8Reader(r)
	if err != nil {
		return st, err
	}
	cr := csv.NewReader(dec)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = false
	var (
		cols    map[string]int
		sh      shape
		waiting []row // while order is undecided
		b       builder
	)
	flush := func(force bool) error {
		if len(b.sets) == 0 || !force && len(b.sets) < batchSets {
			return nil
		}
		err := emit(b.sets)
		b.sets, b.idx = nil, nil
		return err
	}
	take := func(rw row) error {
		if err := b.add(rw, sh, order, opt, &st); err != nil {
			return err
		}
		return flush(false)
	}
	for {
		if err := ctx.Err(); err != nil {
			return st, err
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
			return st, err
		}
		if skip(rec) {
			continue
		}
		if cols == nil {
			cols, sh, err = header(rec)
			if err != nil {
				return st, fmt.Errorf("%s:%d: %w", opt.File, line, err)
			}
			continue
		}
		st.Rows++
		rw := row{line: line, get: getter(cols, rec)}
		if order == "" {
			switch o := decides(rw); {
			case o != "":
				order = o
			case !ambiguous(rw):
				// ISO dates, or none whose order matters: no need to wait.
				if err := take(rw); err != nil {
					return st, err
				}
				continue
			case len(waiting) < maxUndecided:
				waiting = append(waiting, rw)
				continue
			default:
				return st, store.Errorf(store.EINVALID, "%s: %d rows' dates do not tell the day from the month: give --date-format (DMY or MDY, or the culture's pattern such as dd/MM/yyyy)", opt.File, maxUndecided)
			}
			for _, w := range waiting {
				if err := take(w); err != nil {
					return st, err
				}
			}
			waiting = nil
		}
		if err := take(rw); err != nil {
			return st, err
		}
	}
	if cols == nil {
		return st, store.Errorf(store.EINVALID, "%s: no header line: not a backup history export", opt.File)
	}
	if len(waiting) > 0 {
		for _, w := range waiting {
			if ambiguous(w) {
				return st, store.Errorf(store.EINVALID, "%s:%d: the file's dates do not tell the day from the month (no day above 12): give --date-format (DMY or MDY, or the culture's pattern such as dd/MM/yyyy)", opt.File, w.line)
			}
		}
		for _, w := range waiting {
			if err := take(w); err != nil {
				return st, err
			}
		}
	}
	return st, flush(true)
}

// builder gathers the sets of the rows read since the last batch.
type builder struct {
	sets []store.BackupSet
	idx  map[string]int
}

func (b *builder) add(r row, sh shape, order string, opt Options, st *Stats) error {
	set, key, err := parseRow(r, sh, order, opt)
	if err != nil {
		st.Rejects = append(st.Rejects, store.Reject{File: opt.File, Line: r.line, Reason: err.Error()})
		return nil
	}
	if b.idx == nil {
		b.idx = map[string]int{}
	}
	i, ok := b.idx[key]
	if !ok {
		b.idx[key] = len(b.sets)
		b.sets = append(b.sets, set)
		return nil
	}
	s := &b.sets[i]
	for _, m := range set.Media {
		if sh == dbatoolsRaw {
			m.Family = len(s.Media) + 1 // one row per family, in the order dbatools lists them
		}
		if !hasMedia(s.Media, m) {
			s.Media = append(s.Media, m)
		}
	}
	for _, f := range set.Files {
		if !hasFile(s.Files, f.LogicalName) {
			s.Files = append(s.Files, f)
		}
	}
	if sh == dbatoolsRaw {
		s.Families = len(s.Media)
	}
	return nil
}

// mergeSets merges the pieces of one set that scan handed on in different
// batches (instance and uuid name a set, as in the warehouse).
func mergeSets(sets []store.BackupSet) []store.BackupSet {
	idx := map[string]int{}
	out := sets[:0]
	for _, s := range sets {
		k := strings.ToLower(s.Instance) + "\x00" + strings.ToUpper(s.UUID)
		i, ok := idx[k]
		if !ok || s.UUID == "" {
			idx[k] = len(out)
			out = append(out, s)
			continue
		}
		for _, m := range s.Media {
			if !hasMedia(out[i].Media, m) {
				out[i].Media = append(out[i].Media, m)
			}
		}
		for _, f := range s.Files {
			if !hasFile(out[i].Files, f.LogicalName) {
				out[i].Files = append(out[i].Files, f)
			}
		}
	}
	return out
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

// Store streams a file into sink: its sets as they are read (memory stays
// flat whatever the file's size; pieces of one set that lie apart in the
// file merge in the warehouse), rejects to sink.Reject. Stats.Sets counts
// the sets (or pieces) handed on.
func Store(ctx context.Context, r io.Reader, opt Options, sink store.Sink) (Stats, error) {
	var n int64
	st, err := scan(ctx, r, opt, func(sets []store.BackupSet) error {
		for _, b := range sets {
			if err := sink.BackupSet(b); err != nil {
				return err
			}
		}
		n += int64(len(sets))
		return nil
	})
	for _, x := range st.Rejects {
		sink.Reject(x)
	}
	st.Sets = n
	return st, err
}
