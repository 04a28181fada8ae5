package view

import (
	"bytes"
	"fmt"
	"testing"
	"unicode/utf8"
)

// visibleSlow is VisibleBytes as it was before its scan learnt to skip
// what cannot start an Invisible character: every rune decoded.
func visibleSlow(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
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

// The fast scan shows exactly what decoding every rune shows, on markup
// full of dashes and arrows, on hidden characters anywhere in it and on
// bytes that are not UTF-8.
func FuzzVisibleBytes(f *testing.F) {
	for _, s := range []string{"", "plain", "a — b → c ≤ d · e", "x\u202eexe.jpg", "\u200b", "a\u200cb\u200dc",
		"\xef\xbb\xbfBOM", "\xe2\x80", "\xe2", "\xc2\x85next line", "tab\tnl\ncr\r", "\x00\x7f", "\xd8\x9c", "\xe1\xa0\x8e",
		"é — \xff\xfe broken", "<p>—</p>\u2066isolate\u2069"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := visibleSlow(b)
		got := VisibleBytes(bytes.Clone(b))
		if !bytes.Equal(got, want) {
			t.Fatalf("VisibleBytes(%q) = %q, want %q", b, got, want)
		}
	})
}
