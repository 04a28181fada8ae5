package store

// Derivation from the first changed fact onwards.
//
// Every import records, per instance, the local time of the earliest fact it
// added (instance.dirty_from; NULL when a fact concerns the whole instance).
// Reconciliation then derives a window instead of the whole instance when
// the last whole derivation found the instance windowable (error-log and
// msdb facts only, all dated, no restore longer than the pairing reach):
//
//   - the window's restores are those anchored on or after from, the day
//     before the earliest changed fact's day (a restore's anchor is the
//     earliest local time of its facts: restore_date, the completion line);
//   - its facts are read from windowLoad before from: a history row pairs
//     with a completion line at most 73 h away (derive's matchHistory);
//   - the restores the window derives anchored in the windowCheck before
//     from must be exactly the stored ones (same natural keys, same content
//     hashes): the pairs near the window's edge are then the ones the whole
//     derivation made, and the new facts took no partner from an older
//     restore. Any difference derives the whole instance;
//   - the restore_date semantics is the whole instance's: votes are kept by
//     day (derive_vote), the window's days replace theirs, and a total that
//     changes the semantics derives the whole instance (every restore's
//     start time depends on it).
//
// The outcome equals a whole derivation's; TestWindowEqualsWhole checks it
// on random imports.

import (
	"context"
	"database/sql"
	"math"
	"time"

	"github.com/restorewatch/restorewatch/store/derive"
)

const (
	dayMS       = int64(24 * time.Hour / time.Millisecond)
	windowLoad  = 7 * dayMS
	windowCheck = 4 * dayMS
	// A completion line pairs with a history row up to its engine seconds
	// (plus 2 minutes) after it when LSNs are missing: an instance with a
	// restore longer than this derives whole.
	windowMaxSeconds = 70 * 3600
	wholeInstance    = math.MinInt64
)

// anchor is a restore's earliest local time among restore_date and its
// completion (the earliest time of the facts it was derived from), or
// wholeInstance when it has neither.
func anchor(restoreDate, finished any) int64 {
	a := int64(math.MaxInt64)
	for _, v := range []any{restoreDate, finished} {
		switch v := v.(type) {
		case int64:
			a = min(a, v)
		case sql.NullInt64:
			if v.Valid {
				a = min(a, v.Int64)
			}
		}
	}
	if a == math.MaxInt64 {
		return wholeInstance
	}
	return a
}

// dayVotes are restore_date semantics votes by local day: start, end.
type dayVotes map[int64][2]int

// votesOf counts the votes of the restores anchored at or after from.
func votesOf(rs []derive.Derived) dayVotes {
	v := dayVotes{}
	for i := range rs {
		d := &rs[i]
		if d.Vote == 0 {
			continue
		}
		day := floorDiv(anchor(d.RestoreDateLocal, d.FinishedLocal), dayMS)
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

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// windowable says whether a whole derivation's facts allow later windows.
func windowable(in *derive.Facts, out *derive.Instance) bool {
	if len(out.Untimed) > 0 {
		return false
	}
	for i := range in.Logs {
		l := &in.Logs[i]
		if !l.Source.ErrorLog() || !l.Completed.Valid || l.Seconds.Float64 > windowMaxSeconds {
			return false
		}
	}
	return true
}

// deriveWindow derives the restores of instance id anchored at or after
// from, or says (ok false) that the whole instance must be derived.
func deriveWindow(ctx context.Context, tx querier, id, from int64, semantics string) (out derive.Instance, votes dayVotes, ok bool, err error) {
	in, err := loadFacts(ctx, tx, id, from-windowLoad)
	if err != nil {
		return out, nil, false, err
	}
	in.Semantics = semantics
	if !windowable(in, &derive.Instance{}) {
		return out, nil, false, nil
	}
	all := derive.Derive(in)
	if len(all.Untimed) > 0 {
		return out, nil, false, nil
	}
	var check []derive.Derived
	for _, d := range all.Restores {
		switch a := anchor(d.RestoreDateLocal, d.FinishedLocal); {
		case a >= from:
			out.Restores = append(out.Restores, d)
		case a >= from-windowCheck:
			check = append(check, d)
		}
	}
	// The semantics, from the stored votes before the window and the
	// window's own.
	votes = votesOf(out.Restores)
	var start, end int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(start_votes), 0), COALESCE(SUM(end_votes), 0) FROM derive_vote
		WHERE instance_id = ? AND day < ?`, id, floorDiv(from, dayMS)).Scan(&start, &end); err != nil {
		return out, nil, false, err
	}
	for _, c := range votes {
		start, end = start+c[0], end+c[1]
	}
	if derive.SemanticsOf(start, end) != semantics {
		return derive.Instance{}, nil, false, nil
	}
	out.Semantics, out.SemanticsN = semantics, start+end
	// The restores before the window must be the stored ones.
	stored := map[int64]int64{}
	rows, err := tx.QueryContext(ctx, `SELECT natural_key, content_hash, restore_date_local, finished_local FROM restore
		WHERE instance_id = ? AND at_utc >= ? AND at_utc < ?`, id, from-windowCheck-2*dayMS, from+5*dayMS)
	if err != nil {
		return out, nil, false, err
	}
	for rows.Next() {
		var k, h int64
		var rd, fin sql.NullInt64
		if err := rows.Scan(&k, &h, &rd, &fin); err != nil {
			rows.Close()
			return out, nil, false, err
		}
		if a := anchor(rd, fin); a >= from-windowCheck && a < from {
			stored[k] = h
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return out, nil, false, err
	}
	if len(stored) != len(check) {
		return derive.Instance{}, nil, false, nil
	}
	for i := range check {
		d := &check[i]
		h, found := stored[d.Key]
		if !found || h != restoreValues(d, id)[2].(int64) {
			return derive.Instance{}, nil, false, nil
		}
	}
	return out, votes, true, nil
}
