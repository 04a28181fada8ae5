package csv

import (
	stdcsv "encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

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

// Columns of dbatools' Restore-DbaDatabase output that have no place in
// the history export.
const (
	colFileRestoreTime  column = numColumns + iota // the statement's elapsed time
	colRestoreComplete                             // False when the restore failed
	colBackupFilesCount                            // how many devices
	colScript                                      // the statement, when dbatools kept its text
	numAllColumns
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

// export is a kind of file the importer reads, told apart by its header.
type export uint8

const (
	exportHistory    export = iota // restorewatch's query (SPEC §3.3), any client
	exportDbaHistory               // dbatools Get-DbaDbRestoreHistory | Export-Csv
	exportDbaRestore               // dbatools Restore-DbaDatabase | Export-Csv
)

// exports describes each export for the error a header of none of them
// gets: what it is and the names its header carries.
var exports = [...]string{
	exportHistory:    "restorewatch's history export (restore_history_export.sql via sqlcmd, SSMS or Export-Csv: instance, restore_date, destination_database_name, ...)",
	exportDbaHistory: "dbatools Get-DbaDbRestoreHistory | Export-Csv (SqlInstance, Database, RestoreType, Date, From, To, first_lsn, last_lsn, ...)",
	exportDbaRestore: "dbatools Restore-DbaDatabase | Export-Csv (SqlInstance, Database, BackupFile, FileRestoreTime, RestoreComplete, ...)",
}

// dbaName maps one property of a dbatools export to a column. Properties
// are read from dbatools' source (see testdata/realworld/dbatools at the
// repository root); PowerShell writes them with this case, but property
// names are case-insensitive there, so they are here too.
type dbaName struct {
	name string
	col  column
	// alias marks a second property holding the same value (BackupStartDate
	// repeats backup_start_date): used only when the first is absent.
	alias bool
}

// dbaHistoryNames are Get-DbaDbRestoreHistory's properties (its SELECT
// list). ComputerName, InstanceName, checkpoint_lsn, database_backup_lsn,
// LastRestorePoint and the DataRow's own RowError, RowState, Table,
// ItemArray and HasErrors are ignored.
var dbaHistoryNames = []dbaName{
	{"SqlInstance", colInstance, false},
	{"Database", colDatabase, false},
	{"Username", colUserName, false},
	{"RestoreType", colRestoreType, false},
	{"Date", colRestoreDate, false},
	{"From", colDevices, false},
	{"To", colDestinations, false},
	{"first_lsn", colFirstLSN, false},
	{"last_lsn", colLastLSN, false},
	{"backup_start_date", colBackupStart, false},
	{"BackupStartDate", colBackupStart, true},
	{"backup_finish_date", colBackupFinish, false},
	{"BackupFinishDate", colBackupFinish, true},
	{"StopAt", colStopAt, false},
}

// dbaRestoreNames are the properties of the objects Restore-DbaDatabase
// passes on from Invoke-DbaAdvancedRestore. DatabaseRestoreTime is ignored:
// it runs from the start of the database's first restore of the run, so it
// grows down a restore sequence instead of timing one statement.
var dbaRestoreNames = []dbaName{
	{"SqlInstance", colInstance, false},
	{"Database", colDatabase, false},
	{"BackupFile", colDevices, false},
	{"BackupFilesCount", colBackupFilesCount, false},
	{"FileRestoreTime", colFileRestoreTime, false},
	{"RestoreComplete", colRestoreComplete, false},
	{"Script", colScript, false},
}

// header is the column layout of one file.
type header struct {
	export   export
	cols     []column // by field index
	labels   []string // the header's own names, for rejects
	instance bool     // the file has an instance column
	names    int      // fields per record
}

// maxPreamble bounds the lines skipped before the header (PowerShell 5's
// "#TYPE System.Data.DataRow", a client's "Changed database context" note),
// so a file without a header fails fast instead of being read to the end.
const maxPreamble = 20

// readHeader finds the header record: the first record that is the header
// of a known export. It returns an EINVALID error when the file has no such
// header or it lacks a required column, because then no row of it can be
// read; the error names what was expected and the exports accepted.
func readHeader(rd *stdcsv.Reader, opt Options) (header, error) {
	var first []string
	firstLine := 0
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
		if first == nil && !isComment(rec) {
			first = append([]string(nil), rec...)
			firstLine, _ = rd.FieldPos(0)
		}
		h, ok, err := layout(rec, opt)
		if ok || err != nil {
			return h, err
		}
	}
	var b strings.Builder
	b.WriteString("no header row of a known export")
	if first != nil {
		shown := first
		if len(shown) > 8 {
			shown = shown[:8]
		}
		for i, f := range shown {
			if len(f) > 40 {
				shown[i] = f[:40] + "..."
			}
		}
		fmt.Fprintf(&b, " (the first row, line %d, names %q", firstLine, shown)
		if len(first) > len(shown) {
			fmt.Fprintf(&b, " and %d more", len(first)-len(shown))
		}
		b.WriteString(")")
	}
	b.WriteString("; expected the header of one of: ")
	for i, e := range exports {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(e)
	}
	b.WriteString(". SSMS saves a header only with \"Include column headers when copying or saving the results\" on")
	return header{}, store.Errorf(store.EINVALID, "%s", b.String())
}

// isComment reports whether rec is a PowerShell "#TYPE ..." line.
func isComment(rec []string) bool {
	return len(rec) > 0 && strings.HasPrefix(strings.TrimSpace(rec[0]), "#")
}

func layout(rec []string, opt Options) (header, bool, error) {
	if h, ok, err := dbaLayout(rec, opt); ok || err != nil {
		return h, ok, err
	}
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

// dbaLayout recognises the header of a dbatools export: every property the
// export always writes must be there, so a header that shares a few names
// (Get-DbaDbBackupHistory's SqlInstance and Database) is not taken for one.
func dbaLayout(rec []string, opt Options) (header, bool, error) {
	has := map[string]int{}
	for i, name := range rec {
		has[strings.ToLower(strings.TrimSpace(name))] = i + 1
	}
	all := func(names ...string) bool {
		for _, n := range names {
			if has[strings.ToLower(n)] == 0 {
				return false
			}
		}
		return true
	}
	var e export
	var names []dbaName
	switch {
	case all("Database", "RestoreType", "Date", "From"):
		e, names = exportDbaHistory, dbaHistoryNames
	case all("Database", "BackupFile", "FileRestoreTime"):
		e, names = exportDbaRestore, dbaRestoreNames
	default:
		return header{}, false, nil
	}
	h := header{export: e, cols: make([]column, len(rec)), labels: make([]string, len(rec)), names: len(rec)}
	var seen [numAllColumns]bool
	for _, alias := range []bool{false, true} {
		for _, n := range names {
			i := has[strings.ToLower(n.name)]
			if n.alias != alias || i == 0 || seen[n.col] {
				continue
			}
			seen[n.col] = true
			h.cols[i-1], h.labels[i-1] = n.col, strings.TrimSpace(rec[i-1])
		}
	}
	h.instance = seen[colInstance]
	if !h.instance && strings.TrimSpace(opt.Instance) == "" {
		return h, true, store.Errorf(store.EINVALID, "header of %s lacks SqlInstance (or give the instance name)", exports[e])
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
