package errorlog

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// Encoding names reported in Stats.Encoding.
const (
	EncUTF8       = "UTF-8"
	EncUTF8BOM    = "UTF-8 BOM"
	EncUTF16LE    = "UTF-16LE"
	EncUTF16LEBOM = "UTF-16LE BOM"
	EncUTF16BEBOM = "UTF-16BE BOM"
	EncUTF16LEOdd = "UTF-16LE (first byte missing)"
)

const (
	sniffLen       = 4096
	rawBufSize     = 64 << 10
	badByte        = 0xFF // marks an undecodable code unit; see utf16LEReader
	decodedBufSize = 64 << 10
)

// countingReader counts the raw bytes read so Stats.Bytes and Progress report
// file bytes, not decoded bytes (UTF-16 halves in UTF-8).
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// text is the decoded stream and how to tell its damaged lines.
type text struct {
	r   io.Reader
	enc string
	dec *utf16LEReader // the UTF-16LE decoder, if any: damage shows as badByte
	// fffd: damage shows as U+FFFD (x/text's UTF-16BE decoder).
	fffd bool
}

// damaged reports whether a line holds undecodable input. UTF-8 lines are
// always checked; UTF-16LE lines only once the decoder has met damage, so a
// clean Windows log pays nothing.
func (t *text) damaged(line []byte) bool {
	switch {
	case t.fffd:
		return bytes.Contains(line, []byte("\uFFFD"))
	case t.dec != nil && t.dec.bad == 0 && !t.dec.sawUTF8:
		return false
	}
	return !utf8.Valid(line)
}

// openText sniffs the encoding of the raw stream and returns it as UTF-8 text.
func openText(raw *bufio.Reader) text {
	head, _ := raw.Peek(sniffLen) // a short file is fine: Peek returns what there is
	switch {
	case len(head) >= 2 && head[0] == 0xFF && head[1] == 0xFE:
		_, _ = raw.Discard(2)
		d := newMixedReader(raw, false)
		return text{r: d, enc: EncUTF16LEBOM, dec: d}
	case len(head) >= 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF:
		_, _ = raw.Discard(3)
		d := newMixedReader(raw, true)
		return text{r: d, enc: EncUTF8BOM, dec: d}
	case len(head) >= 2 && head[0] == 0xFE && head[1] == 0xFF:
		// SQL Server never writes big-endian; a converted copy might. It is
		// rare enough that x/text's general decoder is fast enough for it.
		_, _ = raw.Discard(2)
		dec := unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM).NewDecoder()
		return text{r: transform.NewReader(raw, dec), enc: EncUTF16BEBOM, fffd: true}
	}
	if _, ok := utf8Ahead(head); ok {
		// A UTF-8 timestamp first: a UTF-16 log pasted after it may be
		// the larger part of the head, but the file starts in UTF-8.
		d := newMixedReader(raw, true)
		return text{r: d, enc: EncUTF8, dec: d}
	}
	switch sniffUTF16(head) {
	case 1:
		d := newMixedReader(raw, false)
		return text{r: d, enc: EncUTF16LE, dec: d}
	case 2:
		// NULs at even offsets: UTF-16LE text that lost its first byte (a
		// tail or a split copy). Realigned, only the first line is damaged.
		_, _ = raw.Discard(1)
		d := newMixedReader(raw, false)
		return text{r: d, enc: EncUTF16LEOdd, dec: d}
	}
	d := newMixedReader(raw, true)
	return text{r: d, enc: EncUTF8, dec: d}
}

// sniffUTF16 looks at byte pairs: ASCII text in UTF-16LE is (char, 0) pairs.
// A run of NUL bytes (a crashed log's tail) is (0, 0) pairs and counts for
// nothing, so a UTF-8 file with NUL runs is not mistaken for UTF-16.
// It returns 0 for "not UTF-16", 1 for UTF-16LE, 2 for UTF-16LE shifted by a byte.
func sniffUTF16(head []byte) int {
	var le, be, other int
	for i := 0; i+1 < len(head); i += 2 {
		a, b := head[i], head[i+1]
		switch {
		case a != 0 && b == 0:
			le++
		case a == 0 && b != 0:
			be++
		case a != 0 && b != 0:
			other++
		}
	}
	switch {
	case le > 0 && le >= be && le*2 >= le+be+other:
		return 1
	case be > 0 && be*2 >= le+be+other:
		return 2
	}
	return 0
}

// utf16LEReader decodes UTF-16LE into UTF-8. It replaces x/text's decoder on
// the hot path: Windows error logs are UTF-16LE and mostly ASCII, and a loop
// that moves four ASCII code units per step is several times faster (see
// BenchmarkDecodeUTF16). Invalid input (an unpaired surrogate, a lone last
// byte) becomes badByte where x/text writes U+FFFD (FuzzUTF16 checks the two
// agree otherwise): a byte that is never valid UTF-8 lets the line reader find
// damaged lines with utf8.Valid, and tell them from a U+FFFD the file holds.
//
// In mixed mode (newMixedReader) it also follows a file whose encoding
// changes at a line start: "cat ERRORLOG.1 ERRORLOG > all.log" of two UTF-16
// logs puts a byte-order mark in mid-file, and a UTF-16 log appended to a
// UTF-8 file (or the reverse) changes the encoding there. At each line start
// it looks at the next bytes: a byte-order mark is dropped (and names the
// encoding that follows), and a timestamp written in the other encoding
// switches to it. Only a line start is examined, and only for a shape that
// text in the current encoding cannot take, so a file in one encoding reads
// exactly as before.
type utf16LEReader struct {
	r       io.Reader
	raw     []byte
	lo, hi  int
	eof     bool
	err     error
	bad     int64 // bad bytes written; lines need checking only once this is > 0
	pend    [utf8.UTFMax]byte
	pendN   int // pend[pendOff:pendN] is decoded text not yet handed out
	pendOff int

	mixed     bool  // follow encoding changes at line starts
	utf8      bool  // the current segment is UTF-8, copied as is
	sawUTF8   bool  // some segment was UTF-8: its lines need validating
	lineStart bool  // the next byte starts a line
	switches  int64 // encoding changes inside the file
	boms      int64 // byte-order marks dropped at line starts
}

func newUTF16LEReader(r io.Reader) *utf16LEReader {
	return &utf16LEReader{r: r, raw: *raws.Get().(*[]byte)}
}

// raws reuses the decoders' raw buffers, as readers does the text's.
var raws = sync.Pool{New: func() any { b := make([]byte, rawBufSize); return &b }}

// release hands d's buffer back; d is not read again.
func (d *utf16LEReader) release() {
	if d != nil && d.raw != nil {
		b := d.raw
		d.raw = nil
		raws.Put(&b)
	}
}

// newMixedReader decodes a file that starts in UTF-8 (utf8) or UTF-16LE
// and may change encoding at a line start.
func newMixedReader(r io.Reader, utf8 bool) *utf16LEReader {
	d := newUTF16LEReader(r)
	d.mixed, d.utf8, d.sawUTF8, d.lineStart = true, utf8, utf8, true
	return d
}

// fill reads more raw bytes, keeping the unread tail (at most 3 bytes of a
// split code unit or surrogate pair) at the front.
func (d *utf16LEReader) fill() {
	if d.lo > 0 {
		d.hi = copy(d.raw, d.raw[d.lo:d.hi])
		d.lo = 0
	}
	for d.hi < len(d.raw) && !d.eof {
		n, err := d.r.Read(d.raw[d.hi:])
		d.hi += n
		if err != nil {
			d.eof = true
			if err != io.EOF {
				d.err = err
			}
		}
		if n > 0 {
			return
		}
	}
}

// Read implements io.Reader.
func (d *utf16LEReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if d.pendOff < d.pendN {
		n := copy(p, d.pend[d.pendOff:d.pendN])
		d.pendOff += n
		return n, nil
	}
	if len(p) < utf8.UTFMax {
		// bufio may offer a few bytes at the end of its buffer: decode one
		// rune aside and hand it out in pieces.
		n, err := d.Read(d.pend[:])
		if n == 0 {
			return 0, err
		}
		d.pendN, d.pendOff = n, 0
		return d.Read(p)
	}
	for {
		if (d.hi-d.lo < 4 || d.lineStart && d.hi-d.lo < switchLook) && !d.eof {
			d.fill()
		}
		n := d.decode(p)
		if n > 0 {
			return n, nil
		}
		if d.eof && d.lo == d.hi {
			if d.err != nil {
				return 0, d.err
			}
			return 0, io.EOF
		}
	}
}

// decode converts as much of raw[lo:hi] into p as fits and returns the bytes written.
func (d *utf16LEReader) decode(p []byte) int {
	if d.utf8 {
		return d.copyUTF8(p)
	}
	raw, i, hi, n := d.raw, d.lo, d.hi, 0
	for n+utf8.UTFMax <= len(p) {
		if d.lineStart {
			if hi-i < switchLook && !d.eof {
				break // Read fills and comes back
			}
			d.lineStart = false
			if skip, ok := utf8Ahead(raw[i:hi]); ok {
				d.lo = i + skip
				d.boms += int64(min(skip, 1))
				d.utf8, d.sawUTF8 = true, true
				d.switches++
				return n + d.copyUTF8(p[n:])
			}
			if hi-i >= 2 && raw[i] == 0xFF && raw[i+1] == 0xFE {
				i += 2 // the next UTF-16 file of a concatenation
				d.boms++
			}
		}
		// Fast path: four ASCII code units in one 8-byte load. In mixed
		// mode a line feed among them ends the step, so that the line
		// start after it is looked at.
		if i+8 <= hi && n+4 <= len(p) {
			v := binary.LittleEndian.Uint64(raw[i:])
			if v&0xFF80FF80FF80FF80 == 0 {
				if d.mixed && hasLF(v) {
					k := 0
					for byte(v>>(16*k)) != '\n' {
						p[n+k] = byte(v >> (16 * k))
						k++
					}
					p[n+k] = '\n'
					n += k + 1
					i += 2 * (k + 1)
					d.lineStart = true
					continue
				}
				p[n], p[n+1], p[n+2], p[n+3] = byte(v), byte(v>>16), byte(v>>32), byte(v>>48)
				n += 4
				i += 8
				continue
			}
		}
		if i+1 >= hi {
			if i < hi && d.eof {
				// A file cut inside a code unit.
				p[n] = badByte
				n++
				d.bad++
				i++
			}
			break
		}
		r := rune(raw[i]) | rune(raw[i+1])<<8
		size := 2
		if r >= 0xD800 && r <= 0xDFFF {
			if i+3 < hi {
				r2 := rune(raw[i+2]) | rune(raw[i+3])<<8
				if r2 >= 0xDC00 && r2 <= 0xDFFF {
					if r <= 0xDBFF {
						r = (r-0xD800)<<10 | (r2 - 0xDC00) + 0x10000
					} else {
						r = utf8.RuneError
					}
					size = 4
				}
			} else if !d.eof {
				break // the pair may continue in the next read
			}
			if r >= 0xD800 && r <= 0xDFFF || r == utf8.RuneError {
				p[n] = badByte
				n++
				d.bad++
				i += size
				continue
			}
		}
		if r < utf8.RuneSelf {
			p[n] = byte(r)
			n++
			if r == '\n' && d.mixed {
				d.lineStart = true
			}
		} else {
			n += utf8.EncodeRune(p[n:], r)
		}
		i += size
	}
	d.lo = i
	return n
}
