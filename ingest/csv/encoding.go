package csv

import (
	"bufio"
	"io"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// bufSize is large enough that the csv.Reader's own bufio.NewReader reuses
// ours instead of stacking a second buffer on top.
const bufSize = 64 << 10

// utf8Reader returns r decoded to UTF-8. Exports arrive as UTF-8 with or
// without a BOM (SSMS, sqlcmd -f 65001, PowerShell 7) or UTF-16LE with a BOM
// (PowerShell 5 Export-Csv -Encoding Unicode, sqlcmd -u); a UTF-16 file that
// lost its BOM is still recognised by its zero high bytes, because ASCII
// headers make that pattern unmistakable.
func utf8Reader(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, bufSize)
	b, err := br.Peek(4)
	if err != nil && err != io.EOF {
		return nil, err
	}
	switch {
	case len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF:
		_, _ = br.Discard(3)
		return br, nil
	case len(b) >= 2 && b[0] == 0xFF && b[1] == 0xFE:
		return utf16(br, unicode.LittleEndian, unicode.ExpectBOM), nil
	case len(b) >= 2 && b[0] == 0xFE && b[1] == 0xFF:
		return utf16(br, unicode.BigEndian, unicode.ExpectBOM), nil
	case len(b) == 4 && b[0] != 0 && b[1] == 0 && b[2] != 0 && b[3] == 0:
		return utf16(br, unicode.LittleEndian, unicode.IgnoreBOM), nil
	}
	return br, nil
}

func utf16(r io.Reader, e unicode.Endianness, bom unicode.BOMPolicy) io.Reader {
	dec := unicode.UTF16(e, bom).NewDecoder()
	return bufio.NewReaderSize(transform.NewReader(r, dec), bufSize)
}

// countingReader counts the raw bytes read, so progress reflects the file's
// size on disk whatever its encoding, and reports them at most once per
// progressStep so a terminal progress bar does not slow the parse.
type countingReader struct {
	r        io.Reader
	n        int64
	reported int64
	progress func(int64)
}

const progressStep = 1 << 20

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.progress != nil && c.n-c.reported >= progressStep {
		c.reported = c.n
		c.progress(c.n)
	}
	return n, err
}

// done reports the final count once.
func (c *countingReader) done() {
	if c.progress != nil && c.n != c.reported {
		c.reported = c.n
		c.progress(c.n)
	}
}
