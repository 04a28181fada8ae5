package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/derive"
	"github.com/restorewatch/restorewatch/store/row"
	"github.com/restorewatch/restorewatch/store/window"
)

// Derivation on PostgreSQL. Every import marks the instances it added
// facts to dirty (a counter) and records the earliest local time of a fact
// it added (dirty_from); Reconcile derives each dirty instance in one
// transaction of its own, from that time onwards where store/window allows
// it (the same windows as store/sqlite's, the same outcome as a whole
// derivation), else whole, and writes only the restores that changed:
// upserted by natural key, so a restore keeps its id, and the ones no
// longer derived deleted.
//
// Several replicas (serve, import, a collector) may reconcile at once. An
// instance is derived under a transaction-scoped advisory lock keyed by its
// id, taken with pg_try_advisory_xact_lock: a replica that finds the lock
// taken goes on with the other instances and comes back to it, so two never
// derive one instance at once and each Reconcile returns only once every
// instance dirty when it started has been derived (by it or another). The
// dirty counter read with the facts is cleared only if no import added
// facts since, as in store/sqlite.

// deriveLockClass is the first key of the advisory locks on instances (the
// bytes of "rwdv"); the second is the instance id.
const deriveLockClass int32 = 0x72776476

// lockKey is an instance's advisory lock's second key: its id, past
// 2^31-1 folded (two instances then share a lock, which only serialises
// them). 0 is the lock of checkDerivation.
func lockKey(id int64) int32 { return int32(id%(1<<31-1)) + 1 }

// lockRetry is how long Reconcile waits before trying again an instance
// another replica is deriving.
const lockRetry = 20 * time.Millisecond

// Reconcile derives the restores of every instance whose facts changed
// since it was last derived.
func (db *DB) Reconcile(ctx context.Context) error {
	if err := db.checkDerivation(ctx); err != nil {
		return err
	}
	rows, err := db.pool.Query(ctx, `SELECT id FROM instance WHERE dirty > 0 ORDER BY id`)
	if err != nil {
		return fmt.Errorf("store: reconcile: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return fmt.Errorf("store: reconcile: %w", err)
	}
	total, done := len(ids), 0
	for len(ids) > 0 {
		var busy []int64
		for _, id := range ids {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("store: reconcile: %w", err)
			}
			locked, err := db.deriveInstance(ctx, id)
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "40P01" {
				// A deadlock: its transaction rolled back; the instance
				// is derived again with those still busy.
				locked, err = false, nil
			}
			if err != nil {
				return fmt.Errorf("store: reconcile instance %d: %w", id, err)
			}
			if !locked {
				busy = append(busy, id)
				continue
			}
			done++
			db.Report(store.Progress{Phase: store.PhaseDerive, Done: done, Total: total})
		}
		if ids = busy; len(ids) > 0 {
			select {
			case <-time.After(lockRetry):
			case <-ctx.Done():
				return fmt.Errorf("store: reconcile: %w", ctx.Err())
			}
		}
	}
	return nil
}

// ReconcileAll derives every instance's restores again.
func (db *DB) ReconcileAll(ctx context.Context) error {
	if _, err := db.pool.Exec(ctx, `UPDATE instance SET dirty = dirty + 1, dirty_from = NULL`); err != nil {
		return fmt.Errorf("store: reconcile all: %w", err)
	}
	return db.Reconcile(ctx)
}

// checkDerivation marks every instance dirty when the warehouse's restores
// were derived by another derivation version (derive.Version) or none
// recorded it (a warehouse migrated from an older SQLite one).
func (db *DB) checkDerivation(ctx context.Context) error {
	var v string
	err := db.pool.QueryRow(ctx, `SELECT value FROM setting WHERE key = 'derivation_version'`).Scan(&v)
	if err == nil && v == derive.Version {
		return nil
	}
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("store: reconcile: %w", err)
	}
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		// Replicas starting together mark the instances once: the first
		// takes the lock and records the version, the others then find it.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, 0)`, deriveLockClass); err != nil {
			return fmt.Errorf("store: reconcile: %w", err)
		}
		var v *string
		if err := tx.QueryRow(ctx, `SELECT (SELECT value FROM setting WHERE key = 'derivation_version')`).Scan(&v); err != nil {
			return fmt.Errorf("store: reconcile: %w", err)
		}
		if v != nil && *v == derive.Version {
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE instance SET dirty = dirty + 1, dirty_from = NULL`); err != nil {
			return fmt.Errorf("store: reconcile: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO setting (key, value) VALUES ('derivation_version', $1)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, derive.Version); err != nil {
			return fmt.Errorf("store: reconcile: %w", err)
		}
		return nil
	})
}

// deriveInstance derives instance id in one transaction, under its
// advisory lock; locked false says another replica holds the lock. It
// derives the window from the instance's first changed fact onwards
// (store/window) when the last whole derivation found it windowable, the
// whole instance otherwise.
//
// The transaction reads at READ COMMITTED, as the whole derivation always
// did: an import that commits between its reads leaves the dirty counter
// unequal to the one read here, so the instance stays dirty, its
// dirty_from the earliest of both imports', and the next pass derives
// again every restore whose component those facts reach.
func (db *DB) deriveInstance(ctx context.Context, id int64) (locked bool, err error) {
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1, $2)`, deriveLockClass, lockKey(id)).Scan(&locked); err != nil || !locked {
			return err
		}
		// The tables it writes, in the lock order, before it reads them: a
		// month's prune copying what stays (SHARE) makes it wait here,
		// holding nothing the prune's swap then waits for. Reading first
		// and waiting to write was a deadlock with the swap.
		if _, err := tx.Exec(ctx, `LOCK TABLE history_row, log_restore, restore IN ROW EXCLUSIVE MODE`); err != nil {
			return err
		}
		var version, canWindow int64
		var def, dirtyFrom sql.NullInt64
		var semantics string
		err := tx.QueryRow(ctx, `SELECT dirty, default_utc_offset, dirty_from, windowable, restore_date_semantics
			FROM instance WHERE id = $1`, id).Scan(&version, &def, &dirtyFrom, &canWindow, &semantics)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && version == 0) {
			return nil // deleted, or derived by another replica since the list was read
		}
		if err != nil {
			return err
		}
		// from is the local time from which out replaces the instance's
		// restores (by anchor), wholeInstance for all of them; votes are
		// out's by day; a window leaves windowable as it was (true).
		from, windowable := int64(wholeInstance), true
		var out derive.Instance
		var votes window.DayVotes
		if dirtyFrom.Valid && canWindow != 0 {
			res, ok, err := window.Derive(ctx, windowSource{db, tx, id, def}, dirtyFrom.Int64, semantics)
			if err != nil {
				return err
			}
			if ok {
				from, out, votes = res.Start, res.Out, res.Votes
				db.windows.Add(1)
			}
		}
		if from == wholeInstance {
			in, err := loadFacts(ctx, tx, id, def, wholeInstance, window.NoBound)
			if err != nil {
				return err
			}
			out = derive.Derive(in)
			votes = window.VotesOf(out.Restores)
			windowable = window.Windowable(in) && len(out.Untimed) == 0
		}
		db.derivedRestores.Add(int64(len(out.Restores)))
		upserted, deleted, err := writeRestores(ctx, tx, id, &out, from)
		if err != nil {
			return err
		}
		// Cleared only if no import added facts since they were read; the
		// findings are stale now: the analysis is marked pending in the
		// same transaction. Restores deleted move the instance's evidence
		// (a series' last ones move back: prune_stamp, migration 0039).
		if _, err := tx.Exec(ctx, `UPDATE instance SET restore_date_semantics = $1, semantics_samples = $2,
			dirty = CASE WHEN dirty = $3 THEN 0 ELSE dirty END, dirty_from = CASE WHEN dirty = $3 THEN NULL ELSE dirty_from END,
			windowable = $4, analysis_pending = analysis_pending + 1, derived = derived + 1,
			evidence_rev = evidence_rev + $6 WHERE id = $5`, out.Semantics, out.SemanticsN, version, flag(windowable), id,
			min(len(deleted), 1)); err != nil {
			return err
		}
		if from == wholeInstance {
			if _, err := tx.Exec(ctx, `DELETE FROM untimed_record WHERE instance_id = $1`, id); err != nil {
				return err
			}
			for src, n := range out.Untimed {
				if _, err := tx.Exec(ctx, `INSERT INTO untimed_record (instance_id, source, records) VALUES ($1, $2, $3)`,
					id, string(src), n); err != nil {
					return err
				}
			}
		}
		if err := writeVotes(ctx, tx, id, window.Day(from), votes); err != nil {
			return err
		}
		// Last: it holds the change log's lock until the commit.
		return recordRestoreChanges(ctx, tx, upserted, deleted)
	})
	return locked, err
}

// writeVotes replaces the votes of instance id's days from day on by
// votes, in one statement.
func writeVotes(ctx context.Context, tx pgx.Tx, id, day int64, votes window.DayVotes) error {
	if _, err := tx.Exec(ctx, `DELETE FROM derive_vote WHERE instance_id = $1 AND day >= $2`, id, day); err != nil {
		return err
	}
	if len(votes) == 0 {
		return nil
	}
	days := slices.Sorted(maps.Keys(votes))
	starts, ends := make([]int64, len(days)), make([]int64, len(days))
	for i, d := range days {
		starts[i], ends[i] = int64(votes[d][0]), int64(votes[d][1])
	}
	_, err := tx.Exec(ctx, `INSERT INTO derive_vote (instance_id, day, start_votes, end_votes)
		SELECT $1, d, s, e FROM unnest($2::bigint[], $3::bigint[], $4::bigint[]) AS v (d, s, e)`, id, days, starts, ends)
	return err
}

// loadFacts reads an instance's raw records for derivation; def is its
// default_utc_offset.
//
// from, unless it is wholeInstance, reads only the history rows and log
// restores at or after that local time and, unless to is window.NoBound,
// before to (a window, store/window); host snapshots are read whole, but
// for a read bounded by to, which leaves them to the read that follows it.
// A range also names its months, so that only their partitions are read
// (part_month is the month of the column read: migration 0035).
func loadFacts(ctx context.Context, tx pgx.Tx, id int64, def sql.NullInt64, from, to int64) (*derive.Facts, error) {
	f := &derive.Facts{}
	if def.Valid {
		v := int(def.Int64)
		f.DefaultOffset = &v
	}
	args := []any{id}
	within := func(string) string { return "" }
	if from != wholeInstance {
		args = append(args, from, monthOf(from))
		within = func(col string) string { return " AND " + col + " >= $2 AND part_month >= $3" }
		if to != window.NoBound {
			args = append(args, to, monthOf(to-1))
			within = func(col string) string {
				return " AND " + col + " >= $2 AND part_month >= $3 AND " + col + " < $4 AND part_month <= $5"
			}
		}
	}
	rows, err := tx.Query(ctx, `SELECT id, restore_history_id, restore_local, facts
		FROM history_row WHERE instance_id = $1`+within("restore_local")+` ORDER BY restore_local, id`, args...)
	if err != nil {
		return nil, err
	}
	var raw string
	var h derive.History
	_, err = pgx.ForEachRow(rows, []any{&h.ID, &h.HID, &h.RestoreLocal, &raw}, func() error {
		h.HistoryFacts = derive.HistoryFacts{}
		if err := row.DecodeHistoryFacts(&h.HistoryFacts, raw); err != nil {
			return fmt.Errorf("history row %d: %w", h.ID, err)
		}
		f.History = append(f.History, h)
		return nil
	})
	if err != nil {
		return nil, err
	}
	rows, err = tx.Query(ctx, `SELECT id, source, database_name, kind, message_id, completed_local, utc_offset,
		COALESCE(first_lsn,''), COALESCE(last_lsn,''), COALESCE(device_type,''), device_count, devices, has_3014 <> 0, pages,
		seconds, mbps, upper_bound_s, COALESCE(buffer,'')
		FROM log_restore WHERE instance_id = $1`+within("completed_local")+` ORDER BY completed_local, id`, args...)
	if err != nil {
		return nil, err
	}
	var l derive.Log
	var devices, buffer string
	_, err = pgx.ForEachRow(rows, []any{&l.ID, &l.Source, &l.DB, &l.Kind, &l.MessageID, &l.Completed, &l.Offset, &l.FirstLSN,
		&l.LastLSN, &l.DeviceType, &l.DeviceCount, &devices, &l.Has3014, &l.Pages, &l.Seconds, &l.MBps, &l.UpperBound, &buffer}, func() error {
		c := l
		c.Devices = row.DecodeStrings(devices)
		c.Buffer = nil
		if buffer != "" {
			c.Buffer = &store.BufferConfig{}
			if json.Unmarshal([]byte(buffer), c.Buffer) != nil {
				c.Buffer = nil
			}
		}
		f.Logs = append(f.Logs, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if to != window.NoBound {
		return f, nil
	}
	rows, err = tx.Query(ctx, `SELECT observed_local, utc_offset, COALESCE(version,''), ifi <> 0, cores, memory_mb,
		trace_flags, modules FROM host_snapshot WHERE instance_id = $1 ORDER BY observed_local, id`, id)
	if err != nil {
		return nil, err
	}
	var hs derive.Host
	_, err = pgx.ForEachRow(rows, []any{&hs.Observed, &hs.Offset, &hs.Version, &hs.IFI, &hs.Cores, &hs.Memory, &hs.TraceFlags, &hs.Modules},
		func() error { f.Hosts = append(f.Hosts, hs); return nil })
	return f, err
}

// writeRestores compares an instance's derivation, whose restores
// anchored at or after from (wholeInstance: all of them) replace the
// stored ones, with its stored restores and writes the difference: new and changed rows upserted by
// natural key, rows no longer derived deleted. It returns the natural keys
// upserted and the ids deleted, for the change log.
func writeRestores(ctx context.Context, tx pgx.Tx, id int64, out *derive.Instance, from int64) (upserted, deleted []int64, err error) {
	type stored struct{ id, hash int64 }
	existing := map[int64]stored{}
	query, qargs := `SELECT natural_key, content_hash, id, restore_date_local, finished_local FROM restore WHERE instance_id = $1`, []any{id}
	if from != wholeInstance {
		// A restore's time is at most a day (its time zone) before its
		// anchor.
		query, qargs = query+` AND at_utc >= $2`, append(qargs, from-2*window.DayMS)
	}
	rows, err := tx.Query(ctx, query, qargs...)
	if err != nil {
		return nil, nil, err
	}
	var k, h, rid int64
	var rd, fin *int64
	if _, err := pgx.ForEachRow(rows, []any{&k, &h, &rid, &rd, &fin}, func() error {
		if from == wholeInstance || window.Anchor(rd, fin) >= from {
			existing[k] = stored{rid, h}
		}
		return nil
	}); err != nil {
		return nil, nil, err
	}
	var args []any
	n := 0
	for i := range out.Restores {
		d := &out.Restores[i]
		v := row.Values(d, id)
		e, ok := existing[d.Key]
		delete(existing, d.Key)
		if ok && e.hash == v[2].(int64) {
			continue // unchanged: no write
		}
		upserted = append(upserted, d.Key)
		args = append(args, columnValues(v)...)
		args = append(args, restoreMonth(d))
		if n++; n == restoresPerUpsert {
			if _, err := tx.Exec(ctx, upsertSQL(n), args...); err != nil {
				return nil, nil, fmt.Errorf("write restores: %w", err)
			}
			args, n = args[:0], 0
		}
	}
	if n > 0 {
		if _, err := tx.Exec(ctx, upsertSQL(n), args...); err != nil {
			return nil, nil, fmt.Errorf("write restores: %w", err)
		}
	}
	var staleKeys []int64
	for k, e := range existing {
		staleKeys = append(staleKeys, k)
		deleted = append(deleted, e.id)
	}
	if len(staleKeys) > 0 {
		slices.Sort(deleted)
		if _, err := tx.Exec(ctx, `DELETE FROM restore WHERE natural_key = ANY($1)`, staleKeys); err != nil {
			return nil, nil, fmt.Errorf("delete stale restores: %w", err)
		}
	}
	return upserted, deleted, nil
}

// restoresPerUpsert is how many restores one upsert carries (49 columns
// each, well inside PostgreSQL's 65,535 parameters).
const restoresPerUpsert = 500

// upsertTail keeps a restore's id when its facts change.
var upsertTail = func() string {
	var set []string
	for _, c := range row.Cols {
		if c != "natural_key" && c != "instance_id" {
			set = append(set, c+" = excluded."+c)
		}
	}
	// part_month is a function of natural_key (migration 0035): the key
	// names the row whatever its times become.
	return " ON CONFLICT (natural_key, part_month) DO UPDATE SET " + strings.Join(set, ", ")
}()

func upsertSQL(n int) string {
	head := "INSERT INTO restore (" + strings.Join(row.Cols, ", ") + ", part_month) VALUES "
	return multiRowSQL(head, len(row.Cols)+1, n, upsertTail)
}

// columnValues puts a restore row (row.Values) in the warehouse's column
// forms: flags as BIGINT 0/1, ints as int64. Pointers stay: pgx writes a
// nil one as NULL.
func columnValues(v []any) []any {
	for i, x := range v {
		switch x := x.(type) {
		case bool:
			v[i] = flag(x)
		case *bool:
			v[i] = flagPtr(x)
		case int:
			v[i] = int64(x)
		}
	}
	return v
}
