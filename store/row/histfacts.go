package row

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/derive"
)

// A history row's facts column is a JSON array of what the source stated,
// in these positions (migration 0011 builds the same array from the old
// columns). Positions are only ever added at the end: a reader treats a
// missing trailing value as NULL, so a warehouse written before a position
// existed still reads.
//
//	 0 destination_database_name   10 source machine_name     20 software_minor
//	 1 user_name                   11 source database_name    21 software_build
//	 2 restore_type                12 backup type             22 is_copy_only
//	 3 replace (0/1)               13 backup_start_date       23 has_backup_checksums
//	 4 recovery (0/1)              14 backup_finish_date      24 key_algorithm
//	 5 stop_at                     15 first_lsn (text)        25 media_family_count
//	 6 device count                16 last_lsn (text)         26 device_type
//	 7 backup_set_uuid             17 backup_size             27 devices ([text])
//	 8 family_guid                 18 compressed_backup_size  28 destination files ([text])
//	 9 source server_name          19 software_major          29 source (csv, collector …)
//
// Times are the instance's local wall clock in milliseconds, as in the
// other *_local columns; NULL is what the source left out.

// AppendHistoryFacts appends h's facts array to b.
func AppendHistoryFacts(b []byte, h *store.HistoryRow) []byte {
	b = append(b, '[')
	b = appendJSONString(b, h.Database)
	b = appendOptString(b, h.UserName)
	b = appendOptString(b, strings.ToUpper(h.RestoreType))
	b = appendOptBool(b, h.Replace)
	b = appendOptBool(b, h.Recovery)
	b = appendOptTime(b, h.StopAt)
	b = appendOptInt(b, h.DeviceCount)
	b = appendOptString(b, h.BackupSetUUID)
	b = appendOptString(b, h.FamilyGUID)
	b = appendOptString(b, h.SourceServer)
	b = appendOptString(b, h.SourceMachine)
	b = appendOptString(b, h.SourceDatabase)
	b = appendOptString(b, strings.ToUpper(h.BackupType))
	b = appendOptTime(b, h.BackupStart)
	b = appendOptTime(b, h.BackupFinish)
	b = appendOptString(b, h.FirstLSN)
	b = appendOptString(b, h.LastLSN)
	b = appendOptInt(b, h.BackupSize)
	b = appendOptInt(b, h.CompressedSize)
	b = appendOptInt(b, h.SoftwareMajor)
	b = appendOptInt(b, h.SoftwareMinor)
	b = appendOptInt(b, h.SoftwareBuild)
	b = appendOptBool(b, h.IsCopyOnly)
	b = appendOptBool(b, h.HasChecksums)
	b = appendOptString(b, h.KeyAlgorithm)
	b = appendOptInt(b, h.MediaFamilies)
	b = appendOptInt(b, h.DeviceType)
	b = appendStrings(append(b, ','), h.Devices)
	b = appendStrings(append(b, ','), h.DestinationFiles)
	b = appendJSONString(append(b, ','), string(h.Origin.Source))
	return append(b, ']')
}

func appendOptString(b []byte, s string) []byte {
	if s == "" {
		return append(b, ",null"...)
	}
	return appendJSONString(append(b, ','), s)
}

func appendOptInt(b []byte, v *int64) []byte {
	if v == nil {
		return append(b, ",null"...)
	}
	return strconv.AppendInt(append(b, ','), *v, 10)
}

// appendOptTime appends t as the milliseconds of its wall reading (the
// *_local convention): NULL for none or the zero time.
func appendOptTime(b []byte, t *time.Time) []byte {
	if t == nil || t.IsZero() {
		return append(b, ",null"...)
	}
	return strconv.AppendInt(append(b, ','), t.UnixMilli(), 10)
}

func appendOptBool(b []byte, v *bool) []byte {
	switch {
	case v == nil:
		return append(b, ",null"...)
	case *v:
		return append(b, ",1"...)
	}
	return append(b, ",0"...)
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// appendJSONString appends s as json.Marshal writes a string, byte for
// byte: quotes, backslashes, control characters, <, > and &, U+2028 and
// U+2029 escaped, and each byte of invalid UTF-8 replaced by U+FFFD (SQLite's
// JSON functions must be able to read it; Go 1.27's json.Marshal writes the
// character itself, not an escape). The restore rows' content hashes
// cover text written this way, so it must not drift from encoding/json's
// (TestJSONStringMatchesEncodingJSON, FuzzHistoryFacts).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...) // the character itself, as json.Marshal writes it
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// DecodeHistoryFacts reads a facts array into f.
func DecodeHistoryFacts(f *derive.HistoryFacts, s string) error {
	p := factScanner{s: s}
	p.begin()
	f.DB = p.str()
	f.User = p.str()
	f.RestoreType = p.str()
	f.Replace = p.boolean()
	f.Recovery = p.boolean()
	f.StopAt = p.int()
	f.DeviceCount = p.int()
	f.UUID = p.str()
	f.Family = p.str()
	f.SourceServer = p.str()
	f.SourceMachine = p.str()
	f.SourceDB = p.str()
	f.BackupType = p.str()
	f.BackupStart = p.int()
	f.BackupFinish = p.int()
	f.FirstLSN = p.str()
	f.LastLSN = p.str()
	f.BackupSize = p.int()
	f.Compressed = p.int()
	f.Major = p.int()
	f.Minor = p.int()
	f.Build = p.int()
	f.CopyOnly = p.boolean()
	f.Checksums = p.boolean()
	f.KeyAlgorithm = p.str()
	f.MediaFamilies = p.int()
	f.DeviceType = p.int()
	f.Devices = p.strs()
	f.Destinations = p.strs()
	f.Source = store.Source(p.str())
	return p.err
}
