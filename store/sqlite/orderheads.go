package sqlite

// The heads of the fleet's orders (orders.Heads, store.OrderHeads) as this
// warehouse keeps them: part -1 of the orders' snapshot (SaveOrders),
// brought up to date from the change log.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/orders"
)

// LoadOrderHeads returns the heads kept with the newest complete snapshot
// of the orders (SaveOrders), brought up to date with the change log: nil
// when there are none (no snapshot, one saved before heads were kept, or
// one of a position the log has not reached) or when the log cannot say
// what changed since, or too much did (orders.HeadsMaxChanges). It reads a
// few KiB and what changed, not the orders.
func (db *DB) LoadOrderHeads(ctx context.Context) (store.OrderHeads, error) {
	h, err := db.loadOrderHeads(ctx)
	if h == nil { // no typed nil in the interface
		return nil, err
	}
	return h, err
}

// loadOrderHeads is LoadOrderHeads on the heads' own type.
func (db *DB) loadOrderHeads(ctx context.Context) (*orders.Heads, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("store: load order heads: %w", err)
	}
	defer tx.Rollback()
	snap, ok, err := newestSnapshot(ctx, tx)
	if err != nil || !ok {
		return nil, err
	}
	var body []byte
	err = tx.QueryRowContext(ctx, `SELECT body FROM order_snapshot WHERE gen = ? AND part = -1`, snap.gen).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: load order heads: %w", err)
	}
	h, err := orders.DecodeHeads(body)
	if err != nil || h.Seq() != snap.seq {
		return nil, nil
	}
	seq, changes, readable, err := changesSince(ctx, tx, h.Seq())
	switch {
	case err != nil:
		return nil, fmt.Errorf("store: load order heads: %w", err)
	case seq == h.Seq():
		return h, nil
	case !readable || changes > orders.HeadsMaxChanges:
		return nil, nil
	}
	rows, err := changedRestores(ctx, tx, h.Seq())
	if err != nil {
		return nil, fmt.Errorf("store: load order heads: %w", err)
	}
	defer rows.Close()
	ok, err = h.Update(seq, rows)
	rows.Close() // before the count, in the same transaction
	if err != nil || !ok {
		if err != nil {
			err = fmt.Errorf("store: load order heads: %w", err)
		}
		return nil, err
	}
	if h.Recounts() {
		var n, dur, mibps int64
		if err := tx.QueryRowContext(ctx, `SELECT count(*), count(duration_s), count(logical_mibps) FROM restore`).Scan(&n, &dur, &mibps); err != nil {
			return nil, fmt.Errorf("store: load order heads: %w", err)
		}
		h.SetTotals(n, dur, mibps)
	}
	return h, nil
}
