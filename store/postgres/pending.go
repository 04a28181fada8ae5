package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/derive"
)

// Pending reads the marks an interrupted run leaves (store/pending.go):
// instances to derive and to analyse, and whether the restores were derived
// by another derivation version. PostgreSQL drops no indexes for a bulk
// derivation: Indexes stays zero.
func (db *DB) Pending(ctx context.Context) (store.PendingWork, error) {
	var p store.PendingWork
	var instances int
	var version *string
	err := db.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM instance),
		(SELECT count(*) FROM instance WHERE dirty > 0),
		(SELECT count(*) FROM instance WHERE analysis_pending > 0),
		(SELECT value FROM setting WHERE key = 'derivation_version')`).Scan(&instances, &p.Derive, &p.Analyse, &version)
	if err != nil {
		return p, fmt.Errorf("store: pending work: %w", err)
	}
	p.Derivation = instances > 0 && (version == nil || *version != derive.Version)
	return p, nil
}

// CompletePending finishes what an interrupted run left: the derivation of
// dirty instances (and all of them after a new derivation version), then
// the analysis of the instances whose analysis is pending, handed to
// analyse.
func (db *DB) CompletePending(ctx context.Context, analyse func(ctx context.Context, ids []int64) error) (store.PendingWork, error) {
	p, err := db.Pending(ctx)
	if err != nil || !p.Any() {
		return p, err
	}
	if p.Derive > 0 || p.Derivation {
		if err := db.Reconcile(ctx); err != nil {
			return p, err
		}
	}
	rows, err := db.pool.Query(ctx, `SELECT id FROM instance WHERE analysis_pending > 0 ORDER BY id`)
	if err != nil {
		return p, fmt.Errorf("store: pending analysis: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return p, fmt.Errorf("store: pending analysis: %w", err)
	}
	if len(ids) > 0 && analyse != nil {
		if err := analyse(ctx, ids); err != nil {
			return p, fmt.Errorf("store: complete pending analysis: %w", err)
		}
	}
	return p, nil
}

// AnalysisPending returns the analysis_pending mark of every instance that
// has one.
func (db *DB) AnalysisPending(ctx context.Context) (map[int64]int64, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, analysis_pending FROM instance WHERE analysis_pending > 0`)
	if err != nil {
		return nil, fmt.Errorf("store: pending analysis: %w", err)
	}
	defer rows.Close()
	marks := map[int64]int64{}
	for rows.Next() {
		var id, n int64
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("store: pending analysis: %w", err)
		}
		marks[id] = n
	}
	return marks, rows.Err()
}
