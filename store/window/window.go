// Package window derives an instance's restores from the first changed fact
// onwards instead of from all of its facts, on either engine: the window's
// arithmetic, its component checks and the restore_date semantics votes it
// keeps by day. What it reads it asks of a Source, which each engine
// implements with its own SQL.
//
// Every import records, per instance, the local time of the earliest fact it
// added (instance.dirty_from; NULL when a fact concerns the whole instance).
// Reconciliation then derives a window instead of the whole instance when
// the last whole derivation found the instance windowable (error-log and
// msdb facts only, all dated):
//
//   - the facts are read from an hour before the earliest new one (a new
//     history row pairs with a completion line up to an hour before it);
//     a completion line at or after it that states LSNs pairs with a
//     history row of the same LSNs up to 72 h before it, so one query asks
//     for such rows (markLSNRowsRead) and, if there is one, the facts are
//     read from the hour before its day; then, as far as the components
//     below reach, the older ones: a day of history rows or of error logs
//     reads that day and the hour before it;
//   - derive ties them into components (derive.components: the facts that
//     could pair, whose derivation depends on nothing else); the window
//     starts at the day of the earliest fact of any component holding a
//     fact at or after the earliest new one;
//   - every component with a fact in the window must be whole among the
//     facts read: none may reach before the first fact read (else the read
//     starts earlier and derivation runs again);
//   - the restores anchored in the window (a restore's anchor is the
//     earliest local time of its facts) replace the stored ones anchored
//     there; those before it stay, their components untouched;
//   - the restore_date semantics is the whole instance's: votes are kept by
//     day (derive_vote), the window's days replace theirs, and a total that
//     changes the semantics derives the whole instance (every restore's
//     start time depends on it).
//
// The outcome equals a whole derivation's; TestWindowEqualsWhole checks it
// on random imports, late and out of order, on both engines. Measured gain
// on SQLite: a pass on one instance of 100,000 restores derived in 19 s
// whole; a secondary's day at 10 M now shows in 0.87 s (docs/scale-log.md,
// docs/benchmarks-log.md).
package window

import (
	"context"
	"database/sql"
	"math"
	"slices"
	"time"

	"github.com/restorewatch/restorewatch/store/derive"
)

const (
	// DayMS is a local day in Unix milliseconds: votes are kept by day.
	DayMS = int64(24 * time.Hour / time.Millisecond)
	// readBefore is how far before the earliest new fact a window's facts
	// are read at first: a new history row's reach back to a completion
	// line. Reading 73 h at first, a completion line's reach (72 h) and
	// that row's, cost a day of history rows four days of facts read and
	// derived, much of a large fleet's day (docs/benchmarks-log.md).
	readBefore  = int64(time.Hour / time.Millisecond)
	lsnRowReach = int64(72 * time.Hour / time.Millisecond) // a row before a line stating its LSNs
	tries       = 4
	// Whole is a window's start that is the whole instance: every restore.
	Whole = math.MinInt64
	// NoBound is a read's end that is none: the facts from a time on.
	NoBound = math.MaxInt64
)

// Anchor is a restore's earliest local time among restore_date and its
// completion (the earliest time of the facts it was derived from), or
// Whole when it has neither. Each value is an int64, an sql.NullInt64, a
// *int64 or nil.
func Anchor(restoreDate, finished any) int64 {
	a := int64(math.MaxInt64)
	for _, v := range []any{restoreDate, finished} {
		switch v := v.(type) {
		case int64:
			a = min(a, v)
		case sql.NullInt64:
			if v.Valid {
				a = min(a, v.Int64)
			}
		case *int64:
			if v != nil {
				a = min(a, *v)
			}
		}
	}
	if a == math.MaxInt64 {
		return Whole
	}
	return a
}

// Day is the local day of a local time, for derive_vote.
func Day(at int64) int64 { return derive.FloorDiv(at, DayMS) }

// DayVotes are restore_date semantics votes by local day: start, end.
type DayVotes map[int64][2]int

// VotesOf counts the votes of rs by the day of each one's anchor.
func VotesOf(rs []derive.Derived) DayVotes {
	v := DayVotes{}
	for i := range rs {
		d := &rs[i]
		if d.Vote == 0 {
			continue
		}
		day := Day(Anchor(d.RestoreDateLocal, d.FinishedLocal))
		c := v[day]
		if d.Vote > 0 {
			c[0]++
		} else {
			c[1]++
		}
		v[day] = c
	}
	return v
}

// Windowable says whether an instance's facts allow windows: error-log
// and msdb facts only, every completion line dated (and, the caller
// checks, none left untimed by derivation).
func Windowable(in *derive.Facts) bool {
	for i := range in.Logs {
		l := &in.Logs[i]
		if !l.Source.ErrorLog() || !l.Completed.Valid {
			return false
		}
	}
	return true
}

// Source is what a window reads of one instance, in one snapshot or
// transaction of its engine.
type Source interface {
	// Facts reads the history rows and log restores at or after local
	// time from and before to, in time order; with to NoBound, the host
	// snapshots too (whole), else none.
	Facts(ctx context.Context, from, to int64) (*derive.Facts, error)
	// LSNRows returns, by last LSN, the local times of the history rows
	// at or after from and before to that state one of lsns as their last
	// LSN. A row may be returned whatever its database: one returned
	// wrongly costs only a read the window would have spared.
	LSNRows(ctx context.Context, from, to int64, lsns []string) (map[string][]int64, error)
	// VotesBefore sums the stored votes of the days before day.
	VotesBefore(ctx context.Context, day int64) (start, end int, err error)
}

// Result is a window's derivation: the restores anchored at or after
// Start, with the instance's semantics, and their votes by day.
type Result struct {
	Out   derive.Instance
	Votes DayVotes
	Start int64
}

// markLSNRowsRead sets Log.LSNRowsRead on each line read that states LSNs
// when no history row of the 72 h before it, up to read (the first fact
// read), states its last LSN: every row that could pair with it by LSNs
// was read, and a window need not read those 72 h (a day of log-shipping
// facts, or three days) to learn it. A line at or after dirtyFrom (a new
// one) whose LSNs such a row does state needs the facts from an hour before
// the day of the earliest of them (where the window will start); need is
// the earliest of those, or NoBound. A line older than dirtyFrom needs
// nothing: its component reaches back only if it holds a new fact.
func markLSNRowsRead(ctx context.Context, src Source, in *derive.Facts, read, dirtyFrom int64) (need int64, err error) {
	need = NoBound
	// The lines of the day the window starts on at the latest, and of the
	// hour before it: older ones, read to reach a row, pair by LSNs with
	// what was read with them, and asking for them would scan days more.
	since := Day(dirtyFrom)*DayMS - readBefore
	asked := func(l *derive.Log) bool {
		return l.Completed.Valid && l.Completed.Int64 >= since && l.FirstLSN != "" && l.LastLSN != "" && !l.LSNRowsRead
	}
	from := int64(NoBound)
	var lsns []string
	for i := range in.Logs {
		if l := &in.Logs[i]; asked(l) {
			from = min(from, l.Completed.Int64-lsnRowReach)
			lsns = append(lsns, l.LastLSN)
		}
	}
	if len(lsns) == 0 {
		return need, nil
	}
	found := map[string][]int64{} // last LSN -> the times of the rows stating it
	if from < read {
		if found, err = src.LSNRows(ctx, from, read, lsns); err != nil {
			return 0, err
		}
	}
	for i := range in.Logs {
		l := &in.Logs[i]
		if !asked(l) {
			continue
		}
		earliest := int64(NoBound)
		for _, at := range found[l.LastLSN] {
			if at >= l.Completed.Int64-lsnRowReach {
				earliest = min(earliest, at)
			}
		}
		switch {
		case earliest == NoBound:
			l.LSNRowsRead = true
		case l.Completed.Int64 >= dirtyFrom:
			// The window will start on that row's day, if it pairs: the
			// facts of the hour before the day, which its first restores
			// may pair with, are read at once too. The caller reads from
			// need before deriving, and no row before the earliest states
			// the line's LSNs: the line is marked for that read.
			need = min(need, Day(earliest)*DayMS-readBefore)
			l.LSNRowsRead = true
		}
	}
	return need, nil
}

// Derive derives the restores of an instance from the window that holds
// every fact at or after dirtyFrom (see the package comment), semantics
// being the instance's stored restore_date semantics; ok false says the
// whole instance must be derived.
func Derive(ctx context.Context, src Source, dirtyFrom int64, semantics string) (res Result, ok bool, err error) {
	read := dirtyFrom - readBefore
	var in *derive.Facts
	until := int64(NoBound) // the facts read so far begin there
	for range tries {
		// The facts before those read so far, ahead of them: both are in
		// time order.
		older, err := src.Facts(ctx, read, until)
		if err != nil {
			return Result{}, false, err
		}
		if in != nil {
			older.History, older.Logs, older.Hosts = append(older.History, in.History...), append(older.Logs, in.Logs...), in.Hosts
		}
		in, until = older, read
		in.Semantics, in.Components, in.ReadFrom, in.NewFrom = semantics, true, read, dirtyFrom
		if !Windowable(in) {
			return Result{}, false, nil
		}
		// A completion line that states LSNs reaches 72 h back, unless one
		// query shows that no row there states its LSNs. A new one that
		// such a row does: read back to the row before deriving anything,
		// rather than derive what was read only to learn it; an older one
		// reaches as far only if its component holds a new fact.
		if need, err := markLSNRowsRead(ctx, src, in, read, dirtyFrom); err != nil {
			return Result{}, false, err
		} else if need < read {
			read = need
			continue
		}
		// Derived from copies: Derive fills a history row's missing facts
		// from its duplicate's, and the facts read are read again with
		// older ones if the window reaches further back.
		work := *in
		work.History, work.Logs = slices.Clone(in.History), slices.Clone(in.Logs)
		all := derive.Derive(&work)
		if len(all.Untimed) > 0 {
			return Result{}, false, nil
		}
		start := dirtyFrom
		for i := range all.Restores {
			if d := &all.Restores[i]; d.CompTo >= dirtyFrom {
				start = min(start, d.CompFrom)
			}
		}
		start = Day(start) * DayMS          // votes are kept by day
		need := min(read, start-readBefore) // the day's first restores reach an hour before it
		for i := range all.Restores {
			if d := &all.Restores[i]; d.CompTo >= start {
				need = min(need, d.CompReach)
			}
		}
		if need < read {
			read = need
			continue // a component reaches before the facts read
		}
		var out derive.Instance
		for _, d := range all.Restores {
			if Anchor(d.RestoreDateLocal, d.FinishedLocal) >= start {
				out.Restores = append(out.Restores, d)
			}
		}
		// The semantics, from the stored votes before the window and the
		// window's own.
		votes := VotesOf(out.Restores)
		sv, ev, err := src.VotesBefore(ctx, Day(start))
		if err != nil {
			return Result{}, false, err
		}
		for _, c := range votes {
			sv, ev = sv+c[0], ev+c[1]
		}
		if derive.SemanticsOf(sv, ev) != semantics {
			return Result{}, false, nil
		}
		out.Semantics, out.SemanticsN = semantics, sv+ev
		return Result{Out: out, Votes: votes, Start: start}, true, nil
	}
	return Result{}, false, nil
}
