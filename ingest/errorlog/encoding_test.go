package errorlog_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/restorewatch/restorewatch/ingest/errorlog"
)

var update = flag.Bool("update", false, "rewrite the committed UTF-16 fixtures from their UTF-8 sources")

// The same log in every encoding SQL Server and its tools write must give the
// same records: Windows writes UTF-16LE with a BOM and CRLF.
func TestEncodingsGiveSameRecords(t *testing.T) {
	variants := []struct {
		name string
		enc  string
		conv func([]byte) []byte
	}{
		{"utf16le-bom-crlf", errorlog.EncUTF16LEBOM, func(b []byte) []byte { return toUTF16LE(b, true, true) }},
		{"utf16le-nobom-lf", errorlog.EncUTF16LE, func(b []byte) []byte { return toUTF16LE(b, false, false) }},
		{"utf8-bom-crlf", errorlog.EncUTF8BOM, func(b []byte) []byte {
			return append([]byte("\xEF\xBB\xBF"), bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))...)
		}},
		{"utf16be-bom", errorlog.EncUTF16BEBOM, toUTF16BE},
	}
	for _, tc := range fixtureCases() {
		src := fixture(t, tc.file)
		for _, v := range variants {
			t.Run(tc.file+"/"+v.name, func(t *testing.T) {
				r := parseBytes(t, tc.file, v.conv(src), tc.instance)
				if r.stats.Encoding != v.enc {
					t.Errorf("encoding %q, want %q", r.stats.Encoding, v.enc)
				}
				checkCase(t, tc, r)
			})
		}
	}
}

func toUTF16BE(b []byte) []byte {
	out := []byte{0xFE, 0xFF}
	for _, c := range utf16.Encode([]rune(string(b))) {
		out = append(out, byte(c>>8), byte(c))
	}
	return out
}

// committedUTF16 are real UTF-16LE+BOM+CRLF files, kept in Git so that the
// bytes a Windows server writes are tested as bytes, not only as generated.
var committedUTF16 = map[string]string{
	"windows_2019_express_errorlog_bak.utf16le.log": "windows_2019_express_errorlog_bak.log",
	"synthetic_windows_full_diff_log.utf16le.log":   "synthetic_windows_full_diff_log.log",
}

func TestCommittedUTF16Fixtures(t *testing.T) {
	cases := map[string]fixtureCase{}
	for _, tc := range fixtureCases() {
		cases[tc.file] = tc
	}
	for bin, src := range committedUTF16 {
		t.Run(bin, func(t *testing.T) {
			want := toUTF16LE(fixture(t, src), true, true)
			if *update {
				if err := os.WriteFile(filepath.Join("testdata", bin), want, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b := fixture(t, bin)
			if !bytes.Equal(b, want) {
				t.Fatalf("%s is not the UTF-16LE+BOM+CRLF form of %s; run go test -run TestCommittedUTF16Fixtures -update", bin, src)
			}
			if !bytes.HasPrefix(b, []byte{0xFF, 0xFE}) || !bytes.Contains(b, []byte{'\r', 0, '\n', 0}) {
				t.Fatal("not UTF-16LE with BOM and CRLF")
			}
			tc := cases[src]
			r := parseBytes(t, src, b, tc.instance)
			if r.stats.Encoding != errorlog.EncUTF16LEBOM || r.stats.Bytes != int64(len(b)) {
				t.Errorf("stats %+v", r.stats)
			}
			checkCase(t, tc, r)
		})
	}
}

// A UTF-16 file cut inside a code unit loses only the line that was cut.
func TestUTF16CutInsideCodeUnit(t *testing.T) {
	const name = "full_diff_log_norecovery_2023.cut.utf16le.log"
	src := fixture(t, "full_diff_log_norecovery_2023.log")
	full := toUTF16LE(src, true, true)
	cut := full[:len(full)-301] // odd: inside a code unit of the last line
	if *update {
		if err := os.WriteFile(filepath.Join("testdata", name), cut, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b := fixture(t, name)
	if !bytes.Equal(b, cut) || len(b)%2 != 1 {
		t.Fatalf("%s is not the cut copy; run with -update", name)
	}
	r := parseBytes(t, name, b, "LNX06")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.got.LogRestores) != 2 || r.got.LogRestores[1].Kind != "diff" || !r.got.LogRestores[1].Has3014 {
		t.Fatalf("restores %+v", r.got.LogRestores)
	}
	if len(r.got.Rejects) != 1 || r.got.Rejects[0].Line != 11 || !strings.Contains(r.got.Rejects[0].Reason, "invalid UTF-16") {
		t.Fatalf("rejects %q", r.got.Rejects)
	}
	if !strings.Contains(r.got.Rejects[0].Reason, "\uFFFD") {
		t.Errorf("reject %q does not show the replacement character", r.got.Rejects[0].Reason)
	}
}

// The big-endian path (x/text) rejects a cut line too.
func TestUTF16BECut(t *testing.T) {
	b := toUTF16BE(fixture(t, "full_diff_log_norecovery_2023.log"))
	r := parseBytes(t, "be", b[:len(b)-301], "I")
	if len(r.got.LogRestores) != 2 || len(r.got.Rejects) != 1 || r.got.Rejects[0].Line != 11 ||
		!strings.Contains(r.got.Rejects[0].Reason, "invalid UTF-16") {
		t.Fatalf("%d restores, rejects %q", len(r.got.LogRestores), r.got.Rejects)
	}
}

// An unpaired surrogate in one line rejects that line; its neighbours stay.
func TestUTF16InvalidUnitMidFile(t *testing.T) {
	src := string(fixture(t, "full_diff_log_norecovery_2023.log"))
	lines := strings.SplitAfter(src, "\n")
	var b []byte
	for i, l := range lines {
		enc := toUTF16LE([]byte(l), i == 0, true)
		if i == 5 { // "Starting up database": put a lone high surrogate in it
			enc = append(enc[:40:40], append([]byte{0x00, 0xD8}, enc[40:]...)...)
		}
		b = append(b, enc...)
	}
	r := parseBytes(t, "x", b, "I")
	if len(r.got.LogRestores) != 3 {
		t.Fatalf("%d restores", len(r.got.LogRestores))
	}
	if len(r.got.Rejects) != 1 || r.got.Rejects[0].Line != 6 {
		t.Fatalf("rejects %q", r.got.Rejects)
	}
}

// Invalid UTF-8 rejects the line only.
func TestInvalidUTF8Line(t *testing.T) {
	src := bytes.Replace(fixture(t, "full_diff_log_norecovery_2023.log"), []byte("Starting up"), []byte("Start\xff\xfeing up"), 1)
	r := parseBytes(t, "x", src, "I")
	if len(r.got.LogRestores) != 3 || len(r.got.Rejects) != 1 || r.got.Rejects[0].Line != 6 ||
		!strings.HasPrefix(r.got.Rejects[0].Reason, "invalid UTF-8") {
		t.Fatalf("restores %d rejects %q", len(r.got.LogRestores), r.got.Rejects)
	}
}

// A copy that lost its first byte (a split file) is realigned.
func TestUTF16MissingFirstByte(t *testing.T) {
	b := toUTF16LE(fixture(t, "full_diff_log_norecovery_2023.log"), false, true)[1:]
	r := parseBytes(t, "x", b, "I")
	if r.stats.Encoding != errorlog.EncUTF16LEOdd || len(r.got.LogRestores) != 3 {
		t.Fatalf("encoding %q, %d restores", r.stats.Encoding, len(r.got.LogRestores))
	}
}

func TestSameInputSameRecords(t *testing.T) {
	b := fixture(t, "synthetic_windows_full_diff_log.log")
	a, c := parseBytes(t, "s", b, ""), parseBytes(t, "s", b, "")
	if !reflect.DeepEqual(a, c) {
		t.Fatal("two parses of one input differ")
	}
}
