package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/derive"
	"github.com/restorewatch/restorewatch/store/row"
)

// Derivation on PostgreSQL. Every import marks the instances it added
// facts to dirty (a counter); Reconcile derives each dirty instance whole
// (store/derive), in one transaction of its own, and writes only the
// restores that changed: upserted by natural key, so a restore keeps its id,
// and the ones no longer derived deleted. It does not derive windows as
// store/sqlite does: one instance's facts are read on the server's side in
// one query each, and several replicas share the work.
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
// advisory lock; locked false says another replica holds the lock.
func (db *DB) deriveInstance(ctx context.Context, id int64) (locked bool, err error) {
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1, $2)`, deriveLockClass, lockKey(id)).Scan(&locked); err != nil || !locked {
			return err
		}
		var version int64
		var def sql.NullInt64
		err := tx.QueryRow(ctx, `SELECT dirty, default_utc_offset FROM instance WHERE id = $1`, id).Scan(&version, &def)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && version == 0) {
			return nil // deleted, or derived by another replica since the list was read
		}
		if err != nil {
			return err
		}
		in, err := loadFacts(ctx, tx, id, def)
		if err != nil {
			return err
		}
		out := derive.Derive(in)
		upserted, deleted, err := writeRestores(ctx, tx, id, &out)
		if err != nil {
			return err
		}
		// Cleared only if no import added facts since they were read; the
		// findings are stale now: the analysis is marked pending in the
		// same transaction. PostgreSQL derives no windows, so windowable
		// and the per-day votes a window needs stay unset.
		if _, err := tx.Exec(ctx, `UPDATE instance SET restore_date_semantics = $1, semantics_samples = $2,
			dirty = CASE WHEN dirty = $3 THEN 0 ELSE dirty END, dirty_from = CASE WHEN dirty = $3 THEN NULL ELSE dirty_from END,
			windowable = 0, analysis_pending = analysis_pending + 1, derived = derived + 1
			WHERE id = $4`, out.Semantics, out.SemanticsN, version, id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM derive_vote WHERE instance_id = $1`, id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM untimed_record WHERE instance_id = $1`, id); err != nil {
			return err
		}
		for src, n := range out.Untimed {
			if _, err := tx.Exec(ctx, `INSERT INTO untimed_record (instance_id, source, records) VALUES ($1, $2, $3)`,
				id, string(src), n); err != nil {
				return err
			}
		}
		// Last: it holds the change log's lock until the commit.
		return recordRestoreChanges(ctx, tx, upserted, deleted)
	})
	return locked, err
}

// loadFacts reads an instance's raw records for derivation; def is its
// default_utc_offset.
func loadFacts(ctx context.Context, tx pgx.Tx, id int64, def sql.NullInt64) (*derive.Facts, error) {
	f := &derive.Facts{}
	if def.Valid {
		v := int(def.Int64)
		f.DefaultOffset = &v
	}
	rows, err := tx.Query(ctx, `SELECT id, restore_history_id, restore_local, facts
		FROM history_row WHERE instance_id = $1 ORDER BY restore_local, id`, id)
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
		FROM log_restore WHERE instance_id = $1 ORDER BY completed_local, id`, id)
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

// writeRestores compares an instance's derivation with its stored
// restores and writes the difference: new and changed rows upserted by
// natural key, rows no longer derived deleted. It returns the natural keys
// upserted and the ids deleted, for the change log.
func writeRestores(ctx context.Context, tx pgx.Tx, id int64, out *derive.Instance) (upserted, deleted []int64, err error) {
	type stored struct{ id, hash int64 }
	existing := map[int64]stored{}
	rows, err := tx.Query(ctx, `SELECT natural_key, content_hash, id FROM restore WHERE instance_id = $1`, id)
	if err != nil {
		return nil, nil, err
	}
	var k, h, rid int64
	if _, err := pgx.ForEachRow(rows, []any{&k, &h, &rid}, func() error {
		existing[k] = stored{rid, h}
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
