// Package messages imports restores from the captured client output of
// RESTORE statements: the SSMS Messages tab, sqlcmd output and SQL Agent job
// step text. The engine's 3014 line ("RESTORE DATABASE successfully processed
// N pages in X seconds (Y MB/sec).") ends each restore and carries its
// engine-measured duration; the "Processed N pages for database 'D'" lines
// before it name the database; SSMS's "Completion time:" stamp dates it.
package messages

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/ingest/textenc"
	"github.com/restorewatch/restorewatch/store"
)

// Options says where the text comes from and supplies what it lacks: client
// output never names the instance, and only SSMS dates its statements.
type Options struct {
	// File names the input in rejects and record origins.
	File string
	// Instance is the instance that ran the restores; required.
	Instance string
	// Database is used for a restore whose text names no database (an Agent
	// step whose "Processed" messages were cut off, a bare 3014 line).
	Database string
	// At is the completion time for restores not followed by a Completion
	// time stamp (sqlcmd, Agent text): its wall clock and offset are kept.
	// Zero leaves those restores without a time.
	At time.Time
}

// Stats counts what a parse read.
type Stats struct {
	Lines    int64 // physical lines read
	Restores int64 // restores handed to the sink
	Backups  int64 // BACKUP statements' 3014 lines, which are not restores
	Failed   int64 // RESTORE statements that ended in error 3013: not restores, not rejects
	Untimed  int64 // restores handed on without a completion time (no stamp, no At)
	Bytes    int64 // raw bytes read
}

// maxLine caps one line; Agent keeps at most 4,000 characters per step, so
// anything longer is not client output and its tail is dropped rather than
// held in memory.
const maxLine = 1 << 20

// Parse reads captured client output from r and hands each completed RESTORE
// statement to sink as a store.LogRestore with Has3014 set and
// Origin{Source: "messages", Line: the 3014 line}. Its kind is log for
// RESTORE LOG, file for RESTORE DATABASE ... FILE=, and full for any other
// RESTORE DATABASE: a differential restore prints the same 3014 text, so the
// warehouse tells it apart by matching history. A restore whose database is
// named neither by the text nor by opt.Database becomes a store.Reject.
// CompletedAt comes from the next "Completion time:" stamp, else opt.At, else
// stays zero, meaning unknown (counted in Stats.Untimed). Parse fails only
// when opt.Instance is empty, ctx is done, r fails or the sink fails.
func Parse(ctx context.Context, r io.Reader, opt Options, sink store.Sink) (Stats, error) {
	var st Stats
	if strings.TrimSpace(opt.Instance) == "" {
		return st, store.Errorf(store.EINVALID, "messages: %s: client output never names the instance; give it", opt.File)
	}
	cr := &textenc.CountingReader{R: r}
	in, err := textenc.UTF8Reader(cr)
	if err != nil {
		return st, fmt.Errorf("messages: read %s: %w", opt.File, err)
	}
	p := &parser{opt: opt, sink: sink, st: &st}
	p.opt.Instance = strings.TrimSpace(opt.Instance)
	err = p.run(ctx, bufio.NewReaderSize(in, textenc.BufSize))
	st.Bytes = cr.N
	return st, err
}

// statement is what has been seen of the RESTORE statement in progress.
type statement struct {
	database string // from its 4035 "Processed" lines
	hint     string // from upgrade, conversion and 4356 lines
	echoed   string // from the echoed statement text
	phases   []store.Phase
}

type parser struct {
	opt  Options
	sink store.Sink
	st   *Stats
	cur  statement
	// undated holds restores that wait for a Completion time stamp, which
	// SSMS prints once after all the statements of a batch.
	undated []store.LogRestore
	// headerNum is the number of a "Msg N, Level ..." header, which applies
	// to the message on the next line.
	headerNum int
}

func (p *parser) run(ctx context.Context, br *bufio.Reader) error {
	buf := make([]byte, 0, 4096)
	for {
		var err error
		buf, err = readLine(br, buf)
		if len(buf) > 0 || err == nil {
			p.st.Lines++
			if p.st.Lines&1023 == 0 {
				if cerr := ctx.Err(); cerr != nil {
					return cerr
				}
			}
			if lerr := p.line(string(buf), int(p.st.Lines)); lerr != nil {
				return lerr
			}
		}
		if err == io.EOF {
			return p.flush(p.opt.At)
		}
		if err != nil {
			return fmt.Errorf("messages: read %s: %w", p.opt.File, err)
		}
	}
}

// readLine reads one line into buf, without its end, keeping at most maxLine
// bytes of it.
func readLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	buf = buf[:0]
	for {
		chunk, err := br.ReadSlice('\n')
		if room := maxLine - len(buf); room > 0 {
			buf = append(buf, chunk[:min(len(chunk), room)]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimRight(buf, "\r\n"), err
	}
}

func (p *parser) line(raw string, n int) error {
	s := undecorate(raw)
	if s == "" {
		return nil
	}
	if g := reHeader.FindStringSubmatch(s); g != nil {
		p.headerNum = int(atoi(g[1]))
		return nil
	}
	num := p.headerNum
	p.headerNum = 0
	if !strings.Contains(s, "[SQLSTATE ") {
		return p.message(message{text: s, num: num}, n)
	}
	for _, m := range splitAgent(s) {
		if err := p.message(m, n); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) message(m message, n int) error {
	if m.text == "" {
		return nil
	}
	if wall, off, ok := parseStamp(m.text); ok {
		return p.stamp(wall, off)
	}
	if db, ok := processedDatabase(m); ok {
		if p.cur.database == "" {
			p.cur.database = db
		}
		p.cur.phases = append(p.cur.phases, store.Phase{Text: m.text})
	}
	if d, ok := parse3014(m); ok {
		return p.end(d, n)
	}
	switch {
	case m.num == 3013 || reAbnormal.MatchString(m.text):
		// The statement failed: whatever it processed is no restore.
		if strings.Contains(m.text, "RESTORE") {
			p.st.Failed++
		}
		p.cur = statement{}
	case rePercent.MatchString(m.text):
		// Progress without a time says nothing about speed.
	default:
		if db, ok := databaseHint(m.text); ok {
			if p.cur.hint == "" {
				p.cur.hint = db
			}
			p.cur.phases = append(p.cur.phases, store.Phase{Text: m.text})
		} else if db, ok := echoedDatabase(m.text); ok {
			p.cur = statement{echoed: db}
		}
	}
	return nil
}

// end closes the statement at its 3014 line.
func (p *parser) end(d done3014, n int) error {
	cur := p.cur
	p.cur = statement{}
	if strings.HasPrefix(d.statement, "BACKUP") {
		p.st.Backups++
		return nil
	}
	db := firstOf(cur.database, cur.hint, cur.echoed, p.opt.Database)
	switch {
	case db == "":
		p.reject(n, fmt.Sprintf("%s successfully processed %d pages: no database named (no \"Processed ... pages for database\" line before it); give the database name", d.statement, d.pages))
		return nil
	case d.pages < 0:
		p.reject(n, fmt.Sprintf("%s: page count out of range", d.statement))
		return nil
	}
	p.undated = append(p.undated, store.LogRestore{
		Instance:  p.opt.Instance,
		Database:  db,
		Kind:      kindOf(d.statement),
		Has3014:   true,
		Statement: d.statement,
		Pages:     d.pages,
		Seconds:   d.seconds,
		MBps:      d.mbps,
		Phases:    cur.phases,
		Origin:    store.Origin{Source: "messages", File: p.opt.File, Line: n},
	})
	return nil
}

// stamp dates the restores since the previous stamp: SSMS prints one
// "Completion time" when the whole batch ends. The stamp is the client's
// clock and zone, which for a restore run on the server's own console are
// the instance's.
func (p *parser) stamp(wall time.Time, off int) error {
	p.cur = statement{}
	p.date(wall, off)
	return p.emit()
}

func (p *parser) date(wall time.Time, off int) {
	for i := range p.undated {
		o := off
		p.undated[i].CompletedAt = wall
		p.undated[i].UTCOffset = &o
	}
}

// flush hands on the restores that no stamp followed, dated at (if set).
func (p *parser) flush(at time.Time) error {
	if !at.IsZero() {
		p.date(wallClock(at))
	}
	return p.emit()
}

func (p *parser) emit() error {
	for _, l := range p.undated {
		if l.CompletedAt.IsZero() {
			p.st.Untimed++
		}
		if err := p.sink.LogRestore(l); err != nil {
			return fmt.Errorf("messages: %s: %w", l.Origin, err)
		}
		p.st.Restores++
	}
	p.undated = p.undated[:0]
	return nil
}

func (p *parser) reject(n int, reason string) {
	p.sink.Reject(store.Reject{File: p.opt.File, Line: n, Reason: reason})
}

// kindOf maps a 3014 statement to a restore kind; file and page restores
// print "RESTORE DATABASE ... FILE=<name>" (or PAGE=).
func kindOf(stmt string) store.Kind {
	switch {
	case strings.HasPrefix(stmt, "RESTORE LOG"):
		return store.KindLog
	case strings.Contains(stmt, "FILE=") || strings.Contains(stmt, "FILEGROUP="):
		return store.KindFile
	case strings.Contains(stmt, "PAGE="):
		return store.KindPage
	}
	return store.KindFull
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
