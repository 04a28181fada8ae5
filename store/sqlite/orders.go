package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/restorewatch/restorewatch/store/orders"
)

// RestoreOrders is the fleet's orders (store/orders), as this warehouse
// builds and updates them.
type RestoreOrders = orders.Orders

// RestoreOrders reads the fleet's orders: one pass over restore_scan, which
// covers their columns (the planner picks it for a whole-table read; "+id"
// keeps the rowid range from steering it to the table).
func (db *DB) RestoreOrders(ctx context.Context) (*RestoreOrders, error) {
	// The log's position is read with MAX(id), before the scan: whatever
	// the scan sees beyond it comes again in the next update.
	var maxID, seq int64
	if err := db.read.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0),
		COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'restore_change'), 0) FROM restore`).Scan(&maxID, &seq); err != nil {
		return nil, fmt.Errorf("store: restore orders: %w", err)
	}
	var o *RestoreOrders
	err := db.bulkRead(ctx, 8192, func(c *sql.Conn) error {
		rows, err := c.QueryContext(ctx, `SELECT id, `+orders.Columns+` FROM restore WHERE +id <= ?`, maxID)
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
