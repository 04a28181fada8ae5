package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/derive"
)

// Pending reads the marks without changing anything.
func (db *DB) Pending(ctx context.Context) (store.PendingWork, error) {
	var p store.PendingWork
	var instances int
	var version, dropped sql.NullString
	err := db.write.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM instance),
		(SELECT count(*) FROM instance WHERE dirty > 0),
		(SELECT count(*) FROM instance WHERE analysis_pending > 0),
		(SELECT value FROM setting WHERE key = 'derivation_version'),
		(SELECT value FROM setting WHERE key = ?)`, droppedKey).
		Scan(&instances, &p.Derive, &p.Analyse, &version, &dropped)
	if err != nil {
		return p, fmt.Errorf("store: pending work: %w", err)
	}
	p.Derivation = instances > 0 && version.String != derive.Version
	if dropped.Valid {
		var m map[string]string
		if err := json.Unmarshal([]byte(dropped.String), &m); err != nil || len(m) == 0 {
			p.Indexes = 1 // unreadable: Reconcile reports it
		} else {
			p.Indexes = len(m)
		}
	}
	return p, nil
}

// CompletePending finishes what an interrupted import, derivation or
// analysis left: it derives the restores of dirty instances, builds again
// the indexes a bulk derivation dropped (Reconcile does both), then hands
// the instances whose analysis is pending to analyse, which is expected to
// store their findings with SaveFindings (store/analysis.Run does): that
// clears the marks. store cannot call the analysis itself, which imports
// store. It returns what was pending; nothing is done when nothing was.
func (db *DB) CompletePending(ctx context.Context, analyse func(ctx context.Context, ids []int64) error) (store.PendingWork, error) {
	p, err := db.Pending(ctx)
	if err != nil || !p.Any() {
		return p, err
	}
	if p.Derive > 0 || p.Indexes > 0 || p.Derivation {
		if err := db.Reconcile(ctx); err != nil {
			return p, err
		}
	}
	ids, err := db.pendingAnalysis(ctx)
	if err != nil {
		return p, err
	}
	if len(ids) > 0 && analyse != nil {
		if err := analyse(ctx, ids); err != nil {
			return p, fmt.Errorf("store: complete pending analysis: %w", err)
		}
	}
	return p, nil
}

// pendingAnalysis lists the instances whose analysis is pending.
func (db *DB) pendingAnalysis(ctx context.Context) ([]int64, error) {
	rows, err := db.write.QueryContext(ctx, `SELECT id FROM instance WHERE analysis_pending > 0 ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: pending analysis: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: pending analysis: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// AnalysisPending returns the analysis_pending mark of every instance that
// has one: an analysis reads it before it loads the restores, and hands it
// back to SaveFindings.
func (db *DB) AnalysisPending(ctx context.Context) (map[int64]int64, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, analysis_pending FROM instance WHERE analysis_pending > 0`)
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
