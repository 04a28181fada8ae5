package postgres

import (
	"context"
	"fmt"
	"slices"
)

// MonthOf is monthOf, for TestMonthOfAsInSQL.
var MonthOf = monthOf

// URL is the warehouse's URL without its password (the test cluster's
// have none), for a second replica on it.
func (db *DB) URL() string { return db.dump }

// WindowStats are the counters of derivation, for the window tests:
// instances derived from a window, facts windows read, restores derived.
func (db *DB) WindowStats() (windows, facts, restores int64) {
	return db.windows.Load(), db.windowFacts.Load(), db.derivedRestores.Load()
}

// DerivedState lists what derivation leaves, sorted (storetest.WindowEngine.State).
func (db *DB) DerivedState(ctx context.Context) ([]string, error) {
	var out []string
	rows, err := db.pool.Query(ctx, `SELECT i.name, r.natural_key, r.content_hash FROM restore r JOIN instance i ON i.id = r.instance_id`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var name string
		var k, h int64
		if err := rows.Scan(&name, &k, &h); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, fmt.Sprintf("%s restore %d %x", name, k, h))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = db.pool.Query(ctx, `SELECT name::text, restore_date_semantics, semantics_samples, dirty, windowable,
		(SELECT COALESCE(SUM(start_votes), 0) || '/' || COALESCE(SUM(end_votes), 0) FROM derive_vote WHERE instance_id = instance.id)
		FROM instance`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var name, sem, votes string
		var n, dirty, win int64
		if err := rows.Scan(&name, &sem, &n, &dirty, &win, &votes); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, fmt.Sprintf("%s semantics %s on %d, votes %s, dirty %d, windowable %d", name, sem, n, votes, dirty, win))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

// BetweenPrunePhases has f called between a month's prune's two phases (the
// roll-up and the drop); an error from f stops the prune there, as a crash
// would.
func (db *DB) BetweenPrunePhases(f func(context.Context) error) { db.pruneHook = f }
