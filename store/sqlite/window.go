package sqlite

// Derivation from the first changed fact onwards: the rules, and the
// derivation itself, are store/window's, shared with store/postgres; this
// file reads what a window asks for in SQLite.

import (
	"context"
	"database/sql"

	"github.com/restorewatch/restorewatch/store/derive"
	"github.com/restorewatch/restorewatch/store/window"
)

const (
	dayMS         = window.DayMS
	wholeInstance = window.Whole
	noBound       = window.NoBound
)

// dayVotes are restore_date semantics votes by local day.
type dayVotes = window.DayVotes

var (
	anchor     = window.Anchor
	votesOf    = window.VotesOf
	windowable = window.Windowable
)

// windowSource is a window's reads of one instance in a snapshot.
type windowSource struct {
	db  *DB
	q   querier
	id  int64
	def sql.NullInt64
}

func (s windowSource) Facts(ctx context.Context, from, to int64) (*derive.Facts, error) {
	f, err := loadFacts(ctx, s.q, s.id, s.def, from, to)
	if err == nil {
		s.db.windowFacts.Add(int64(len(f.History) + len(f.Logs)))
	}
	return f, err
}

// lsnRowsSQL finds the history rows of an instance within a time range
// that state one of a set of last LSNs (a JSON array): on the rows' time
// index, the LSN read from their facts (position 16) in SQLite, only the
// rows found handed over.
const lsnRowsSQL = `SELECT facts ->> 16, restore_local FROM history_row WHERE instance_id = ? AND restore_local >= ? AND restore_local < ?
	AND facts ->> 16 IN (SELECT value FROM json_each(?))`

func (s windowSource) LSNRows(ctx context.Context, from, to int64, lsns []string) (map[string][]int64, error) {
	found := map[string][]int64{}
	rows, err := s.q.QueryContext(ctx, lsnRowsSQL, s.id, from, to, jsonText(lsns))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var lsn string
		var at int64
		if err := rows.Scan(&lsn, &at); err != nil {
			return nil, err
		}
		found[lsn] = append(found[lsn], at)
	}
	return found, rows.Err()
}

func (s windowSource) VotesBefore(ctx context.Context, day int64) (start, end int, err error) {
	err = s.q.QueryRowContext(ctx, `SELECT COALESCE(SUM(start_votes), 0), COALESCE(SUM(end_votes), 0) FROM derive_vote
		WHERE instance_id = ? AND day < ?`, s.id, day).Scan(&start, &end)
	return start, end, err
}

// deriveWindow derives the restores of instance id from the window that
// holds every fact at or after dirtyFrom (window.Derive): the restores
// anchored at or after start, their votes, or ok false when the whole
// instance must be derived.
func (db *DB) deriveWindow(ctx context.Context, tx querier, id int64, def sql.NullInt64, dirtyFrom int64, semantics string) (out derive.Instance, votes dayVotes, start int64, ok bool, err error) {
	res, ok, err := window.Derive(ctx, windowSource{db, tx, id, def}, dirtyFrom, semantics)
	return res.Out, res.Votes, res.Start, ok, err
}
