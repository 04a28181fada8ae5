package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/finding"
)

// The alerts saveRegressions queues (store/finding says them): a
// regression confirmed (a new row) and one resolved, in the transaction
// that saves them.

// enqueueRegressionConfirmed queues the alert of regression id, just
// inserted for r on instanceID.
func enqueueRegressionConfirmed(ctx context.Context, tx *sql.Tx, instanceID, id int64, r *store.Regression) error {
	inst, err := instanceNameTx(ctx, tx, instanceID)
	if err != nil {
		return err
	}
	return enqueueAlert(ctx, tx, finding.RegressionConfirmed(inst, id, r))
}

// enqueueRegressionResolved queues the alert of regression id, which the
// analysis no longer finds.
func enqueueRegressionResolved(ctx context.Context, tx *sql.Tx, id int64, now time.Time) error {
	r := finding.Resolved{ID: id}
	if err := tx.QueryRowContext(ctx, `SELECT i.name, r.database_name, r.kind, r.direction, r.changed_at, r.ratio
		FROM regression r JOIN instance i ON i.id = r.instance_id WHERE r.id = ?`, id).
		Scan(&r.Instance, &r.Database, &r.Kind, &r.Dir, &r.ChangedMs, &r.Ratio); err != nil {
		return fmt.Errorf("store: resolved regression %d: %w", id, err)
	}
	err := tx.QueryRowContext(ctx, `SELECT key, severity FROM alert_event WHERE kind = ? AND instance = ? AND database_name = ?
		AND json_extract(body, '$.fields.regression_id') = ? ORDER BY id DESC LIMIT 1`,
		store.AlertRegressionConfirmed, r.Instance, r.Database, strconv.FormatInt(id, 10)).Scan(&r.ConfirmedKey, &r.ConfirmedSeverity)
	if err != nil && err != sql.ErrNoRows {
		return fmt.Errorf("store: resolved regression %d: %w", id, err)
	}
	return enqueueAlert(ctx, tx, finding.RegressionResolved(r, now))
}

func instanceNameTx(ctx context.Context, tx *sql.Tx, id int64) (string, error) {
	var name string
	if err := tx.QueryRowContext(ctx, `SELECT name FROM instance WHERE id = ?`, id).Scan(&name); err != nil {
		return "", fmt.Errorf("store: instance %d: %w", id, err)
	}
	return name, nil
}
