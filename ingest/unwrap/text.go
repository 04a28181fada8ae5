package unwrap

import (
	"strings"
	"unicode/utf16"
)

// Text is the one reading of a line of captured client output that kind
// detection and the messages parser share: the line loses what copying it
// into a file added (byte-order marks, replacement characters, NULs of
// UTF-16 pasted into UTF-8, indentation, "-- " comment prefixes), then its
// wrappers (Line), and each text line it carries loses them once more, so
// that a prefix inside a wrapper is gone too. junk reports a byte-order mark
// or replacement characters before the text, bom a byte-order mark among
// them (another file starts here).
func (s *Stripper) Text(raw string) (lines []string, junk, bom bool) {
	t, junk, bom := Undecorate(raw)
	lines = s.Line(t)
	for i, l := range lines {
		lines[i], _, _ = Undecorate(l)
	}
	return lines, junk, bom
}

// Undecorate strips what copying output into a file adds around a message:
// indentation, "-- " comment prefixes, trailing blanks and CR. junk reports
// a byte-order mark or replacement characters before the text, which
// concatenated UTF-16 files and copies from log viewers leave at the start
// of a line, bom a byte-order mark among them (another file starts here);
// NUL bytes (UTF-16 text pasted into a UTF-8 file) are dropped.
func Undecorate(s string) (text string, junk, bom bool) {
	if strings.IndexByte(s, 0) >= 0 {
		s, bom = fromUTF16Line(s)
		junk = bom
	}
	s = strings.TrimSpace(s)
	for {
		switch {
		case strings.HasPrefix(s, "\uFEFF"):
			s, bom = s[3:], true
		case strings.HasPrefix(s, "\uFFFD"):
			s = s[3:]
		case strings.HasPrefix(s, "\xFF\xFE"), strings.HasPrefix(s, "\xFE\xFF"):
			s, bom = s[2:], true // a raw UTF-16 byte-order mark
		default:
			s = strings.TrimSpace(s)
			for strings.HasPrefix(s, "--") {
				s = strings.TrimSpace(s[2:])
			}
			return s, junk, bom
		}
		junk = true
	}
}

// fromUTF16Line decodes a line of UTF-16LE text met in a file read as UTF-8
// (a Unicode SSMS output appended to a UTF-8 one): split at the LF byte, it
// starts with the NUL that completed the previous LF, and the first line of
// the pasted part with the byte-order mark, which bom reports.
func fromUTF16Line(s string) (text string, bom bool) {
	b := []byte(s)
	if len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	if len(b) >= 2 && b[0] == 0xFF && b[1] == 0xFE {
		b, bom = b[2:], true
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
	}
	return string(utf16.Decode(u)), bom
}
