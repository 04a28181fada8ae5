package messages

import (
	"bufio"
	"io"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

const bufSize = 64 << 10

// utf8Reader returns r decoded to UTF-8. Captured output arrives as UTF-8
// with or without a BOM (SSMS "Save As" UTF-8, sqlcmd -o, a paste) or
// UTF-16LE with a BOM (SSMS "Save with Encoding... Unicode", sqlcmd -u); a
// UTF-16 file that lost its BOM is still recognised by its zero high bytes,
// which the mostly ASCII engine messages make unmistakable. It is a copy of
// ingest/csv's decoder: each import package owns its files' encodings.
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

// countingReader counts the raw bytes read, for Stats.Bytes.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
