package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// SaveAggregate keeps a, replacing the value kept under its name.
func (db *DB) SaveAggregate(ctx context.Context, a store.Aggregate) error {
	_, err := db.write.ExecContext(ctx, `INSERT INTO aggregate_snapshot (name, version, took_ms, saved_at, body) VALUES (?, ?, ?, ?, ?)
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
	rows, err := db.read.QueryContext(ctx, `SELECT name, version, took_ms, body FROM aggregate_snapshot ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("store: aggregates: %w", err)
	}
	defer rows.Close()
	var out []store.Aggregate
	for rows.Next() {
		var a store.Aggregate
		var ms int64
		if err := rows.Scan(&a.Name, &a.Version, &ms, &a.Body); err != nil {
			return nil, fmt.Errorf("store: aggregates: %w", err)
		}
		a.Took = time.Duration(ms) * time.Millisecond
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: aggregates: %w", err)
	}
	return out, nil
}
