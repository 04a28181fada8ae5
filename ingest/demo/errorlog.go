package demo

import (
	"bufio"
	"container/heap"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/restorewatch/restorewatch/ingest"
)

// logWriter writes one instance's error logs, oldest file first. Restores
// overlap, so their lines are not written in the order they are made: each
// goes to a heap and leaves it once no later restore can print anything
// earlier (runs are handed over in start order, and a restore prints
// nothing before its start).
type logWriter struct {
	g      *gen
	in     *instance
	dir    string
	bounds []boundary // restarts and cycles inside the window; each opens a file
	next   int
	name   string
	f      *os.File
	w      *bufio.Writer
	c      *counter
	utf16  bool
	nl     string
	lines  lineHeap
	floor  time.Time // nothing earlier may be pushed any more
	seq    uint64
	buf    []byte
	pid    int
}

// boundary starts a new error-log file: a service restart, or the weekly
// sp_cycle_errorlog.
type boundary struct {
	at      time.Time
	restart bool
}

type logLine struct {
	at   time.Time // UTC
	seq  uint64    // keeps the order lines were made in for equal times
	src  string
	text string
	cont []string // continuation lines (TAB-led), written after the entry
}

type lineHeap []*logLine

func (h lineHeap) Len() int { return len(h) }
func (h lineHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h lineHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *lineHeap) Push(x any)   { *h = append(*h, x.(*logLine)) }
func (h *lineHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return x
}

func newLogWriter(g *gen, in *instance, bounds []boundary) *logWriter {
	lw := &logWriter{g: g, in: in, bounds: bounds, utf16: !in.linux, nl: "\r\n",
		dir: filepath.Join(g.cfg.Dir, "errorlog", strings.ReplaceAll(in.name, `\`, "_"))}
	if in.linux {
		lw.nl = "\n"
	}
	return lw
}

// push queues one line; t must not be before the last handed-over start.
func (lw *logWriter) push(t time.Time, src, text string, cont ...string) {
	if t.Before(lw.floor) {
		t = lw.floor // cannot happen by construction; keep the file ordered anyway
	}
	lw.seq++
	heap.Push(&lw.lines, &logLine{at: t, seq: lw.seq, src: src, text: text, cont: cont})
}

// advance hands over time t: files whose boundary has come are opened, and
// queued lines up to t are written.
func (lw *logWriter) advance(t time.Time) error {
	for lw.next < len(lw.bounds) && !lw.bounds[lw.next].at.After(t) {
		b := lw.bounds[lw.next]
		if err := lw.flushBefore(b.at, false); err != nil {
			return err
		}
		if err := lw.rotate(b); err != nil {
			return err
		}
		lw.next++
	}
	if t.After(lw.floor) {
		lw.floor = t
	}
	return lw.flushBefore(t, true)
}

// flushBefore writes queued lines before t (or at t when inclusive).
func (lw *logWriter) flushBefore(t time.Time, inclusive bool) error {
	for len(lw.lines) > 0 {
		l := lw.lines[0]
		if l.at.After(t) || !inclusive && l.at.Equal(t) {
			break
		}
		heap.Pop(&lw.lines)
		if lw.w == nil {
			continue // before the first kept file: lost, as on a real server
		}
		lw.entry(l.at, l.src, l.text, l.cont...)
	}
	return nil
}

// finish writes what is left and closes the last file.
func (lw *logWriter) finish(end time.Time) error {
	if err := lw.advance(end); err != nil {
		return err
	}
	if err := lw.flushBefore(end.Add(1000*time.Hour), true); err != nil {
		return err
	}
	return lw.closeFile()
}

func (lw *logWriter) closeFile() error {
	if lw.f == nil {
		return nil
	}
	err := lw.w.Flush()
	if cerr := lw.f.Close(); err == nil {
		err = cerr
	}
	lw.g.bytes += lw.c.n
	lw.f, lw.w = nil, nil
	if err != nil {
		return fmt.Errorf("demo: %s: %w", lw.name, err)
	}
	return nil
}

// rotate closes the current file and opens the next. Archives are numbered
// from the newest: the last boundary's file is ERRORLOG, the one before it
// ERRORLOG.1, and so on (Linux: errorlog, errorlog.1).
func (lw *logWriter) rotate(b boundary) error {
	if err := lw.closeFile(); err != nil {
		return err
	}
	base := "ERRORLOG"
	if lw.in.linux {
		base = "errorlog"
	}
	if n := len(lw.bounds) - 1 - lw.next; n > 0 {
		base += "." + itoa(int64(n))
	}
	lw.name = filepath.Join(lw.dir, base)
	f, w, c, err := createFile(lw.name, lw.g.logBuf)
	if err != nil {
		return err
	}
	lw.f, lw.w, lw.c, lw.g.logBuf = f, w, c, w
	if lw.utf16 {
		_, _ = w.Write([]byte{0xFF, 0xFE})
	}
	lw.g.logFiles = append(lw.g.logFiles, File{Kind: ingest.ErrorLog, Path: lw.name, Instance: lw.in.name})
	lw.startup(b)
	return nil
}

// entry writes one timestamped entry and its continuation lines.
func (lw *logWriter) entry(t time.Time, src, text string, cont ...string) {
	b := appendLogStamp(lw.buf[:0], lw.in.local(t))
	b = append(b, ' ')
	b = append(b, src...)
	for i := len(src); i < 12; i++ {
		b = append(b, ' ')
	}
	if len(src) >= 12 {
		b = append(b, ' ')
	}
	b = append(b, text...)
	b = append(b, lw.nl...)
	for _, c := range cont {
		b = append(b, c...)
		b = append(b, lw.nl...)
	}
	lw.buf = b
	lw.write(b)
}

// write encodes as the platform's SQL Server does: UTF-16LE on Windows,
// UTF-8 on Linux.
func (lw *logWriter) write(b []byte) {
	if !lw.utf16 {
		_, _ = lw.w.Write(b)
		return
	}
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			_ = lw.w.WriteByte(c)
			_ = lw.w.WriteByte(0)
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		i += n
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			_, _ = lw.w.Write([]byte{byte(r1), byte(r1 >> 8), byte(r2), byte(r2 >> 8)})
			continue
		}
		_, _ = lw.w.Write([]byte{byte(r), byte(r >> 8)})
	}
}
