package csv

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// values backs every nullable field of one HistoryRow. The row's pointers
// point into it, so a row costs one allocation instead of one per field;
// at 100k rows a second that is the difference that shows in the profile.
type values struct {
	ints  [8]int64
	bools [4]bool
	times [3]time.Time
}

// slot is each nullable column's index in its array of values.
var slot = [numColumns]uint8{
	colDeviceCount: 0, colBackupSize: 1, colCompressedSize: 2, colSoftwareMajor: 3,
	colSoftwareMinor: 4, colSoftwareBuild: 5, colMediaFamilies: 6, colDeviceType: 7,
	colReplace: 0, colRecovery: 1, colIsCopyOnly: 2, colHasChecksums: 3,
	colStopAt: 0, colBackupStart: 1, colBackupFinish: 2,
}

// fieldError is a bad value in a known column; its text becomes the
// Reject reason, so it names the column and quotes the value.
type fieldError struct {
	col   column
	value string
	want  string
	label string // the header's name for col, when not SPEC §3.3's
}

func (e *fieldError) Error() string {
	v := e.value
	if len(v) > 60 {
		v = v[:60] + "..."
	}
	name := e.label
	if name == "" && e.col < numColumns {
		name = columnNames[e.col]
	}
	return fmt.Sprintf("%s %q: %s", name, v, e.want)
}

const (
	wantDate        = "not a date (want YYYY-MM-DD HH:MM:SS[.fff])"
	wantCultureDate = "not a date (want the exporting culture's date and time, e.g. 30/11/2026 13:45:12, or YYYY-MM-DD HH:MM:SS)"
	wantInt         = "not a whole number"
	wantBit         = "not a bit (want 0/1 or True/False)"
	wantLSN         = "not a numeric LSN"
)

// isNull reports whether a field is SQL NULL: empty, or the word NULL that
// SSMS and sqlcmd print for it.
func isNull(f string) bool {
	f = trimSpace(f)
	return f == "" || f == "NULL"
}

// set parses field f of column c into row h. quoted says the row came
// through the export query's own quoting and a client that quoted again.
func (v *values) set(p *parser, h *store.HistoryRow, c column, f string, quoted bool) error {
	if isNull(f) {
		return nil
	}
	switch c {
	case colInstance:
		h.Instance = trimSpace(text(f, quoted))
	case colDatabase:
		h.Database = text(f, quoted)
	case colUserName:
		h.UserName = text(f, quoted)
	case colSourceServer:
		h.SourceServer = text(f, quoted)
	case colSourceMachine:
		h.SourceMachine = text(f, quoted)
	case colSourceDatabase:
		h.SourceDatabase = text(f, quoted)
	case colKeyAlgorithm:
		h.KeyAlgorithm = text(f, quoted)
	case colBackupSetUUID:
		h.BackupSetUUID = guid(text(f, quoted))
	case colFamilyGUID:
		h.FamilyGUID = guid(text(f, quoted))
	case colRestoreType:
		t := strings.ToUpper(trimSpace(text(f, quoted)))
		if l, ok := restoreTypeWords[t]; ok {
			t = l
		}
		if _, ok := store.KindOfRestoreType(t); !ok {
			return &fieldError{col: c, value: f, want: "not a restore type (want D, F, G, I, L, P, R or V)"}
		}
		h.RestoreType = t
	case colBackupType:
		h.BackupType = strings.ToUpper(trimSpace(text(f, quoted)))
	case colDevices:
		h.Devices = p.list(text(f, quoted))
	case colDestinations:
		h.DestinationFiles = p.list(text(f, quoted))
	case colRestoreDate:
		t, why := p.date(f)
		if why != "" {
			return &fieldError{col: c, value: f, want: why}
		}
		h.RestoreDate = t
	case colStopAt, colBackupStart, colBackupFinish:
		t, why := p.date(f)
		if why != "" {
			return &fieldError{col: c, value: f, want: why}
		}
		p := &v.times[slot[c]]
		*p = t
		switch c {
		case colStopAt:
			h.StopAt = p
		case colBackupStart:
			h.BackupStart = p
		default:
			h.BackupFinish = p
		}
	case colFirstLSN, colLastLSN:
		lsn, err := store.CanonicalLSN(f)
		if err != nil {
			return &fieldError{col: c, value: f, want: wantLSN}
		}
		if c == colFirstLSN {
			h.FirstLSN = lsn
		} else {
			h.LastLSN = lsn
		}
	case colReplace, colRecovery, colIsCopyOnly, colHasChecksums:
		b, ok := parseBit(f)
		if !ok {
			return &fieldError{col: c, value: f, want: wantBit}
		}
		p := &v.bools[slot[c]]
		*p = b
		switch c {
		case colReplace:
			h.Replace = p
		case colRecovery:
			h.Recovery = p
		case colIsCopyOnly:
			h.IsCopyOnly = p
		default:
			h.HasChecksums = p
		}
	case colRestoreHistoryID:
		n, ok := parseInt(f)
		if !ok {
			return &fieldError{col: c, value: f, want: wantInt}
		}
		h.RestoreHistoryID = n
	default:
		return v.setInt(h, c, f)
	}
	return nil
}

// setInt handles the nullable whole-number columns.
func (v *values) setInt(h *store.HistoryRow, c column, f string) error {
	n, ok := parseInt(f)
	if !ok {
		return &fieldError{col: c, value: f, want: wantInt}
	}
	p := &v.ints[slot[c]]
	*p = n
	switch c {
	case colDeviceCount:
		h.DeviceCount = p
	case colBackupSize:
		h.BackupSize = p
	case colCompressedSize:
		h.CompressedSize = p
	case colSoftwareMajor:
		h.SoftwareMajor = p
	case colSoftwareMinor:
		h.SoftwareMinor = p
	case colSoftwareBuild:
		h.SoftwareBuild = p
	case colMediaFamilies:
		h.MediaFamilies = p
	case colDeviceType:
		h.DeviceType = p
	}
	return nil
}

// text undoes the export query's quoting when a quoting client (Export-Csv)
// quoted its already-quoted output a second time; see wrapped.
func text(f string, quoted bool) string {
	if !quoted || !wrapped(f) {
		return f
	}
	inner := f[1 : len(f)-1]
	if strings.Contains(inner, `""`) {
		inner = strings.ReplaceAll(inner, `""`, `"`)
	}
	return inner
}

// wrapped reports whether f is a complete CSV-quoted value: it starts and
// ends with a quote and every quote inside is doubled.
func wrapped(f string) bool {
	if len(f) < 2 || f[0] != '"' || f[len(f)-1] != '"' {
		return false
	}
	inner := f[1 : len(f)-1]
	for i := 0; i < len(inner); i++ {
		if inner[i] == '"' {
			if i+1 >= len(inner) || inner[i+1] != '"' {
				return false
			}
			i++
		}
	}
	return true
}

// guid normalises a uniqueidentifier to SQL Server's own display (upper
// case, no braces): PowerShell prints Guids in lower case, and the same
// backup set must compare equal whichever client exported it.
func guid(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	return strings.ToUpper(s)
}

// restoreTypeWords are the words Get-DbaDbRestoreHistory writes for
// restorehistory.restore_type (its CASE expression; other letters pass
// through as they are).
var restoreTypeWords = map[string]string{
	"DATABASE": "D", "FILE": "F", "FILEGROUP": "G", "DIFFERENTIAL": "I",
	"LOG": "L", "VERIFYONLY": "V", "REVERT": "R",
}

// list splits a list of paths as the file's export joins them: "|" in
// restorewatch's query, ", " in Get-DbaDbRestoreHistory's From and To
// (built with FOR XML PATH(”), which escapes &, < and > as entities), ","
// in Restore-DbaDatabase's BackupFile.
func (p *parser) list(s string) []string {
	switch p.hdr.export {
	case exportDbaHistory:
		if strings.IndexByte(s, '&') >= 0 {
			s = xmlText.Replace(s)
		}
		return devices(s, ", ")
	case exportDbaRestore:
		return devices(s, ",")
	}
	return devices(s, "|")
}

var xmlText = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&#x0D;", "\r", "&#x0A;", "\n", "&#x09;", "\t")

// devices splits a joined physical_device_name list.
func devices(s, sep string) []string {
	if !strings.Contains(s, sep) {
		return []string{s}
	}
	out := strings.Split(s, sep)
	n := 0
	for _, d := range out {
		if d != "" {
			out[n] = d
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return out[:n]
}

func trimSpace(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}

// parseBit accepts 0/1 (the contract, sqlcmd, SSMS) and True/False (what
// Export-Csv writes for a bit column).
func parseBit(f string) (bool, bool) {
	switch f = trimSpace(f); f {
	case "0":
		return false, true
	case "1":
		return true, true
	}
	switch strings.ToLower(f) {
	case "false":
		return false, true
	case "true":
		return true, true
	}
	return false, false
}

// parseInt accepts an integer, also in the "123.0" form a spreadsheet or a
// float-typed client writes for numeric(20,0) sizes; a real fraction is an
// error rather than silently truncated.
func parseInt(f string) (int64, bool) {
	f = trimSpace(f)
	if i := strings.IndexByte(f, '.'); i >= 0 {
		if strings.Trim(f[i+1:], "0") != "" {
			return 0, false
		}
		f = f[:i]
	}
	n, err := strconv.ParseInt(f, 10, 64)
	return n, err == nil
}

// parseDate reads "YYYY-MM-DD HH:MM:SS[.f{1,7}]" (space or T) by hand:
// CONVERT(varchar(23), x, 121) gives 3 fractional digits, datetime2 up to 7,
// and time.Parse with a layout per variant was the slowest step of a parse.
// The result is a wall-clock reading in a UTC location, as store expects.
func parseDate(f string) (time.Time, bool) {
	s := trimSpace(f)
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	min, ok5 := digits(s[14:16])
	sec, ok6 := digits(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return time.Time{}, false
	}
	nsec := 0
	if rest := s[19:]; rest != "" {
		if rest[0] != '.' || len(rest) < 2 || len(rest) > 8 {
			return time.Time{}, false
		}
		frac, ok := digits(rest[1:])
		if !ok {
			return time.Time{}, false
		}
		for i := len(rest) - 1; i < 9; i++ {
			frac *= 10
		}
		nsec = frac
	}
	if year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		hour > 23 || min > 59 || sec > 59 {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, min, sec, nsec, time.UTC), true
}

func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
