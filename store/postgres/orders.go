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
		var pruned, seq, changes int64
		var marker bool
		if err := tx.QueryRow(ctx, `SELECT COALESCE((SELECT value::bigint FROM setting WHERE key = $1), 0), `+logSeq+`,
			EXISTS (SELECT 1 FROM restore_change WHERE seq > $2 AND natural_key IS NULL AND restore_id IS NULL),
			(SELECT count(*) FROM restore_change WHERE seq > $2)`, prunedKey, old.OrdersSeq()).
			Scan(&pruned, &seq, &marker, &changes); err != nil {
			return err
		}
		switch {
		case seq == old.OrdersSeq():
			o = old
			return nil
		case pruned > old.OrdersSeq() || marker || orders.Rebuilds(old, changes):
			return nil
		}
		rows, err := tx.Query(ctx, `SELECT r.id, `+orders.ColumnsOf("r")+`
			FROM restore_change c JOIN restore r ON r.natural_key = c.natural_key
			WHERE c.seq > $1 AND c.natural_key IS NOT NULL
			UNION ALL
			SELECT c.restore_id, `+orders.ColumnsOf("r")+`
			FROM restore_change c LEFT JOIN restore r ON r.id = c.restore_id
			WHERE c.seq > $1 AND c.restore_id IS NOT NULL`, old.OrdersSeq())
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
// each, the header last, so a save cut short leaves the previous snapshot
// the newest complete one.
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
		if _, err := tx.Exec(ctx, `INSERT INTO order_snapshot (gen, part, body) VALUES ($1, 0, $2)`, gen, header); err != nil {
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
		var gen, at int64
		var header []byte
		err := tx.QueryRow(ctx, `SELECT gen, body, `+logSeq+` FROM order_snapshot WHERE part = 0 ORDER BY gen DESC LIMIT 1`).
			Scan(&gen, &header, &at)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		seq, parts, ok := orders.ReadHeader(header)
		if !ok || seq > at {
			return nil
		}
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
