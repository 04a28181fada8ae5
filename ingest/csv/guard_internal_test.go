package csv

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"
)

// FuzzGuard checks the record guard on its own, with a tiny limit and input
// fed one byte at a time so that every record boundary falls between reads:
// it hands on the input unchanged unless it reports a drop, keeps every
// newline (so line numbers after a drop stay true), and reports drops in
// order at lines the input has. (An internal test: the guard is not part of
// the package's API, and through Parse its limit is 4 MiB.)
func FuzzGuard(f *testing.F) {
	f.Add([]byte("a,b\n\"x\ny\",z\n"), uint8(3), false)
	f.Add([]byte("a;\"b\"\"c\";d\r\n\"unclosed\nline\nline\n"), uint8(5), true)
	f.Add([]byte("ab\"c\nd,\"e\"x,f\n"), uint8(2), false)
	f.Add(bytes.Repeat([]byte{0}, 300), uint8(16), false)
	f.Fuzz(func(t *testing.T, data []byte, limit uint8, semicolon bool) {
		comma := byte(',')
		if semicolon {
			comma = ';'
		}
		g := newGuard(iotest.OneByteReader(bytes.NewReader(data)), comma, int(limit)+1)
		out, err := io.ReadAll(g)
		if err != nil {
			t.Fatal(err)
		}
		if len(g.events) == 0 && !bytes.Equal(out, data) {
			t.Fatalf("no drop reported, but the output differs:\n in %q\nout %q", data, out)
		}
		if in, got := bytes.Count(data, nl), bytes.Count(out, nl); in != got {
			t.Fatalf("%d newlines in, %d out", in, got)
		}
		if len(out) > len(data) {
			t.Fatalf("output longer than input")
		}
		lines := bytes.Count(data, nl) + 1
		prev := 0
		for _, e := range g.events {
			if e.line <= prev || e.endLine < e.line || e.endLine > lines {
				t.Fatalf("drop %+v after line %d, input has %d lines", e, prev, lines)
			}
			prev = e.endLine
		}
	})
}
