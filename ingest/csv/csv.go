// Package csv imports msdb restore history from CSV: the output of the
// published export query (restore_history_export.sql, SPEC §3.3) whichever
// client saved it (SSMS "Save Results As", sqlcmd -s"," or PowerShell's
// Export-Csv), and dbatools' Get-DbaDbRestoreHistory | Export-Csv and
// Restore-DbaDatabase | Export-Csv as Windows PowerShell 5.1 and PowerShell
// 7 write them (any encoding, #TYPE line or not, comma or semicolon, dates
// in the exporting culture). It streams store.HistoryRow records (and, for
// Restore-DbaDatabase, store.LogRestore records) into a store.Sink and
// reports every row it cannot use as a store.Reject with its line number,
// so one bad row never costs the good ones around it. No record is held
// longer than MaxRecord, whatever the input.
package csv

import (
	"bufio"
	"bytes"
	"context"
	stdcsv "encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/restorewatch/restorewatch/ingest/textenc"
	"github.com/restorewatch/restorewatch/store"
)

// Options says where the rows come from.
type Options struct {
	// File names the input in rejects and record origins (the CLI passes the
	// base name).
	File string
	// Instance is used for rows whose instance column is empty, and for all
	// rows when the file has no instance column.
	Instance string
	// Progress, when set, is called with the number of raw bytes read so far,
	// about once per MiB and once at the end.
	Progress func(bytesRead int64)
	// DateFormat gives the order of day, month and year in the culture
	// dates of a dbatools export (PowerShell writes a DateTime in the
	// exporting machine's culture): DMY, MDY or YMD, a .NET pattern such as
	// "dd.MM.yyyy" or "M/d/yyyy h:mm:ss tt", or a Go layout such as
	// "02/01/2006 15:04:05"; only the order is taken from it (see
	// CheckDateFormat). Empty means: infer it from the file, where a day
	// above 12 tells, and fail rather than guess when nothing does.
	DateFormat string
}

// Stats counts what a parse read.
type Stats struct {
	// Rows is the number of data rows read: the rows handed to the sink plus
	// the rows rejected. The header and client noise (#TYPE, sqlcmd's dashes
	// and row count) are not rows.
	Rows int64
	// Bytes is the number of raw (undecoded) bytes read.
	Bytes int64
}

// Parse reads one exported history file from r and hands each row to sink as
// a store.HistoryRow with Origin{Source: "history"}. A row with a bad value,
// a wrong number of fields or no database becomes a store.Reject naming the
// physical line on which the row starts, and parsing goes on. Parse fails as
// a whole (an EINVALID *store.Error) only when the header is missing or lacks
// a required column, and stops when ctx is done, r fails or the sink fails.
// Rows with restore_type V (VERIFYONLY) are emitted like any other: the
// warehouse, not the parser, keeps them apart. Text values are kept byte for
// byte, except that GUIDs take SQL Server's upper-case form and the export
// query's own quotes are removed where a quoting client (Export-Csv) quoted
// them a second time.
func Parse(ctx context.Context, r io.Reader, opt Options, sink store.Sink) (Stats, error) {
	var st Stats
	order, err := parseDateFormat(opt.DateFormat)
	if err != nil {
		return st, store.Errorf(store.EINVALID, "csv: %s: %v", opt.File, err)
	}
	cr := &textenc.CountingReader{R: r, Progress: opt.Progress}
	defer cr.Done()
	in, err := textenc.UTF8Reader(cr)
	if err != nil {
		st.Bytes = cr.N
		return st, fmt.Errorf("csv: read %s: %w", opt.File, err)
	}
	br := bufio.NewReaderSize(in, textenc.BufSize)
	p := &parser{opt: opt, sink: sink, defInstance: strings.TrimSpace(opt.Instance), order: order, orderFixed: order != orderUnknown}
	p.guard = newGuard(br, sniffComma(br), MaxRecord)
	err = p.run(ctx, bufio.NewReaderSize(p.guard, textenc.BufSize), &st)
	st.Bytes = cr.N
	return st, err
}

type parser struct {
	opt         Options
	sink        store.Sink
	defInstance string
	hdr         header
	guard       *guard

	// The day/month order of culture dates: given, or inferred from the
	// first value that tells (orderLine, orderValue), and until then the
	// rows whose dates read both ways wait in pending.
	order      dateOrder
	orderFixed bool
	orderLine  int
	orderValue string
	pending    []pendingRow
}

// sniffComma returns the delimiter of the header line: a comma, or the
// semicolon of Export-Csv -Delimiter ';' / -UseCulture in European
// locales, or a tab. It looks at the first line that is not a "#TYPE"
// line in what is already buffered, and counts only outside quotes.
func sniffComma(br *bufio.Reader) byte {
	b, _ := br.Peek(textenc.BufSize)
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(bytes.TrimSpace(line)) == 0 || line[0] == '#' {
			continue
		}
		var n [256]int
		quoted := false
		for _, c := range line {
			if c == '"' {
				quoted = !quoted
			} else if !quoted {
				n[c]++
			}
		}
		switch {
		case n[';'] > n[','] && n[';'] >= n['\t']:
			return ';'
		case n['\t'] > n[','] && n['\t'] > n[';']:
			return '\t'
		}
		return ','
	}
	return ','
}

func (p *parser) run(ctx context.Context, in io.Reader, st *Stats) error {
	rd := stdcsv.NewReader(in)
	rd.Comma = rune(p.guard.comma)
	// Field counts are checked per row so a short row is a reject, not an
	// abort, and the preamble lines may differ in width.
	rd.FieldsPerRecord = -1
	// ReuseRecord saves a slice per row; the strings in it are still fresh
	// per row, so records may keep them.
	rd.ReuseRecord = true
	// Quotes stay strict: a lazily parsed stray quote would silently shift
	// values between columns, while a strict error rejects just that row.

	hdr, err := readHeader(rd, p.opt)
	if err != nil {
		if store.ErrorCode(err) == store.EINVALID {
			return store.Errorf(store.EINVALID, "csv: %s: %s", p.opt.File, store.ErrorMessage(err))
		}
		return fmt.Errorf("csv: read %s: %w", p.opt.File, err)
	}
	p.hdr = hdr
	if err := ctx.Err(); err != nil {
		return err
	}
	first := true
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			p.oversize(st, -1)
			return p.flush(true)
		}
		if err != nil {
			// pe lives on the error path only: errors.As makes it escape,
			// and an allocation on every row showed in the benchmark.
			var pe *stdcsv.ParseError
			if !errors.As(err, &pe) {
				return fmt.Errorf("csv: read %s: %w", p.opt.File, err)
			}
			p.oversize(st, pe.StartLine)
			st.Rows++
			first = false
			p.reject(pe.StartLine, badQuoting(pe))
			continue
		}
		line, _ := rd.FieldPos(0)
		if len(p.guard.events) > 0 {
			p.oversize(st, line)
		}
		if first && isDashes(rec) {
			first = false
			continue
		}
		first = false
		if isNoise(rec) {
			continue
		}
		st.Rows++
		if st.Rows&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if p.hdr.export == exportDbaHistory && p.order == orderUnknown {
			if p.wait(rec, line) {
				if len(p.pending) > maxPending {
					return p.undecided()
				}
				continue
			}
			if err := p.flush(false); err != nil {
				return err
			}
		}
		if err := p.row(rec, line); err != nil {
			return err
		}
	}
}

// oversize reports the records the guard dropped before line (all of them
// when line is -1), each as a rejected row.
func (p *parser) oversize(st *Stats, line int) {
	ev := p.guard.events
	n := 0
	for ; n < len(ev) && (line < 0 || ev[n].line < line); n++ {
		e := ev[n]
		where := fmt.Sprintf("line %d", e.line)
		if e.endLine > e.line {
			where = fmt.Sprintf("lines %d-%d", e.line, e.endLine)
		}
		st.Rows++
		p.reject(e.line, fmt.Sprintf("record longer than %d MiB (%s), skipped: no history row is this long (a file without line ends, or binary data?)", MaxRecord>>20, where))
	}
	p.guard.events = ev[:copy(ev, ev[n:])]
}

// row turns one record into a HistoryRow or a Reject. Only a sink failure
// is returned.
func (p *parser) row(rec []string, line int) error {
	if len(rec) != p.hdr.names {
		reason := fmt.Sprintf("row has %d fields, the header has %d", len(rec), p.hdr.names)
		for _, f := range rec {
			if strings.IndexByte(f, '\n') >= 0 {
				// A multi-line field with the wrong width is almost always a
				// quote that was never closed and swallowed the lines after it.
				reason += " (a quoted field spans lines: unbalanced quote?)"
				break
			}
		}
		p.reject(line, reason)
		return nil
	}
	if p.hdr.export == exportDbaRestore {
		return p.restore(rec, line)
	}
	h := store.HistoryRow{Origin: store.Origin{Source: "history", File: p.opt.File, Line: line}}
	v := new(values)
	quoted := p.doubleQuoted(rec)
	for i, f := range rec {
		c := p.hdr.cols[i]
		if c == colExtra {
			continue
		}
		if err := v.set(p, &h, c, f, quoted); err != nil {
			if fe, ok := err.(*fieldError); ok && p.hdr.labels != nil {
				fe.label = p.hdr.labels[i]
			}
			p.reject(line, err.Error())
			return nil
		}
	}
	if h.Instance == "" {
		h.Instance = p.defInstance
	}
	switch {
	case h.Instance == "":
		p.reject(line, p.label(colInstance)+" is empty (give the instance name for rows without one)")
		return nil
	case h.RestoreDate.IsZero():
		p.reject(line, p.label(colRestoreDate)+" is empty")
		return nil
	case h.Database == "":
		p.reject(line, p.label(colDatabase)+" is empty")
		return nil
	}
	if err := p.sink.History(h); err != nil {
		return fmt.Errorf("csv: %s:%d: %w", p.opt.File, line, err)
	}
	return nil
}

// doubleQuoted reports whether the row went through the export query's own
// CSV quoting (@quote_text = 1) and then a client that quotes every value
// again (Invoke-Sqlcmd | Export-Csv): its text fields then still carry the
// query's quotes after one CSV decoding. The instance column tells: a server
// name never contains a quote, so a quoted one can only be the query's doing.
func (p *parser) doubleQuoted(rec []string) bool {
	if !p.hdr.instance {
		return false
	}
	for i, c := range p.hdr.cols {
		if c == colInstance {
			return wrapped(trimSpace(rec[i]))
		}
	}
	return false
}

// label names column c as the file's header does (dbatools' property
// names), or as SPEC §3.3 does.
func (p *parser) label(c column) string {
	for i, hc := range p.hdr.cols {
		if hc == c && p.hdr.labels != nil {
			return p.hdr.labels[i]
		}
	}
	if c < numColumns {
		return columnNames[c]
	}
	return "?"
}

func (p *parser) reject(line int, reason string) {
	if line < 1 {
		line = 1
	}
	p.sink.Reject(store.Reject{File: p.opt.File, Line: line, Reason: reason})
}

// badQuoting explains a CSV syntax error; the usual cause is sqlcmd run
// without -W, whose padding lands after the query's closing quotes.
func badQuoting(pe *stdcsv.ParseError) string {
	reason := fmt.Sprintf("malformed CSV at line %d column %d: %v", pe.Line, pe.Column, pe.Err)
	if errors.Is(pe.Err, stdcsv.ErrQuote) || errors.Is(pe.Err, stdcsv.ErrBareQuote) {
		reason += " (sqlcmd output needs -W)"
	}
	return reason
}
