package mssql

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/restorewatch/restorewatch/store"
)

// LogMark is the error-log source's watermark, in the instance's local time.
type LogMark struct {
	// Cutoff: every restore completed (and startup logged) at or before it
	// has been handed over; later ones belong to a later pass.
	Cutoff time.Time `json:"cutoff"`
	// From is where the next pass starts reading: Cutoff minus Lookback, or
	// earlier while a restore runs, so that the lines written before a
	// restore's completion line (its buffer block, its phases) are read again
	// in the pass that sees the completion.
	From time.Time `json:"from"`
}

const (
	// Settle is how long after a line the collector waits before handing over
	// a restore completed there: its 3014 and 3421 lines follow within
	// seconds (the parser holds a restore 5 s for them).
	Settle = 10 * time.Second
	// Lookback is how far before the cutoff the next pass starts reading:
	// more than the parser's 10 s window for the 4356 and "marked RESTORING"
	// lines that precede a completion line.
	Lookback = 2 * time.Minute
	// maxArchives bounds the archive walk (SQL Server keeps at most 99).
	maxArchives = 99
)

// ErrorLogResult is one pass of the error-log source.
type ErrorLogResult struct {
	Restores []store.LogRestore
	Hosts    []store.HostSnapshot
	Rows     int // error-log rows read
	Logs     int // files read
	Rejects  int // lines the parser could not use
	Mark     LogMark
	More     bool     // stopped at the row cap; the next pass continues
	Notes    []string // degraded archive walk, abandoned archives
}

// logRow is one row of xp_readerrorlog.
type logRow struct {
	at   time.Time
	src  string
	text string
}

// logFile is the rows read from one log file (0 = current).
type logFile struct {
	num  int
	rows []logRow
}

// ErrorLog reads the error log written since mark.From up to now (the
// server's local time from Host; zero if unknown) and hands the rows, in log
// order, to the offline parser (ingest/errorlog) so that live and file
// imports share one reading of every line. keepFrom, when set, is the start
// of the oldest restore still running: the next pass reads from before it.
// At most maxRows rows are read per pass.
func (s *Session) ErrorLog(ctx context.Context, mark LogMark, now, keepFrom time.Time, maxRows int) (*ErrorLogResult, error) {
	res := &ErrorLogResult{Mark: mark}
	until := now
	if until.IsZero() {
		until = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	}
	files, err := s.readLogs(ctx, mark.From, until, maxRows, res)
	if err != nil {
		return nil, err
	}
	var last time.Time
	for _, f := range files {
		res.Logs++
		res.Rows += len(f.rows)
		if n := len(f.rows); n > 0 && f.rows[n-1].at.After(last) {
			last = f.rows[n-1].at
		}
	}
	cutoff := now.Add(-Settle)
	if res.More || now.IsZero() {
		cutoff = last.Add(-Settle)
	}
	if cutoff.Before(mark.Cutoff) {
		cutoff = mark.Cutoff
	}
	if err := s.parseLogs(ctx, files, mark.Cutoff, cutoff, res); err != nil {
		return nil, err
	}
	res.Mark = LogMark{Cutoff: cutoff, From: cutoff.Add(-Lookback)}
	if !keepFrom.IsZero() && keepFrom.Add(-Lookback).Before(res.Mark.From) {
		res.Mark.From = keepFrom.Add(-Lookback)
	}
	if res.Mark.From.Before(mark.From) {
		res.Mark.From = mark.From
	}
	return res, nil
}

// readLogs returns the files to parse, oldest first. With xp_enumerrorlogs it
// reads only the files written since from, oldest first, and stops at the
// row cap (More). Without it (the login is not in securityadmin) it probes
// ERRORLOG, ERRORLOG.1, ... newest first until one holds no row since from;
// a cap reached there abandons the older archives, noted in the result.
func (s *Session) readLogs(ctx context.Context, from, until time.Time, maxRows int, res *ErrorLogResult) ([]logFile, error) {
	type archive struct {
		num  int
		date time.Time
	}
	var archives []archive
	err := s.each(ctx, SourceErrorLog, "errorlog/archives", nil, func(r *sql.Rows) error {
		var num, date, size any
		if err := r.Scan(&num, &date, &size); err != nil {
			return err
		}
		n, ok := anyInt(num)
		if !ok {
			return fmt.Errorf("archive number %v", num)
		}
		archives = append(archives, archive{num: int(n), date: anyTime(date)})
		return nil
	})
	if err != nil {
		if IsFatal(err) {
			return nil, err
		}
		res.Notes = append(res.Notes, "archived logs not listed ("+err.(*Error).Msg+"); found by reading ERRORLOG.1, .2, ... in turn")
		return s.probeLogs(ctx, from, until, maxRows, res)
	}
	sort.Slice(archives, func(i, j int) bool { return archives[i].num > archives[j].num })
	var files []logFile
	budget := maxRows
	for _, a := range archives {
		// An archive last written before from holds nothing new. A date
		// that did not parse (zero) is read to be safe.
		if a.num != 0 && !from.IsZero() && !a.date.IsZero() && a.date.Before(from.Truncate(time.Minute)) {
			continue
		}
		f, full, err := s.readLog(ctx, a.num, from, until, budget)
		if err != nil {
			if IsFatal(err) || a.num == 0 {
				return nil, err
			}
			res.Notes = append(res.Notes, fmt.Sprintf("ERRORLOG.%d not read: %s", a.num, err.(*Error).Msg))
			continue
		}
		files = append(files, f)
		budget -= len(f.rows)
		if full {
			res.More = true
			break
		}
	}
	return files, nil
}

func (s *Session) probeLogs(ctx context.Context, from, until time.Time, maxRows int, res *ErrorLogResult) ([]logFile, error) {
	var files []logFile
	budget := maxRows
	for n := 0; n <= maxArchives; n++ {
		f, full, err := s.readLog(ctx, n, from, until, budget)
		if err != nil {
			if IsFatal(err) || n == 0 {
				return nil, err
			}
			break // ERRORLOG.n does not exist
		}
		if full {
			if n == 0 {
				files = append(files, f) // read oldest first: a contiguous start
				res.More = true
			} else {
				res.Notes = append(res.Notes, fmt.Sprintf("ERRORLOG.%d and older not read: over the %d-row cap of a pass", n, maxRows))
			}
			break
		}
		if len(f.rows) == 0 && n > 0 {
			break
		}
		files = append(files, f)
		budget -= len(f.rows)
	}
	slices.Reverse(files)
	return files, nil
}

// readLog reads one file's rows in [from, until], oldest first, at most
// budget rows; full reports that the budget stopped it.
func (s *Session) readLog(ctx context.Context, num int, from, until time.Time, budget int) (logFile, bool, error) {
	f := logFile{num: num}
	var since any // NULL: from the file's start
	if !from.IsZero() {
		since = mssql.DateTime1(from)
	}
	args := []any{sql.Named("lognum", num), sql.Named("since", since), sql.Named("until", mssql.DateTime1(until))}
	full := false
	err := s.each(ctx, SourceErrorLog, "errorlog/read", args, func(r *sql.Rows) error {
		if len(f.rows) >= budget {
			full = true
			return errStop
		}
		var at time.Time
		var src, text sql.NullString
		if err := r.Scan(&at, &src, &text); err != nil {
			return err
		}
		f.rows = append(f.rows, logRow{at: wall(at), src: src.String, text: text.String})
		return nil
	})
	return f, full, err
}

// anyTime reads xp_enumerrorlogs' Date, a datetime on current builds and
// text ("04/05/2000  20:00") on old ones; zero when unreadable.
func anyTime(v any) time.Time {
	switch x := v.(type) {
	case time.Time:
		return wall(x)
	case []byte:
		return anyTime(string(x))
	case string:
		s := strings.Join(strings.Fields(x), " ")
		for _, layout := range []string{"2006-01-02 15:04:05.000", "2006-01-02 15:04:05", "2006-01-02 15:04", "01/02/2006 15:04", "01/02/2006 15:04:05"} {
			if t, err := time.Parse(layout, s); err == nil {
				return t
			}
		}
	}
	return time.Time{}
}
