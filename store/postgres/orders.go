package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/orders"
)

// The fleet's orders (store/orders) on PostgreSQL: built from one scan of
// the restore table, updated from the change log (changes.go), kept in
// order_snapshot between starts; and the dashboard's other kept aggregates.

// readSnapshot runs fn in a read-only REPEATABLE READ transaction: the
// log's position and the rows read are one snapshot.
func (db *DB) readSnapshot(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

// logSeq is the change log's position: its newest seq (writers number
// their rows under a lock held to their commit, so a reader never sees a
// higher seq before a lower one).
const logSeq = `(SELECT COALESCE(MAX(seq), 0) FROM restore_change)`

// RestoreOrders reads the fleet's orders from every restore.
func (db *DB) RestoreOrders(ctx context.Context) (*orders.Orders, error) {
	var o *orders.Orders
	err := db.readSnapshot(ctx, func(tx pgx.Tx) error {
		var maxID, seq int64
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(id), 0), `+logSeq+` FROM restore`).Scan(&maxID, &seq); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT id, `+orders.Columns+` FROM restore`)
		if err != nil {
			return err
		}
		defer rows.Close()
		o, err = orders.Build(seq, maxID, rows)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: restore orders: %w", err)
	}
	return o, nil
}

// UpdateOrders returns the fleet's orders as they are now, made from old
// by the changes logged since it was made, or read anew when the log
// cannot say (pruned past it, a rebuild marker) or so much changed that a
// scan costs less. With nothing changed it returns old.
func (db *DB) UpdateOrders(ctx context.Context, old store.FleetOrders) (store.FleetOrders, error) {
	prev, _ := old.(*orders.Orders)
	if prev != nil {
		o, err := db.updateOrders(ctx, prev)
		if err != nil {
			return nil, fmt.Errorf("store: update orders: %w", err)
		}
		if o != nil {
			return o, nil
		}
	}
	return db.RestoreOrders(ctx)
}

// updateOrders applies the changes since old; nil means rebuild.
func (db *DB) updateOrders(ctx context.Context, old *orders.Orders) (*orders.Orders, error) {
	var o *orders.Orders
	err := db.readSnapshot(ctx, func(tx pgx.Tx) error {
		seq, changes, readable, err := changesSince(ctx, tx, old.OrdersSeq())
		switch {
		case err != nil:
			return err
		case seq == old.OrdersSeq():
			o = old
			return nil
		case !readable || orders.Rebuilds(old, changes):
			return nil
		}
		rows, err := changedRestores(ctx, tx, old.OrdersSeq())
		if err != nil {
			return err
		}
		defer rows.Close()
		o, err = orders.Update(old, seq, rows)
		return err
	})
	return o, err
}

// snapshotTxParts is how many parts one transaction of a save writes.
const snapshotTxParts = 4

// SaveOrders keeps o for the next start of a server (LoadOrders), replacing
// the snapshot saved before: its parts in transactions of a few parts
// each, the header last with the orders' heads (LoadOrderHeads), so a save
// cut short leaves the previous snapshot the newest complete one.
func (db *DB) SaveOrders(ctx context.Context, fo store.FleetOrders) error {
	o, ok := fo.(*orders.Orders)
	if !ok {
		return fmt.Errorf("store: save orders: %T is not this warehouse's orders", fo)
	}
	var gen int64
	if err := db.pool.QueryRow(ctx, `SELECT COALESCE(MAX(gen), 0) + 1 FROM order_snapshot`).Scan(&gen); err != nil {
		return fmt.Errorf("store: save orders: %w", err)
	}
	// Parts of a save that never finished (no header) go first.
	if _, err := db.pool.Exec(ctx, `DELETE FROM order_snapshot WHERE gen NOT IN (SELECT gen FROM order_snapshot WHERE part = 0)`); err != nil {
		return fmt.Errorf("store: save orders: %w", err)
	}
	header, err := orders.SaveParts(o, snapshotTxParts, func(first int, parts [][]byte) error {
		return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			for i, b := range parts {
				if _, err := tx.Exec(ctx, `INSERT INTO order_snapshot (gen, part, body) VALUES ($1, $2, $3)`, gen, first+i, b); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("store: save orders: %w", err)
	}
	if err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO order_snapshot (gen, part, body) VALUES ($1, -1, $2), ($1, 0, $3)`,
			gen, orders.HeadsOf(o).Encode(), header); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM order_snapshot WHERE gen < $1`, gen)
		return err
	}); err != nil {
		return fmt.Errorf("store: save orders: %w", err)
	}
	return nil
}

// LoadOrders reads the newest complete snapshot SaveOrders wrote, or nil
// when there is none, none this binary reads, or one of a position the
// change log has not reached. UpdateOrders brings it up to date.
func (db *DB) LoadOrders(ctx context.Context) (store.FleetOrders, error) {
	var o *orders.Orders
	err := db.readSnapshot(ctx, func(tx pgx.Tx) error {
		snap, ok, err := newestSnapshot(ctx, tx)
		if err != nil || !ok {
			return err
		}
		seq, parts, gen := snap.seq, snap.parts, snap.gen
		rows, err := tx.Query(ctx, `SELECT body FROM order_snapshot WHERE gen = $1 AND part > 0 ORDER BY part`, gen)
		if err != nil {
			return err
		}
		defer rows.Close()
		loaded, read, err := orders.Decode(func() ([]byte, error) {
			if !rows.Next() {
				if err := rows.Err(); err != nil {
					return nil, err
				}
				return nil, orders.ErrSnapshot
			}
			var b []byte
			err := rows.Scan(&b)
			return b, err
		})
		switch {
		case errors.Is(err, orders.ErrSnapshot):
			return nil
		case err != nil:
			return err
		case loaded.OrdersSeq() == seq && read == parts:
			o = loaded
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: load orders: %w", err)
	}
	if o == nil { // no typed nil in the interface
		return nil, nil
	}
	return o, nil
}

// snapshotHeader is what a complete snapshot's header says.
type snapshotHeader struct {
	gen, seq, parts int64
}

// newestSnapshot reads, in tx, the header of the newest complete snapshot;
// false when there is none, or its header is unreadable, or it is of a
// position the change log has not reached.
func newestSnapshot(ctx context.Context, tx pgx.Tx) (snapshotHeader, bool, error) {
	var h snapshotHeader
	var at int64
	var header []byte
	err := tx.QueryRow(ctx, `SELECT gen, body, `+logSeq+` FROM order_snapshot WHERE part = 0 ORDER BY gen DESC LIMIT 1`).
		Scan(&h.gen, &header, &at)
	if errors.Is(err, pgx.ErrNoRows) {
		return h, false, nil
	}
	if err != nil {
		return h, false, err
	}
	var ok bool
	h.seq, h.parts, ok = orders.ReadHeader(header)
	return h, ok && h.seq <= at, nil
}

// LoadOrderHeads returns the heads kept with the newest complete snapshot
// of the orders (SaveOrders, part -1), brought up to date with the change
// log: nil when there are none (no snapshot, one saved before heads were
// kept, or one of a position the log has not reached) or when the log
// cannot say what changed since, or too much did (orders.HeadsMaxChanges).
// It reads a few KiB and what changed, not the orders.
func (db *DB) LoadOrderHeads(ctx context.Context) (store.OrderHeads, error) {
	var h *orders.Heads
	err := db.readSnapshot(ctx, func(tx pgx.Tx) error {
		snap, ok, err := newestSnapshot(ctx, tx)
		if err != nil || !ok {
			return err
		}
		var body []byte
		err = tx.QueryRow(ctx, `SELECT body FROM order_snapshot WHERE gen = $1 AND part = -1`, snap.gen).Scan(&body)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		kept, err := orders.DecodeHeads(body)
		if err != nil || kept.Seq() != snap.seq {
			return nil
		}
		seq, changes, readable, err := changesSince(ctx, tx, kept.Seq())
		switch {
		case err != nil:
			return err
		case seq == kept.Seq():
			h = kept
			return nil
		case !readable || changes > orders.HeadsMaxChanges:
			return nil
		}
		rows, err := changedRestores(ctx, tx, kept.Seq())
		if err != nil {
			return err
		}
		ok, err = kept.Update(seq, rows)
		rows.Close() // before the count, on the same connection
		if err != nil || !ok {
			return err
		}
		if kept.Recounts() {
			var n, dur, mibps int64
			if err := tx.QueryRow(ctx, `SELECT count(*), count(duration_s), count(logical_mibps) FROM restore`).Scan(&n, &dur, &mibps); err != nil {
				return err
			}
			kept.SetTotals(n, dur, mibps)
		}
		h = kept
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: load order heads: %w", err)
	}
	if h == nil { // no typed nil in the interface
		return nil, nil
	}
	return h, nil
}

// SaveAggregate keeps a, replacing the value kept under its name.
func (db *DB) SaveAggregate(ctx context.Context, a store.Aggregate) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO aggregate_snapshot (name, version, took_ms, saved_at, body) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (name) DO UPDATE SET version = excluded.version, took_ms = excluded.took_ms,
			saved_at = excluded.saved_at, body = excluded.body`,
		a.Name, a.Version, a.Took.Milliseconds(), db.now().UnixMilli(), a.Body)
	if err != nil {
		return fmt.Errorf("store: save aggregate %s: %w", a.Name, err)
	}
	return nil
}

// Aggregates returns every aggregate kept.
func (db *DB) Aggregates(ctx context.Context) ([]store.Aggregate, error) {
	rows, err := db.pool.Query(ctx, `SELECT name, version, took_ms, body FROM aggregate_snapshot ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("store: aggregates: %w", err)
	}
	var out []store.Aggregate
	var a store.Aggregate
	var ms int64
	if _, err := pgx.ForEachRow(rows, []any{&a.Name, &a.Version, &ms, &a.Body}, func() error {
		a.Took = time.Duration(ms) * time.Millisecond
		out = append(out, a)
		a.Body = nil
		return nil
	}); err != nil {
		return nil, fmt.Errorf("store: aggregates: %w", err)
	}
	return out, nil
}
