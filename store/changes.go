package store

import (
	"context"
	"database/sql"
)

// recordRestoreChanges records, inside the reconciliation transaction tx,
// which restores it changed: the natural keys of the rows it inserted or
// updated and the ids of the rows it deleted. The dashboard's fleet-wide
// orders read these to update themselves instead of rebuilding.
//
// Placeholder: the change feed is being built (issue 16).
func recordRestoreChanges(ctx context.Context, tx *sql.Tx, upserted, deleted []int64) error {
	return nil
}
