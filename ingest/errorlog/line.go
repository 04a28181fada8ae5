package errorlog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"
)

// maxLine bounds one physical line so memory stays flat on garbage input (a
// file without newlines); the rest of such a line is skipped and reported.
const maxLine = 4 << 20

// lineReader yields physical lines of UTF-8 text without their line ending.
// The slice it returns is valid until the next call.
type lineReader struct {
	br        *bufio.Reader
	long      []byte // assembles lines longer than the bufio buffer
	truncated bool   // the last line was longer than maxLine
	nuls      int64  // NUL bytes dropped
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: getReader(r)}
}

// readers reuses the 64 KiB buffers of Parse's readers (raw and decoded
// text; rawBufSize and decodedBufSize are the same size): a folder of
// 10,000 small logs allocated and zeroed 2 GB of them with the decoder's, on
// the workers' goroutines. Nothing Parse hands on keeps a slice of them
// (records hold strings).
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, decodedBufSize) }}

func getReader(r io.Reader) *bufio.Reader {
	br := readers.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

func putReader(br *bufio.Reader) {
	br.Reset(nil)
	readers.Put(br)
}

// next returns the next line; io.EOF once there is none.
func (lr *lineReader) next() ([]byte, error) {
	lr.truncated = false
	line, err := lr.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		lr.long = append(lr.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = lr.br.ReadSlice('\n')
			if len(lr.long)+len(line) > maxLine {
				lr.truncated = true
				line = line[:max(0, maxLine-len(lr.long))]
			}
			lr.long = append(lr.long, line...)
		}
		line = lr.long
		if cap(lr.long) > 4*decodedBufSize {
			lr.long = nil // do not keep a huge buffer for the rest of the file
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(line) == 0 && err != nil {
		return nil, io.EOF
	}
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if bytes.IndexByte(line, 0) >= 0 {
		// NUL runs are what a crash leaves in a preallocated log; they are
		// padding, not text, and a line after them is still a good line.
		// Dropping in place is safe: the slice is ours until the next call.
		w := 0
		for _, c := range line {
			if c != 0 {
				line[w] = c
				w++
			}
		}
		lr.nuls += int64(len(line) - w)
		line = line[:w]
	}
	return line, nil
}

// header is the parsed start of an entry line.
type header struct {
	at     time.Time
	source []byte
	text   []byte
}

// looksStamped reports whether a line claims to start an entry: four digits
// and a dash. Other lines, even ones starting with digits ("100 percent"),
// are continuations, as in Filebeat's multiline rule but stricter, so that a
// continuation never gets rejected as a bad timestamp.
func looksStamped(line []byte) bool {
	return len(line) >= 5 && isDigit(line[0]) && isDigit(line[1]) && isDigit(line[2]) &&
		isDigit(line[3]) && line[4] == '-'
}

// junkBeforeStamp returns the length of the byte-order marks (U+FEFF),
// replacement characters (U+FFFD) and undecodable UTF-16 units (badByte)
// at the start of line when a timestamp follows them, else 0. A line that
// does not go on with a timestamp keeps its junk: it is a continuation, or
// damage that the caller rejects.
func junkBeforeStamp(line []byte) int {
	i := 0
	for i < len(line) {
		switch {
		case line[i] == badByte:
			i++
		case hasPrefix(line[i:], "\uFEFF"), hasPrefix(line[i:], "\uFFFD"):
			i += 3
		default:
			if i > 0 && looksStamped(line[i:]) {
				return i
			}
			return 0
		}
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// stampCache remembers the last whole second parsed: lines come in bursts
// within one second and time.Date is the costliest step on the hot path.
type stampCache struct {
	key [19]byte
	sec time.Time
	ok  bool
}

// parseHeader splits "yyyy-MM-dd HH:mm:ss.ff<ws>source<ws>text". The fraction
// has 2 digits in the file and 3 in SSMS/xp_readerrorlog exports; 1 to 7 are
// accepted. Columns are split on runs of spaces or TABs, never on fixed widths.
func (c *stampCache) parseHeader(line []byte) (header, error) {
	var h header
	if len(line) < 19 {
		return h, fmt.Errorf("truncated timestamp %q", clip(line, 30))
	}
	for i := 0; i < 19; i++ {
		want := i != 4 && i != 7 && i != 10 && i != 13 && i != 16
		ok := isDigit(line[i]) == want
		switch i {
		case 4, 7:
			ok = line[i] == '-'
		case 10:
			ok = line[i] == ' ' || line[i] == 'T'
		case 13, 16:
			ok = line[i] == ':'
		}
		if !ok {
			return h, fmt.Errorf("malformed timestamp %q (want yyyy-MM-dd HH:mm:ss.ff)", clip(line, 23))
		}
	}
	if !c.ok || !bytes.Equal(c.key[:], line[:19]) {
		sec, err := civil(line[:19])
		if err != nil {
			return h, err
		}
		copy(c.key[:], line[:19])
		c.sec, c.ok = sec, true
	}
	i := 19
	var nanos int
	if i < len(line) && line[i] == '.' {
		j := i + 1
		scale := 100_000_000
		for j < len(line) && isDigit(line[j]) && j-i <= 7 {
			nanos += int(line[j]-'0') * scale
			scale /= 10
			j++
		}
		if j == i+1 {
			return h, fmt.Errorf("malformed timestamp %q: no digits after the point", clip(line, 23))
		}
		i = j
	}
	if i < len(line) && !isSpace(line[i]) {
		return h, fmt.Errorf("malformed timestamp %q: unexpected %q after it", clip(line, 27), line[i])
	}
	h.at = c.sec.Add(time.Duration(nanos))
	for i < len(line) && isSpace(line[i]) {
		i++
	}
	j := i
	for j < len(line) && !isSpace(line[j]) {
		j++
	}
	h.source = line[i:j]
	for j < len(line) && isSpace(line[j]) {
		j++
	}
	h.text = bytes.TrimRight(line[j:], " \t")
	return h, nil
}

// civil validates and converts "yyyy-MM-dd HH:mm:ss"; time.Date would quietly
// turn month 13 into January of the next year.
func civil(b []byte) (time.Time, error) {
	num := func(s []byte) int {
		n := 0
		for _, c := range s {
			n = n*10 + int(c-'0')
		}
		return n
	}
	y, mo, d := num(b[0:4]), num(b[5:7]), num(b[8:10])
	hh, mm, ss := num(b[11:13]), num(b[14:16]), num(b[17:19])
	bad := func(what string) (time.Time, error) {
		return time.Time{}, fmt.Errorf("invalid timestamp %q: %s out of range", b, what)
	}
	switch {
	case y < 1753: // datetime's floor; an earlier year is damage
		return bad("year")
	case mo < 1 || mo > 12:
		return bad("month")
	case d < 1 || d > daysIn(y, mo):
		return bad("day")
	case hh > 23:
		return bad("hour")
	case mm > 59:
		return bad("minute")
	case ss > 59:
		return bad("second")
	}
	return time.Date(y, time.Month(mo), d, hh, mm, ss, 0, time.UTC), nil
}

func daysIn(y, m int) int {
	switch m {
	case 4, 6, 9, 11:
		return 30
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	}
	return 31
}

// clip shortens b for a message, keeping it valid UTF-8.
func clip(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
}

// damage shows where a line stops being valid UTF-8: its column and the text
// around it, the bad bytes shown as U+FFFD.
func damage(line []byte) string {
	i := 0
	for i < len(line) {
		r, n := utf8.DecodeRune(line[i:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		i += n
	}
	if i == len(line) { // x/text has already turned the damage into U+FFFD
		i = max(0, bytes.Index(line, []byte("\uFFFD")))
	}
	from, to := max(0, i-60), min(len(line), i+20)
	for from > 0 && !utf8.RuneStart(line[from]) {
		from--
	}
	return fmt.Sprintf("column %d in %q", i+1, bytes.ToValidUTF8(line[from:to], []byte("\uFFFD")))
}
