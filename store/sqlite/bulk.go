package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/restorewatch/restorewatch/store"
)

// A large reconciliation (a first import of a big export, analyze
// --rederive) writes restores whose secondary indexes — ordered by time,
// measure, build, source or database across the fleet, not by instance —
// take each new row to a random page of each index, most of a large
// import's time (docs/benchmarks-log.md). Such a reconciliation
// drops those indexes first and builds them again at the end, which sorts
// once instead. The indexes are found in sqlite_master, so an index added by
// a later migration is handled too; restore_series stays, reconciliation
// reads through it.
//
// The dropped indexes' SQL is kept in the setting table in the transaction
// that drops them, and every Reconcile first builds again whatever a crashed
// one left dropped: a crash costs speed until then, never correctness.
var (
	bulkMinChanges int64 = 50000 // restores to write before the indexes are worth dropping
	bulkShare      int64 = 4     // … and at least a 1/bulkShare share of the table
)

const droppedKey = "dropped_restore_indexes"

// bulkDrops counts the bulk reconciliations of this process, for tests.
var bulkDrops atomic.Int64

// indexFault, set by a test, runs before each index build on the writer
// and fails the build when it returns an error.
var indexFault func(*sql.DB) error

// keptIndexes are the secondary indexes of restore a bulk reconciliation
// keeps: the writer reads an instance's restores through restore_series.
var keptIndexes = map[string]bool{"restore_series": true}

// bulkWorth estimates how many restores the dirty instances will write —
// their raw facts less the restores they already have — and says whether
// that is enough to drop the indexes. The whole table is counted only for
// an estimate past bulkMinChanges: every Reconcile asks, and counting a
// million restores costs a scan of an index.
// windowCond says in SQL that an instance may be derived from a window.
const windowCond = `(windowable = 1 AND dirty_from IS NOT NULL)`

func (db *DB) bulkWorth(ctx context.Context) (bool, error) {
	// Instances a window may derive (window.go) count the facts of their
	// window, the larger of their history rows and completion lines (a
	// restore seen by both is one); the others all their facts.
	var changes, windowed int64
	err := db.write.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM history_row WHERE instance_id IN (SELECT id FROM instance WHERE dirty > 0 AND NOT `+windowCond+`)) +
		(SELECT count(*) FROM log_restore WHERE instance_id IN (SELECT id FROM instance WHERE dirty > 0 AND NOT `+windowCond+`)) -
		(SELECT count(*) FROM restore WHERE instance_id IN (SELECT id FROM instance WHERE dirty > 0 AND NOT `+windowCond+`)),
		(SELECT COALESCE(SUM(max(
			(SELECT count(*) FROM history_row h WHERE h.instance_id = i.id AND h.restore_local >= i.dirty_from),
			(SELECT count(*) FROM log_restore l WHERE l.instance_id = i.id AND l.completed_local >= i.dirty_from))), 0)
		FROM instance i WHERE i.dirty > 0 AND `+windowCond+`)`).Scan(&changes, &windowed)
	changes += windowed
	if err != nil || changes < bulkMinChanges {
		return false, err
	}
	var total int64
	if err := db.write.QueryRowContext(ctx, `SELECT count(*) FROM restore`).Scan(&total); err != nil {
		return false, err
	}
	return changes*bulkShare >= total, nil
}

// dropIndexes drops restore's secondary indexes (but keptIndexes) and
// records their SQL, in one transaction.
func (db *DB) dropIndexes(ctx context.Context) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT name, sql FROM sqlite_master
		WHERE type = 'index' AND tbl_name = 'restore' AND sql IS NOT NULL ORDER BY name`)
	if err != nil {
		return err
	}
	dropped := map[string]string{}
	for rows.Next() {
		var name, q string
		if err := rows.Scan(&name, &q); err != nil {
			rows.Close()
			return err
		}
		// Only plain indexes: a UNIQUE one is a constraint the writes
		// rely on.
		if !keptIndexes[name] && plainIndex.MatchString(q) {
			dropped[name] = q
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(dropped) == 0 {
		return nil
	}
	js, _ := json.Marshal(dropped)
	if _, err := tx.ExecContext(ctx, `INSERT INTO setting (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, droppedKey, string(js)); err != nil {
		return err
	}
	for name := range dropped {
		if _, err := tx.ExecContext(ctx, `DROP INDEX `+quoteIdent(name)); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	bulkDrops.Add(1)
	return nil
}

// restoreIndexes builds again the indexes a bulk reconciliation dropped, one
// transaction each so that no other writer waits behind all of them, and
// forgets them when all exist.
func (db *DB) restoreIndexes(ctx context.Context) error {
	var js string
	err := db.write.QueryRowContext(ctx, `SELECT value FROM setting WHERE key = ?`, droppedKey).Scan(&js)
	if err == sql.ErrNoRows {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: rebuild indexes: %w", err)
	}
	var dropped map[string]string
	if err := json.Unmarshal([]byte(js), &dropped); err != nil {
		return fmt.Errorf("store: rebuild indexes: %s holds %q: %w", droppedKey, js, err)
	}
	// Sort with a helper thread: CREATE INDEX is a sort, and SQLite splits
	// it over worker threads when allowed.
	if _, err := db.write.ExecContext(ctx, `PRAGMA threads = 2`); err != nil {
		return fmt.Errorf("store: rebuild indexes: %w", err)
	}
	// The sort spills what does not fit the cache to temporary files, which
	// the writer otherwise keeps in memory (temp_store): on files a large
	// import's peak memory is lower (docs/benchmarks-log.md).
	if _, err := db.write.ExecContext(ctx, `PRAGMA temp_store = FILE`); err != nil {
		return fmt.Errorf("store: rebuild indexes: %w", err)
	}
	defer db.write.ExecContext(context.WithoutCancel(ctx), `PRAGMA temp_store = MEMORY`)
	names := make([]string, 0, len(dropped))
	for name := range dropped {
		names = append(names, name)
	}
	slices.Sort(names)
	for i, name := range names {
		db.Report(store.Progress{Phase: store.PhaseIndexes, Done: i, Total: len(names)})
		q := dropped[name]
		// The SQL is sqlite_master's own text, "CREATE INDEX [IF NOT
		// EXISTS] name ON …".
		if !ifNotExists.MatchString(q) {
			q = plainIndex.ReplaceAllString(q, "CREATE INDEX IF NOT EXISTS ")
		}
		build := func() error {
			if indexFault != nil {
				if err := indexFault(db.write); err != nil {
					return err
				}
			}
			_, err := db.write.ExecContext(ctx, q)
			return err
		}
		if err := build(); err != nil {
			// Perhaps no temporary directory SQLite can write to: sort in
			// memory, as before, this index and the rest.
			if _, merr := db.write.ExecContext(ctx, `PRAGMA temp_store = MEMORY`); merr != nil {
				return fmt.Errorf("store: rebuild index %s: %w", name, err)
			}
			if err := build(); err != nil {
				return fmt.Errorf("store: rebuild index %s: %w", name, err)
			}
		}
	}
	db.Report(store.Progress{Phase: store.PhaseIndexes, Done: len(names), Total: len(names)})
	if _, err := db.write.ExecContext(ctx, `DELETE FROM setting WHERE key = ?`, droppedKey); err != nil {
		return fmt.Errorf("store: rebuild indexes: %w", err)
	}
	return nil
}

var (
	plainIndex  = regexp.MustCompile(`(?i)^\s*CREATE\s+INDEX\s+`)
	ifNotExists = regexp.MustCompile(`(?i)^\s*CREATE\s+INDEX\s+IF\s+NOT\s+EXISTS\s`)
)

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
