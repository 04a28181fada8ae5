package store

import (
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

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

// appendHistoryFacts appends h's facts array to b.
func appendHistoryFacts(b []byte, h *HistoryRow) []byte {
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

// decodeHistoryFacts reads a facts array into f.
func decodeHistoryFacts(f *derive.HistoryFacts, s string) error {
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
	f.Source = Source(p.str())
	return p.err
}

// factScanner reads the scalar values and string lists of one JSON array in
// order. After the array's last value every read yields NULL; the first
// malformed value stops it with err set.
type factScanner struct {
	s   string
	i   int
	n   int // values read
	end bool
	err error
}

func (p *factScanner) fail(what string) {
	if p.err == nil {
		p.err = fmt.Errorf("facts: %s at byte %d", what, p.i)
	}
	p.end = true
}

func (p *factScanner) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\n' || p.s[p.i] == '\t' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *factScanner) begin() {
	p.space()
	if p.i >= len(p.s) || p.s[p.i] != '[' {
		p.fail("not an array")
		return
	}
	p.i++
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.end = true
	}
}

// value positions the scanner on the next value and says whether there is
// one.
func (p *factScanner) value() bool {
	if p.end {
		return false
	}
	p.space()
	if p.n > 0 {
		if p.i >= len(p.s) {
			p.fail("unterminated array")
			return false
		}
		switch p.s[p.i] {
		case ']':
			p.end = true
			return false
		case ',':
			p.i++
			p.space()
		default:
			p.fail("expected , or ]")
			return false
		}
	}
	p.n++
	if p.i >= len(p.s) {
		p.fail("unterminated array")
		return false
	}
	return true
}

func (p *factScanner) null() bool {
	if strings.HasPrefix(p.s[p.i:], "null") {
		p.i += 4
		return true
	}
	return false
}

func (p *factScanner) str() string {
	if !p.value() || p.null() {
		return ""
	}
	return p.quoted()
}

// quoted reads the JSON string at the cursor.
func (p *factScanner) quoted() string {
	if p.s[p.i] != '"' {
		p.fail("expected a string")
		return ""
	}
	j := p.i + 1
	for j < len(p.s) && p.s[j] != '"' && p.s[j] != '\\' {
		j++
	}
	if j < len(p.s) && p.s[j] == '"' {
		v := p.s[p.i+1 : j]
		p.i = j + 1
		return v
	}
	// Escapes (every Windows path has them): unescaped here, as JSON says.
	out := make([]byte, 0, j-p.i+16)
	out = append(out, p.s[p.i+1:j]...)
	for j < len(p.s) {
		c := p.s[j]
		switch {
		case c == '"':
			p.i = j + 1
			return string(out)
		case c != '\\':
			out = append(out, c)
			j++
			continue
		}
		if j+1 >= len(p.s) {
			break
		}
		e := p.s[j+1]
		j += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := p.hex4(j)
			if !ok {
				p.fail("bad \\u escape")
				return ""
			}
			j += 4
			if utf16.IsSurrogate(r) {
				if r2, ok := p.hex4(j + 2); ok && strings.HasPrefix(p.s[j:], `\u`) {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						r = dec
						j += 6
					} else {
						r = utf8.RuneError
					}
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			p.fail("bad escape")
			return ""
		}
	}
	p.fail("unterminated string")
	return ""
}

// hex4 reads the four hex digits at s[i:].
func (p *factScanner) hex4(i int) (rune, bool) {
	if i+4 > len(p.s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(p.s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func (p *factScanner) int() sql.NullInt64 {
	if !p.value() || p.null() {
		return sql.NullInt64{}
	}
	j := p.i
	if j < len(p.s) && p.s[j] == '-' {
		j++
	}
	for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
		j++
	}
	v, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
	if err != nil {
		p.fail("expected an integer")
		return sql.NullInt64{}
	}
	p.i = j
	return sql.NullInt64{Int64: v, Valid: true}
}

func (p *factScanner) boolean() sql.NullBool {
	if !p.value() || p.null() {
		return sql.NullBool{}
	}
	for _, w := range [...]struct {
		text string
		v    bool
	}{{"0", false}, {"1", true}, {"false", false}, {"true", true}} {
		if strings.HasPrefix(p.s[p.i:], w.text) {
			p.i += len(w.text)
			return sql.NullBool{Bool: w.v, Valid: true}
		}
	}
	p.fail("expected 0 or 1")
	return sql.NullBool{}
}

func (p *factScanner) strs() []string {
	if !p.value() || p.null() {
		return nil
	}
	if p.s[p.i] != '[' {
		p.fail("expected a list")
		return nil
	}
	p.i++
	var out []string
	for {
		p.space()
		if p.i >= len(p.s) {
			p.fail("unterminated list")
			return nil
		}
		if p.s[p.i] == ']' {
			p.i++
			return out
		}
		if len(out) > 0 {
			if p.s[p.i] != ',' {
				p.fail("expected , or ]")
				return nil
			}
			p.i++
			p.space()
			if p.i >= len(p.s) {
				p.fail("unterminated list")
				return nil
			}
		}
		v := p.quoted()
		if p.err != nil {
			return nil
		}
		out = append(out, v)
	}
}
