package mssql

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/ingest/errorlog"
	"github.com/restorewatch/restorewatch/store"
)

// The error-log source has no parser of its own: rows are written back as
// the lines of an ERRORLOG file and read by ingest/errorlog, so a restore
// read live and the same restore imported from the file are one code path
// and one warehouse record (the dedupe key treats "live-errorlog" as
// "errorlog").

// fileStart maps a line of the rebuilt text back to its log file.
type fileStart struct {
	line int // first line of the file in the text, 1-based
	num  int
}

// parseLogs parses the files (oldest first) and keeps the records dated in
// (after, cutoff].
func (s *Session) parseLogs(ctx context.Context, files []logFile, after, cutoff time.Time, res *ErrorLogResult) error {
	var buf bytes.Buffer
	var starts []fileStart
	line := 0
	for _, f := range files {
		starts = append(starts, fileStart{line: line + 1, num: f.num})
		for _, r := range f.rows {
			line += writeLogLine(&buf, r)
		}
	}
	if line == 0 {
		return nil
	}
	sink := &windowSink{inst: s.inst.Name, after: after, cutoff: cutoff, starts: starts, res: res}
	_, err := errorlog.Parse(ctx, &buf, errorlog.Options{File: "xp_readerrorlog", Instance: s.inst.Name}, sink)
	if err != nil {
		if ctx.Err() != nil {
			return classify(SourceErrorLog, ctx.Err())
		}
		return &Error{Source: SourceErrorLog, Kind: KindServer, Msg: err.Error()}
	}
	return nil
}

// writeLogLine writes one row as "yyyy-mm-dd hh:mm:ss.ff <source> <text>",
// the file's layout with its two fractional digits (LogDate is a datetime,
// whose 1/300 s steps hold every centisecond exactly), and returns the
// number of physical lines written. A row holding line breaks (a startup
// banner returned as one row) becomes an entry with continuation lines, as
// in the file.
func writeLogLine(buf *bytes.Buffer, r logRow) int {
	src := r.src
	if src == "" {
		src = "unknown" // an empty column would make the parser take the text's first word as the source
	}
	text := strings.ReplaceAll(r.text, "\r\n", "\n")
	first, rest, more := strings.Cut(text, "\n")
	fmt.Fprintf(buf, "%s %-11s %s\n", r.at.Format("2006-01-02 15:04:05.00"), src, first)
	n := 1
	for more {
		var l string
		l, rest, more = strings.Cut(rest, "\n")
		l = strings.TrimRight(l, "\r")
		if looksStamped(l) {
			l = "\t" + l // never let a continuation start an entry of its own
		}
		buf.WriteString(l)
		buf.WriteByte('\n')
		n++
	}
	return n
}

func looksStamped(l string) bool {
	if len(l) < 5 || l[4] != '-' {
		return false
	}
	for i := 0; i < 4; i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return true
}

// windowSink keeps the parser's records that fall in the pass's window and
// points their origin at the log file and line they came from.
type windowSink struct {
	inst          string
	after, cutoff time.Time
	starts        []fileStart
	res           *ErrorLogResult
}

func (w *windowSink) in(t time.Time) bool { return t.After(w.after) && !t.After(w.cutoff) }

func (w *windowSink) origin(o store.Origin) store.Origin {
	i := sort.Search(len(w.starts), func(i int) bool { return w.starts[i].line > o.Line }) - 1
	file, line := "ERRORLOG", o.Line
	if i >= 0 {
		if n := w.starts[i].num; n > 0 {
			file = fmt.Sprintf("ERRORLOG.%d", n)
		}
		line = o.Line - w.starts[i].line + 1
	}
	return store.Origin{Source: "live-errorlog", File: w.inst + " " + file, Line: line}
}

// History implements store.Sink; the error log holds no history rows.
func (w *windowSink) History(store.HistoryRow) error { return nil }

// LogRestore implements store.Sink.
func (w *windowSink) LogRestore(l store.LogRestore) error {
	if w.in(l.CompletedAt) {
		l.Origin = w.origin(l.Origin)
		w.res.Restores = append(w.res.Restores, l)
	}
	return nil
}

// Host implements store.Sink.
func (w *windowSink) Host(h store.HostSnapshot) error {
	if w.in(h.ObservedAt) {
		h.Origin = w.origin(h.Origin)
		w.res.Hosts = append(w.res.Hosts, h)
	}
	return nil
}

// BackupSet implements store.Sink; an error log holds no backup sets.
func (w *windowSink) BackupSet(store.BackupSet) error { return nil }

// Reject implements store.Sink: rejects are counted, not stored, because
// overlapping windows would report the same line again on every pass.
func (w *windowSink) Reject(store.Reject) { w.res.Rejects++ }
