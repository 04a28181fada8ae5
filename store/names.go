package store

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Names enter the warehouse from many readers: an ERRORLOG decoded from
// UTF-16 (a fixed-width field padded with NUL), a CSV exported by PowerShell
// or sqlcmd (a BOM, a trailing carriage return, a non-breaking space), a
// captured message pasted from a terminal, a collector's configuration. The
// same server must stay one instance whichever reader saw it, so each name
// is normalised here, once, where it enters (Import's records, the
// collector's run, watermark and in-flight records, the lookups by name),
// never by the readers.
//
// What is the same:
//
//   - Instance names (SERVER or SERVER\INSTANCE, and a restore's source
//     server): SQL Server names a host and an instance with letters, digits,
//     '-', '_', '$' and '.', never with a control or invisible character or
//     with surrounding space. So: invalid UTF-8 becomes U+FFFD; NUL, the C0
//     and C1 controls and DEL are removed wherever they are; so are
//     invisible format characters (Unicode Cf: zero-width space and joiners,
//     direction marks, the BOM, the soft hyphen); surrounding white space
//     (Unicode, the no-break space included) is trimmed; the result is in
//     Unicode normal form C, so a name composed (é) and decomposed (e +
//     U+0301) is one name. Letter case is compared by the warehouse
//     (instance.name is COLLATE NOCASE), as SQL Server compares server
//     names.
//   - Database names: SQL Server accepts almost any character in a
//     delimited identifier — spaces, leading and trailing ones included,
//     quotes, brackets, any script, joiners (Persian needs U+200C) — and a
//     binary collation tells composed from decomposed forms. Only what no
//     reader can have seen on screen is removed: NUL, the C0 and C1
//     controls and DEL; invalid UTF-8 becomes U+FFFD. Nothing is trimmed or
//     recomposed.

// InstanceName returns the warehouse's form of an instance (or server) name.
func InstanceName(s string) string {
	if plainInstance(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if isControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)
	return strings.TrimFunc(norm.NFC.String(s), unicode.IsSpace)
}

// DatabaseName returns the warehouse's form of a database name.
func DatabaseName(s string) string {
	if plainDatabase(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return -1
		}
		return r
	}, s)
}

// isControl: NUL, C0, DEL and C1.
func isControl(r rune) bool { return r < 0x20 || r >= 0x7f && r <= 0x9f }

// plainInstance says whether s is printable ASCII without surrounding
// space: nearly every name, which then costs no allocation.
func plainInstance(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	return plainDatabase(s)
}

// plainDatabase says whether s is printable ASCII.
func plainDatabase(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}
