package errorlog_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"testing/iotest"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"

	"github.com/restorewatch/restorewatch/ingest/errorlog"
)

func xtextUTF16LE(r io.Reader) io.Reader {
	return transform.NewReader(r, unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM).NewDecoder())
}

// FuzzParse: arbitrary bytes never panic, every reject names a line of the
// file, every record is valid, and the same bytes give the same records.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.log"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 8<<10 {
			b = b[:8<<10]
		}
		f.Add(b)
		if filepath.Ext(p[:len(p)-4]) == "" {
			f.Add(toUTF16LE(b, true, true))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := parseBytes(t, "fuzz", b, "FUZZ")
		if r.err != nil {
			t.Fatalf("Parse: %v", r.err)
		}
		for _, rj := range r.got.Rejects {
			if rj.Line < 1 || int64(rj.Line) > r.stats.Lines || rj.File != "fuzz" || rj.Reason == "" {
				t.Fatalf("reject %+v with %d lines", rj, r.stats.Lines)
			}
		}
		for _, l := range r.got.LogRestores {
			if err := l.Validate(); err != nil || l.Origin.Line < 1 || int64(l.Origin.Line) > r.stats.Lines {
				t.Fatalf("restore %+v: %v", l, err)
			}
		}
		for _, h := range r.got.Hosts {
			if err := h.Validate(); err != nil {
				t.Fatalf("host %+v: %v", h, err)
			}
		}
		if r.stats.Bytes != int64(len(b)) {
			t.Fatalf("read %d of %d bytes", r.stats.Bytes, len(b))
		}
		if again := parseBytes(t, "fuzz", b, "FUZZ"); !reflect.DeepEqual(again.got, r.got) {
			t.Fatal("same input, different records")
		}
	})
}

// FuzzUTF16 checks the fast decoder against x/text's, whatever the chunking.
func FuzzUTF16(f *testing.F) {
	f.Add([]byte("2\x000\x00\r\x00\n\x00"))
	f.Add([]byte{0x3D, 0xD8, 0x00, 0xDE, 0x41, 0x00, 0x00, 0xD8, 0x42})
	f.Add([]byte{0x00, 0xDC, 0x00, 0xDC, 0xFD, 0xFF, 0xFF})
	f.Fuzz(func(t *testing.T, b []byte) {
		want, err := io.ReadAll(xtextUTF16LE(bytes.NewReader(b)))
		if err != nil {
			t.Fatal(err)
		}
		for _, wrap := range []func(io.Reader) io.Reader{func(r io.Reader) io.Reader { return r }, iotest.OneByteReader, iotest.HalfReader} {
			got, err := io.ReadAll(errorlog.NewUTF16LEReader(wrap(bytes.NewReader(b))))
			if err != nil {
				t.Fatal(err)
			}
			got = bytes.ReplaceAll(got, []byte{errorlog.BadByte}, []byte("\uFFFD"))
			if !bytes.Equal(got, want) {
				t.Fatalf("decoded %q, x/text %q", got, want)
			}
		}
	})
}
