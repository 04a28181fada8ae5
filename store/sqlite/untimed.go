package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/restorewatch/restorewatch/store"
)

// Untimed returns, per source, the log records kept without a restore
// because nothing dates them, over every reconciled instance.
func (db *DB) Untimed(ctx context.Context) ([]store.Untimed, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT source, SUM(records), COUNT(*) FROM untimed_record
		GROUP BY source ORDER BY source`)
	if err != nil {
		return nil, fmt.Errorf("store: untimed: %w", err)
	}
	defer rows.Close()
	var out []store.Untimed
	for rows.Next() {
		var u store.Untimed
		if err := rows.Scan(&u.Source, &u.Records, &u.Instances); err != nil {
			return nil, fmt.Errorf("store: untimed: %w", err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: untimed: %w", err)
	}
	return out, nil
}

// UntimedIn returns how many log records of the given instances are kept
// without a restore because nothing dates them.
func (db *DB) UntimedIn(ctx context.Context, instanceIDs []int64) (int64, error) {
	if len(instanceIDs) == 0 {
		return 0, nil
	}
	var n int64
	for ids := instanceIDs; len(ids) > 0; {
		chunk := ids[:min(len(ids), 500)]
		ids = ids[len(chunk):]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		var k int64
		q := `SELECT COALESCE(SUM(records), 0) FROM untimed_record WHERE instance_id IN (?` +
			strings.Repeat(",?", len(chunk)-1) + `)`
		if err := db.read.QueryRowContext(ctx, q, args...).Scan(&k); err != nil {
			return 0, fmt.Errorf("store: untimed: %w", err)
		}
		n += k
	}
	return n, nil
}
