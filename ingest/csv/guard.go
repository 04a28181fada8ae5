package csv

import (
	"bytes"
	"io"
)

// MaxRecord bounds one CSV record (all its physical lines, quoted newlines
// included). A history row is a few hundred bytes and the longest real one,
// a restore of hundreds of files listed in destination_files, stays far
// under a MiB; a longer record is garbage (a file that lost its line ends,
// a run of NUL bytes), and holding it whole once took gigabytes.
const MaxRecord = 4 << 20

// oversize is a record the guard dropped because it was longer than max.
type oversize struct {
	line, endLine int // physical lines where it started and ended
}

// guard sits between the decoded text and encoding/csv and hands on only
// whole records of at most max bytes, so encoding/csv, which holds a record
// whole, never holds more. It follows encoding/csv's quoting rules (strict
// quotes, comma the delimiter) closely enough to see where each record
// ends. A longer record is dropped from its first byte to the end of the
// physical line where it passed the limit, and replaced by as many empty
// lines, which encoding/csv skips while still counting them, so later line
// numbers stay true; the parser reports the drop from events.
type guard struct {
	r     io.Reader
	comma byte
	max   int

	buf   []byte
	out   int // buf[out:ready] is whole records not yet read
	ready int // buf[ready:] is the record in progress
	scan  int // bytes of buf before scan have been classified
	err   error

	state     uint8
	line      int // physical line at scan
	recLine   int // physical line where the record in progress started
	recLF     int // newlines inside the record in progress
	skipping  bool
	skipStart int
	skipLF    int

	events []oversize
}

const guardChunk = 64 << 10

// States of encoding/csv's field parser (see its readRecord).
const (
	gOut uint8 = iota // outside quotes: at a field's start or in an unquoted field
	gQuoted
	gQuote   // a quote inside a quoted field: the end of it, or an escape
	gQuoteCR // `"\r`: the end of the line if \n follows
	gBad     // a quoting error: encoding/csv drops the rest of the line
)

func newGuard(r io.Reader, comma byte, max int) *guard {
	return &guard{r: r, comma: comma, max: max, line: 1, recLine: 1, buf: make([]byte, 0, guardChunk)}
}

// Read implements io.Reader.
func (g *guard) Read(p []byte) (int, error) {
	for g.out == g.ready {
		if g.err != nil {
			// At the end the record in progress is handed on as it is:
			// encoding/csv reads a last line without a newline, and
			// reports an unclosed quote.
			if g.ready < len(g.buf) {
				g.ready = len(g.buf)
				break
			}
			if g.skipping {
				// The oversize record ran to the end of the input.
				g.skipping = false
				g.events = append(g.events, oversize{line: g.skipStart, endLine: g.skipStart + g.skipLF})
				g.buf = append(g.buf[:0], bytes.Repeat(nl, g.skipLF)...)
				g.out, g.ready, g.scan = 0, len(g.buf), len(g.buf)
				continue
			}
			return 0, g.err
		}
		g.fill()
	}
	n := copy(p, g.buf[g.out:g.ready])
	g.out += n
	return n, nil
}

// fill reads more input and classifies it. It is called only when every
// whole record has been read, so buf holds just the record in progress.
func (g *guard) fill() {
	if g.out > 0 {
		k := copy(g.buf, g.buf[g.out:])
		g.buf = g.buf[:k]
		g.ready -= g.out
		g.scan -= g.out
		g.out = 0
	}
	if cap(g.buf)-len(g.buf) < guardChunk/2 {
		// Double, so a record growing towards max is copied a few times,
		// not once per chunk.
		nb := make([]byte, len(g.buf), max(2*cap(g.buf), len(g.buf)+guardChunk))
		copy(nb, g.buf)
		g.buf = nb
	}
	// One chunk at a time, so a record is caught within a chunk of the
	// limit and the skip starts near where it passed it.
	n, err := g.r.Read(g.buf[len(g.buf):min(cap(g.buf), len(g.buf)+guardChunk)])
	g.buf = g.buf[:len(g.buf)+n]
	if err != nil {
		g.err = err
	}
	if g.skipping {
		g.skip()
		return
	}
	g.classify()
}

// skip drops input up to the end of the physical line on which an oversize
// record passed the limit, then hands on one newline for each line dropped
// and classifies what follows as a fresh record.
func (g *guard) skip() {
	i := bytes.IndexByte(g.buf, '\n')
	if i < 0 {
		g.buf = g.buf[:0]
		return
	}
	g.skipping = false
	lf := g.skipLF + 1
	rest := len(g.buf) - (i + 1)
	if lf <= i+1 {
		// The dropped bytes make room for the newlines in place.
		copy(g.buf[lf:], g.buf[i+1:])
	} else {
		nb := make([]byte, lf+rest, max(cap(g.buf), lf+rest+guardChunk))
		copy(nb[lf:], g.buf[i+1:])
		g.buf = nb
	}
	g.buf = g.buf[:lf+rest]
	for k := 0; k < lf; k++ {
		g.buf[k] = '\n'
	}
	g.events = append(g.events, oversize{line: g.skipStart, endLine: g.skipStart + g.skipLF})
	g.line += lf
	g.recLine, g.recLF = g.line, 0
	g.state = gOut
	g.ready, g.scan = lf, lf
	g.classify()
}

// classify runs encoding/csv's quoting rules over buf[scan:], moving ready
// to the end of the last whole record, and starts skipping when the record
// in progress outgrows max (so a record handed on is at most max plus one
// chunk long).
func (g *guard) classify() {
	b, comma := g.buf, g.comma
	st := g.state
	i := g.scan
	lf := -1 // the next newline at or after i, len(b) if none; -1 unknown
scan:
	for i < len(b) {
		switch st {
		case gOut:
			// Jump to the next quote before the end of the line: with
			// none, the line ends the record.
			if lf < i {
				lf = bytes.IndexByte(b[i:], '\n')
				if lf < 0 {
					lf = len(b)
				} else {
					lf += i
				}
			}
			q := bytes.IndexByte(b[i:lf], '"')
			if q < 0 {
				if lf == len(b) {
					i = len(b)
					break scan
				}
				i = lf + 1
				g.endRecord(i)
				continue
			}
			q += i
			i = q + 1
			if q == g.ready || b[q-1] == comma {
				st = gQuoted // a quote that opens a field
			} else {
				st = gBad // a quote inside an unquoted field
			}
		case gQuoted:
			// Jump to the next quote, counting the newlines on the way.
			j := bytes.IndexByte(b[i:], '"')
			if j < 0 {
				g.recLF += bytes.Count(b[i:], nl)
				i = len(b)
				break scan
			}
			g.recLF += bytes.Count(b[i:i+j], nl)
			i += j + 1
			st = gQuote
		case gQuote:
			c := b[i]
			i++
			switch c {
			case '"':
				st = gQuoted // an escaped quote
			case comma:
				st = gOut
			case '\n':
				st = gOut
				g.endRecord(i)
			case '\r':
				st = gQuoteCR
			default:
				st = gBad
			}
		case gQuoteCR:
			if b[i] == '\n' {
				i++
				st = gOut
				g.endRecord(i)
			} else {
				st = gBad
			}
		case gBad:
			// encoding/csv drops the rest of the line after a quoting error.
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 {
				i = len(b)
				break scan
			}
			i += j + 1
			st = gOut
			g.endRecord(i)
		}
	}
	g.state, g.scan = st, i
	if len(b)-g.ready > g.max {
		// Drop the record in progress (every newline in it is inside
		// quotes, or it would have ended) and skip to the next newline
		// whatever the quotes say: a record this long has no quoting left
		// worth following.
		g.skipping = true
		g.skipStart, g.skipLF = g.recLine, g.recLF
		g.buf = g.buf[:g.ready]
		g.scan = g.ready
		g.state = gOut
	}
}

// endRecord marks buf[:end] as whole records.
func (g *guard) endRecord(end int) {
	g.line += g.recLF + 1
	g.ready = end
	g.recLine, g.recLF = g.line, 0
}

var nl = []byte{'\n'}
