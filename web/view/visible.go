package view

import (
	"fmt"
	"unicode/utf8"
)

// Invisible reports a character that changes how the text around it reads
// without being seen: the C0 and C1 controls (tab and line breaks aside),
// the bidirectional overrides, embeddings, isolates and marks (U+202E
// turns "gpj.exe" into what reads as "exe.jpg"), zero-width spaces and
// joiners that are not needed by a script, and the BOM. A database name
// or a host value holding one must not look like another name.
// U+200C and U+200D are not among them: Persian and emoji need them.
func Invisible(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case r < 0x20 || r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x180e, r == 0x200b, r == 0x200e, r == 0x200f, r == 0xfeff:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2060 && r <= 0x2064, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Visible shows every Invisible character of s as its code point, ⟨U+202E⟩,
// and returns s itself when it has none.
func Visible(s string) string { return string(VisibleBytes([]byte(s))) }

// VisibleBytes is Visible for a rendered page: the dashboard's render
// passes every page through it, so no value on any page (names, host
// values, origins, messages) can hide a control character, whichever
// template shows it. The pages' own markup holds none.
func VisibleBytes(b []byte) []byte {
	i := firstInvisible(b)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+64)
	out = append(out, b[:i]...)
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if Invisible(r) {
			out = fmt.Appendf(out, "⟨U+%04X⟩", r)
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// firstInvisible returns the offset of b's first Invisible character, or
// -1. It decodes only at the bytes that can start one (a control byte, or
// the lead byte of a C1 control, U+061C, U+180E or the U+2000 and U+FEFF
// blocks): a page's markup holds many of them (a dash, an arrow, "≤"), its
// text seldom an Invisible one, and every page passes through here.
func firstInvisible(b []byte) int {
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r', c == 0x7f:
			return i
		case c == 0xc2, c == 0xd8, c == 0xe1, c == 0xe2, c == 0xef:
			if r, _ := utf8.DecodeRune(b[i:]); Invisible(r) {
				return i
			}
		}
	}
	return -1
}
