package errorlog_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf16"

	"github.com/restorewatch/restorewatch/ingest/errorlog"
	"github.com/restorewatch/restorewatch/store"
)

// result is everything one Parse produced.
type result struct {
	got   store.Collect
	stats errorlog.Stats
	err   error
}

func parseBytes(t testing.TB, name string, b []byte, instance string) result {
	t.Helper()
	var r result
	r.stats, r.err = errorlog.Parse(context.Background(), bytes.NewReader(b), errorlog.Options{File: name, Instance: instance}, &r.got)
	return r
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// toUTF16LE re-encodes UTF-8 text as a Windows ERRORLOG is written: UTF-16LE,
// optionally with a BOM and CRLF line ends. Bytes that are not UTF-8 (the NUL
// fixture has none, but fuzz seeds may) are carried as U+FFFD.
func toUTF16LE(b []byte, bom, crlf bool) []byte {
	if crlf {
		b = bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
	}
	var out bytes.Buffer
	if bom {
		out.Write([]byte{0xFF, 0xFE})
	}
	var u [2]byte
	for _, c := range utf16.Encode([]rune(string(b))) {
		binary.LittleEndian.PutUint16(u[:], c)
		out.Write(u[:])
	}
	return out.Bytes()
}
