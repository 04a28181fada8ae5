package csv

import (
	"errors"
	"io"
	"regexp"
	"strings"

	stdcsv "encoding/csv"

	"github.com/restorewatch/restorewatch/store"
)

// column identifies one column of the SPEC §3.3 header.
type column uint8

const (
	colExtra column = iota // a column the importer ignores
	colInstance
	colRestoreHistoryID
	colRestoreDate
	colDatabase
	colUserName
	colRestoreType
	colReplace
	colRecovery
	colStopAt
	colDeviceCount
	colBackupSetUUID
	colFamilyGUID
	colSourceServer
	colSourceMachine
	colSourceDatabase
	colBackupType
	colBackupStart
	colBackupFinish
	colFirstLSN
	colLastLSN
	colBackupSize
	colCompressedSize
	colSoftwareMajor
	colSoftwareMinor
	colSoftwareBuild
	colIsCopyOnly
	colHasChecksums
	colKeyAlgorithm
	colMediaFamilies
	colDeviceType
	colDevices
	colDestinations // restorewatch's extension: restorefile's destination paths
	numColumns
)

// columnNames is the SPEC §3.3 header, indexed by column and in SPEC order.
var columnNames = [numColumns]string{
	colInstance:         "instance",
	colRestoreHistoryID: "restore_history_id",
	colRestoreDate:      "restore_date",
	colDatabase:         "destination_database_name",
	colUserName:         "user_name",
	colRestoreType:      "restore_type",
	colReplace:          "replace",
	colRecovery:         "recovery",
	colStopAt:           "stop_at",
	colDeviceCount:      "device_count",
	colBackupSetUUID:    "backup_set_uuid",
	colFamilyGUID:       "family_guid",
	colSourceServer:     "source_server_name",
	colSourceMachine:    "source_machine_name",
	colSourceDatabase:   "source_database_name",
	colBackupType:       "backup_type",
	colBackupStart:      "backup_start_date",
	colBackupFinish:     "backup_finish_date",
	colFirstLSN:         "first_lsn",
	colLastLSN:          "last_lsn",
	colBackupSize:       "backup_size",
	colCompressedSize:   "compressed_backup_size",
	colSoftwareMajor:    "software_major_version",
	colSoftwareMinor:    "software_minor_version",
	colSoftwareBuild:    "software_build_version",
	colIsCopyOnly:       "is_copy_only",
	colHasChecksums:     "has_backup_checksums",
	colKeyAlgorithm:     "key_algorithm",
	colMediaFamilies:    "media_family_count",
	colDeviceType:       "device_type",
	colDevices:          "physical_device_names",
	colDestinations:     "destination_files",
}

// Columns returns the CSV header of SPEC §3.3 in its published order, then
// restorewatch's extension destination_files (where the restore put the
// database's files, from msdb.dbo.restorefile); the export query emits
// exactly these, the importer accepts them in any order and does without the
// extension (exports of earlier versions of the query).
func Columns() []string {
	return append(make([]string, 0, numColumns-1), columnNames[1:]...)
}

func columnOf(name string) column {
	name = strings.ToLower(strings.TrimSpace(name))
	for c := colInstance; c < numColumns; c++ {
		if columnNames[c] == name {
			return c
		}
	}
	return colExtra
}

// header is the column layout of one file.
type header struct {
	cols     []column // by field index
	instance bool     // the file has an instance column
	names    int      // fields per record
}

// maxPreamble bounds the lines skipped before the header (PowerShell 5's
// "#TYPE System.Data.DataRow", a client's "Changed database context" note),
// so a file without a header fails fast instead of being read to the end.
const maxPreamble = 20

// readHeader finds the header record: the first record that names at least
// one known column. It returns an EINVALID error when the file has no header
// or lacks a required column, because then no row of it can be read.
func readHeader(rd *stdcsv.Reader, opt Options) (header, error) {
	for i := 0; i < maxPreamble; i++ {
		rec, err := rd.Read()
		if err == io.EOF {
			break
		}
		var pe *stdcsv.ParseError
		if errors.As(err, &pe) {
			continue
		}
		if err != nil {
			return header{}, err
		}
		h, ok, err := layout(rec, opt)
		if ok || err != nil {
			return h, err
		}
	}
	return header{}, store.Errorf(store.EINVALID,
		"no header row naming the columns of the history export (instance, restore_date, destination_database_name, ...); "+
			"SSMS saves one only with \"Include column headers when copying or saving the results\" on")
}

func layout(rec []string, opt Options) (header, bool, error) {
	h := header{cols: make([]column, len(rec)), names: len(rec)}
	var seen [numColumns]bool
	known := false
	for i, name := range rec {
		c := columnOf(name)
		if c == colExtra {
			continue
		}
		if seen[c] {
			return h, true, store.Errorf(store.EINVALID, "header names column %s twice", columnNames[c])
		}
		seen[c], h.cols[i], known = true, c, true
	}
	if !known {
		return h, false, nil
	}
	h.instance = seen[colInstance]
	var missing []string
	if !h.instance && strings.TrimSpace(opt.Instance) == "" {
		missing = append(missing, columnNames[colInstance]+" (or give the instance name)")
	}
	for _, c := range []column{colRestoreDate, colDatabase} {
		if !seen[c] {
			missing = append(missing, columnNames[c])
		}
	}
	if len(missing) > 0 {
		return h, true, store.Errorf(store.EINVALID, "header lacks required column %s", strings.Join(missing, ", "))
	}
	return h, true, nil
}

// isDashes reports whether rec is sqlcmd's underline of the header
// ("--------,-----"), which follows the header in its output.
func isDashes(rec []string) bool {
	for _, f := range rec {
		f = strings.TrimSpace(f)
		if f == "" || strings.Trim(f, "-") != "" {
			return false
		}
	}
	return len(rec) > 0
}

// stamp is the "Completion time: 2024-03-18T09:30:05.1234567+01:00" line
// that SSMS appends to results saved as text; its label is localised.
var stamp = regexp.MustCompile(`^[^:\d]{1,60}:\s*\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)$`)

// isNoise reports whether rec is a one-field line that is no row: a blank
// line of spaces, sqlcmd's "(12 rows affected)" (localised, so only its
// shape is checked: parenthesised and holding a count) or SSMS's completion
// stamp. Any other short row is reported, not skipped.
func isNoise(rec []string) bool {
	if len(rec) != 1 {
		return false
	}
	f := strings.TrimSpace(rec[0])
	if f == "" {
		return true
	}
	if len(f) > 2 && f[0] == '(' && f[len(f)-1] == ')' && strings.ContainsAny(f, "0123456789") {
		return true
	}
	return stamp.MatchString(f)
}
