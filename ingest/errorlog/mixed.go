package errorlog

import (
	"bytes"
	"unicode/utf8"
)

// The mixed-encoding side of utf16LEReader (see its comment): what a line
// start may switch to, and the UTF-8 segments handed on as they are.

// switchLook is how many bytes a line start needs to be judged: a UTF-16
// timestamp "yyyy-" is 10 bytes.
const switchLook = 10

// utf16Ahead reports whether b (at a line start of UTF-8 text) begins
// UTF-16LE text, and how many bytes of byte-order mark to drop.
func utf16Ahead(b []byte) (skip int, ok bool) {
	if len(b) >= 2 && b[0] == 0xFF && b[1] == 0xFE {
		return 2, true
	}
	if len(b) < 10 {
		return 0, false
	}
	for i := 0; i < 10; i += 2 {
		if b[i+1] != 0 || (i < 8 && !isDigit(b[i])) || (i == 8 && b[i] != '-') {
			return 0, false
		}
	}
	return 0, true
}

// utf8Ahead reports whether b (at a line start of UTF-16LE text) begins
// UTF-8 text: a UTF-8 byte-order mark, or a timestamp "yyyy-MM-dd" whose
// bytes, read as UTF-16, would be five CJK symbols in a row.
func utf8Ahead(b []byte) (skip int, ok bool) {
	if len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		return 3, true
	}
	if len(b) < 10 {
		return 0, false
	}
	for i := 0; i < 10; i++ {
		want := isDigit(b[i])
		if i == 4 || i == 7 {
			want = b[i] == '-'
		}
		if !want {
			return 0, false
		}
	}
	return 0, true
}

// hasLF reports whether one of the four ASCII code units in v is '\n'.
func hasLF(v uint64) bool {
	x := v ^ 0x000A000A000A000A
	return (x-0x0001000100010001)&^x&0x8000800080008000 != 0
}

// copyUTF8 hands out a UTF-8 segment as is, a line at a time so that each
// line start can be looked at.
func (d *utf16LEReader) copyUTF8(p []byte) int {
	n := 0
	for n < len(p) {
		if d.lineStart {
			if d.hi-d.lo < switchLook && !d.eof || len(p)-n < utf8.UTFMax {
				break // Read fills, or the caller comes back with room
			}
			d.lineStart = false
			if skip, ok := utf16Ahead(d.raw[d.lo:d.hi]); ok {
				d.lo += skip
				d.boms += int64(min(skip, 1))
				d.utf8 = false
				d.switches++
				return n + d.decode(p[n:])
			}
			if b := d.raw[d.lo:d.hi]; len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
				d.lo += 3 // the next UTF-8 file of a concatenation
				d.boms++
			}
		}
		chunk := d.raw[d.lo:d.hi]
		if len(chunk) == 0 {
			break
		}
		m := min(len(chunk), len(p)-n)
		// Only a line that starts with FF FE, EF BB BF or "<digit> NUL"
		// changes anything, and such a line holds a 0x00, 0xFF or 0xEF
		// byte at its start: copy up to the first one's line start, which
		// is then looked at. A clean UTF-8 log is copied a buffer at a time.
		if k := firstSpecial(chunk[:m]); k >= 0 {
			ls := bytes.LastIndexByte(chunk[:k], '\n') + 1
			if ls > 0 && k-ls <= 1 {
				m = ls
				d.lineStart = true
			} else {
				m = k + 1
			}
		}
		copy(p[n:], chunk[:m])
		n += m
		d.lo += m
		if chunk[m-1] == '\n' {
			d.lineStart = true
		}
	}
	return n
}

// firstSpecial returns the index of the first 0x00, 0xFF or 0xEF byte of b,
// or -1: the bytes that can start a change of encoding at a line start.
func firstSpecial(b []byte) int {
	k := -1
	for _, c := range [...]byte{0x00, 0xFF, 0xEF} {
		end := len(b)
		if k >= 0 {
			end = k
		}
		if j := bytes.IndexByte(b[:end], c); j >= 0 {
			k = j
		}
	}
	return k
}
