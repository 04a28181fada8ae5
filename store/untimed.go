package store

import (
	"context"
	"fmt"
	"strings"
)

// Untimed is a count of log records that reconciliation kept but could place
// nowhere in time, from one source: they are stored, not restores, until an
// import dates them.
type Untimed struct {
	Source    Source `json:"source"`
	Records   int64  `json:"records"`
	Instances int64  `json:"instances"`
}

// Remedy says how to date the records, in the words of the import command.
func (u Untimed) Remedy() string {
	switch u.Source {
	case SourceDbatools:
		return "import the instance's restore history (Get-DbaDbRestoreHistory | Export-Csv, or the history export), which places each Restore-DbaDatabase row"
	case SourceMessages:
		return "re-import the client output with --at (the time the statements completed)"
	}
	return "import a source that states when the restores completed (the error log or the restore history)"
}

// Untimed returns, per source, the log records kept without a restore
// because nothing dates them, over every reconciled instance.
func (db *DB) Untimed(ctx context.Context) ([]Untimed, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT source, SUM(records), COUNT(*) FROM untimed_record
		GROUP BY source ORDER BY source`)
	if err != nil {
		return nil, fmt.Errorf("store: untimed: %w", err)
	}
	defer rows.Close()
	var out []Untimed
	for rows.Next() {
		var u Untimed
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
