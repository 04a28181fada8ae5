// Package csv imports msdb restore history from the CSV that the published
// export query (restore_history_export.sql, SPEC §3.3) produces, whichever
// client saved it: SSMS "Save Results As", sqlcmd -s"," or PowerShell's
// Export-Csv. It streams store.HistoryRow records into a store.Sink and
// reports every row it cannot use as a store.Reject with its line number,
// so one bad row never costs the good ones around it.
package csv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	stdcsv "encoding/csv"

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
	cr := &textenc.CountingReader{R: r, Progress: opt.Progress}
	defer cr.Done()
	in, err := textenc.UTF8Reader(cr)
	if err != nil {
		st.Bytes = cr.N
		return st, fmt.Errorf("csv: read %s: %w", opt.File, err)
	}
	p := &parser{opt: opt, sink: sink, defInstance: strings.TrimSpace(opt.Instance)}
	err = p.run(ctx, in, &st)
	st.Bytes = cr.N
	return st, err
}

type parser struct {
	opt         Options
	sink        store.Sink
	defInstance string
	hdr         header
}

func (p *parser) run(ctx context.Context, in io.Reader, st *Stats) error {
	rd := stdcsv.NewReader(in)
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
			return nil
		}
		if err != nil {
			// pe lives on the error path only: errors.As makes it escape,
			// and an allocation on every row showed in the benchmark.
			var pe *stdcsv.ParseError
			if !errors.As(err, &pe) {
				return fmt.Errorf("csv: read %s: %w", p.opt.File, err)
			}
			st.Rows++
			first = false
			p.reject(pe.StartLine, badQuoting(pe))
			continue
		}
		line, _ := rd.FieldPos(0)
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
		if err := p.row(rec, line); err != nil {
			return err
		}
	}
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
	h := store.HistoryRow{Origin: store.Origin{Source: "history", File: p.opt.File, Line: line}}
	v := new(values)
	quoted := p.doubleQuoted(rec)
	for i, f := range rec {
		c := p.hdr.cols[i]
		if c == colExtra {
			continue
		}
		if err := v.set(&h, c, f, quoted); err != nil {
			p.reject(line, err.Error())
			return nil
		}
	}
	if h.Instance == "" {
		h.Instance = p.defInstance
	}
	switch {
	case h.Instance == "":
		p.reject(line, "instance is empty (give the instance name for rows without one)")
		return nil
	case h.RestoreDate.IsZero():
		p.reject(line, "restore_date is empty")
		return nil
	case h.Database == "":
		p.reject(line, "destination_database_name is empty")
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
