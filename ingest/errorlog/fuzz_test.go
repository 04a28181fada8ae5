package errorlog_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

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
	mixed, _ := filepath.Glob(filepath.Join(realworld, "*.log"))
	files = append(files, mixed...)
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

// FuzzMixed: a UTF-16LE log and a UTF-8 log joined at a line end, either
// way round, decode to the two texts joined, however the reads are cut.
func FuzzMixed(f *testing.F) {
	f.Add("2024-11-01 16:27:05.08 Backup      Restore is complete on database 'A'.\n", "2023-11-24 13:04:00.43 spid77      x\n")
	f.Add("x\n\ty\n", "2023-11-24 13:04:00.43 Backup      Café 'Склад'\n")
	f.Add("", "2023-11-24")
	f.Add("x\n", "2022-12-17 05:51:02.10 Backup      RESTORE DATABASE により １３９３０ ページ\n２０２２\n\uFF21\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) || strings.ContainsAny(a+b, "\x00\uFEFF\uFFFD\r") ||
			!strings.HasSuffix(a, "\n") || len(b) < 10 || !isStamp(b) || strings.Contains(a, "\n2") {
			return
		}
		u16 := func(s string) []byte { return toUTF16LE([]byte(s), true, false) }
		for _, tc := range []struct {
			in   []byte
			want string
		}{
			{append(u16(a), b...), a + b},         // UTF-8 appended to UTF-16
			{append([]byte(a), u16(b)...), a + b}, // UTF-16 pasted into UTF-8
		} {
			for _, wrap := range []func(io.Reader) io.Reader{func(r io.Reader) io.Reader { return r }, iotest.OneByteReader, iotest.HalfReader} {
				got, err := io.ReadAll(errorlog.NewMixedReader(wrap(bytes.NewReader(tc.in)), tc.in[0] != 0xFF))
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != tc.want {
					t.Fatalf("decoded %q, want %q", got, tc.want)
				}
			}
		}
	})
}

// isStamp reports whether s starts with "yyyy-MM-dd".
func isStamp(s string) bool {
	for i := 0; i < 10; i++ {
		c := s[i]
		if (i == 4 || i == 7) != (c == '-') || (i != 4 && i != 7 && (c < '0' || c > '9')) {
			return false
		}
	}
	return true
}
