// Package textenc decodes the text files DBAs hand restorewatch — CSV
// exports and captured client output — to UTF-8, whatever Windows tool wrote
// them, and counts the raw bytes read for progress reports. (The error-log
// parser has its own, faster UTF-16 decoder for files of hundreds of MB.)
package textenc

import (
	"bufio"
	"io"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// BufSize is large enough that an encoding/csv Reader's own bufio.NewReader
// reuses ours instead of stacking a second buffer on top.
const BufSize = 64 << 10

// UTF8Reader returns r decoded to UTF-8. Files arrive as UTF-8 with or
// without a BOM (SSMS, sqlcmd -f 65001, PowerShell 7) or UTF-16 with a BOM
// (PowerShell 5 Export-Csv -Encoding Unicode, sqlcmd -u, SSMS "Save with
// Encoding… Unicode"); a UTF-16LE file that lost its BOM is still recognised
// by its zero high bytes, which mostly-ASCII headers and engine messages make
// unmistakable.
func UTF8Reader(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, BufSize)
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
	return bufio.NewReaderSize(transform.NewReader(r, dec), BufSize)
}

// CountingReader counts the raw bytes read, so progress reflects the file's
// size on disk whatever its encoding, and reports them at most once per
// progressStep so a terminal progress bar does not slow the parse.
type CountingReader struct {
	R        io.Reader
	N        int64
	Progress func(int64) // optional
	reported int64
}

const progressStep = 1 << 20

// Read implements io.Reader.
func (c *CountingReader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += int64(n)
	if c.Progress != nil && c.N-c.reported >= progressStep {
		c.reported = c.N
		c.Progress(c.N)
	}
	return n, err
}

// Done reports the final count once.
func (c *CountingReader) Done() {
	if c.Progress != nil && c.N != c.reported {
		c.reported = c.N
		c.Progress(c.N)
	}
}
