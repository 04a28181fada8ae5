package sqlite

// The fleet's orders kept in the warehouse between runs of the server
// (migration 0030): building them reads every restore, loading them reads
// a few hundred MiB of blobs.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/orders"
)

// snapshotTxParts is how many parts one transaction of a save writes.
const snapshotTxParts = 4

// SaveOrders keeps o in the warehouse for the next start of the server
// (LoadOrders), replacing the snapshot saved before. o is only read. Its
// parts are written in transactions of a few parts each, the header last
// with the orders' heads (LoadOrderHeads), so an import waits for one of
// them at most, and a save cut short leaves the previous snapshot the
// newest complete one.
func (db *DB) SaveOrders(ctx context.Context, fo store.FleetOrders) error {
	o, ok := fo.(*RestoreOrders)
	if !ok {
		return fmt.Errorf("store: save orders: %T is not this warehouse's orders", fo)
	}
	var gen int64
	if err := db.write.QueryRowContext(ctx, `SELECT COALESCE(MAX(gen), 0) + 1 FROM order_snapshot`).Scan(&gen); err != nil {
		return fmt.Errorf("store: save orders: %w", err)
	}
	// Parts of a save that never finished (no header) go first.
	if _, err := db.write.ExecContext(ctx, `DELETE FROM order_snapshot WHERE gen NOT IN (SELECT gen FROM order_snapshot WHERE part = 0)`); err != nil {
		return fmt.Errorf("store: save orders: %w", err)
	}
	header, err := orders.SaveParts(o, snapshotTxParts, func(first int, parts [][]byte) error {
		tx, err := db.write.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		for i, b := range parts {
			if _, err := tx.ExecContext(ctx, `INSERT INTO order_snapshot (gen, part, body) VALUES (?, ?, ?)`, gen, first+i, b); err != nil {
				return err
			}
		}
		return tx.Commit()
	})
	if err != nil {
		return fmt.Errorf("store: save orders: %w", err)
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: save orders: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO order_snapshot (gen, part, body) VALUES (?, -1, ?), (?, 0, ?)`,
		gen, orders.HeadsOf(o).Encode(), gen, header); err != nil {
		return fmt.Errorf("store: save orders: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM order_snapshot WHERE gen < ?`, gen); err != nil {
		return fmt.Errorf("store: save orders: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: save orders: %w", err)
	}
	return nil
}

// LoadOrders reads the newest complete snapshot SaveOrders wrote, or nil
// when there is none, or none this binary reads, or one of a position the
// change log has not reached (a warehouse put back from an older copy).
// The orders it returns are as they were saved: UpdateOrders brings them
// up to date.
func (db *DB) LoadOrders(ctx context.Context) (store.FleetOrders, error) {
	o, err := db.loadOrders(ctx)
	if o == nil { // no typed nil in the interface
		return nil, err
	}
	return o, err
}

// loadOrders is LoadOrders on the orders' own type.
func (db *DB) loadOrders(ctx context.Context) (*RestoreOrders, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("store: load orders: %w", err)
	}
	defer tx.Rollback()
	snap, ok, err := newestSnapshot(ctx, tx)
	if err != nil || !ok {
		return nil, err
	}
	seq, parts := snap.seq, snap.parts
	rows, err := tx.QueryContext(ctx, `SELECT body FROM order_snapshot WHERE gen = ? AND part > 0 ORDER BY part`, snap.gen)
	if err != nil {
		return nil, fmt.Errorf("store: load orders: %w", err)
	}
	defer rows.Close()
	// One goroutine reads the parts while this one decodes them: each is
	// about half of a load's CPU (1.1 s at 10 M restores).
	bodies, stop := make(chan []byte, 2), make(chan struct{})
	var readErr error
	go func() {
		defer close(bodies)
		for rows.Next() {
			var b []byte
			if readErr = rows.Scan(&b); readErr != nil {
				return
			}
			select {
			case bodies <- b:
			case <-stop:
				return
			}
		}
		readErr = rows.Err()
	}()
	defer func() {
		close(stop)
		for range bodies { // the reader is done with rows before they close
		}
	}()
	o, read, err := orders.Decode(func() ([]byte, error) {
		b, ok := <-bodies
		switch {
		case ok:
			return b, nil
		case readErr != nil:
			return nil, readErr
		}
		return nil, orders.ErrSnapshot
	})
	switch {
	case errors.Is(err, orders.ErrSnapshot):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("store: load orders: %w", err)
	case o.OrdersSeq() != seq || read != parts:
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
// position the change log has not reached (a warehouse put back from an
// older copy).
func newestSnapshot(ctx context.Context, tx *sql.Tx) (snapshotHeader, bool, error) {
	var h snapshotHeader
	var logSeq int64
	var header []byte
	err := tx.QueryRowContext(ctx, `SELECT gen, body, COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'restore_change'), 0)
		FROM order_snapshot WHERE part = 0 ORDER BY gen DESC LIMIT 1`).Scan(&h.gen, &header, &logSeq)
	if errors.Is(err, sql.ErrNoRows) {
		return h, false, nil
	}
	if err != nil {
		return h, false, fmt.Errorf("store: snapshot of the orders: %w", err)
	}
	var ok bool
	h.seq, h.parts, ok = orders.ReadHeader(header)
	return h, ok && h.seq <= logSeq, nil
}
