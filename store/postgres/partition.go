package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/restorewatch/restorewatch/store/derive"
)

// Monthly partitions (migration 0035): restore, log_restore and history_row
// are partitioned by part_month, the YYYYMM month of a time that never
// moves for a row (the migration says which). Each month has a partition of
// each table, named <table>_pYYYYMM; a DEFAULT partition takes the rest.

// monthOf is the YYYYMM month of ms (Unix ms, a local wall time taken as
// if UTC), as SQL's rw_month.
func monthOf(ms int64) int32 {
	t := time.UnixMilli(ms).UTC()
	return int32(t.Year()*100 + int(t.Month()))
}

// monthOfNull is monthOf, 0 for an absent time (an undated log line).
func monthOfNull(ms *int64) int32 {
	if ms == nil {
		return 0
	}
	return monthOf(*ms)
}

// restoreMonth is a derived restore's part_month: that of the fact its
// natural key names, so it never changes for the key.
func restoreMonth(d *derive.Derived) int32 {
	if d.History != nil {
		return monthOf(d.History.RestoreLocal)
	}
	if d.Log != nil {
		return nullMonth(d.Log.Completed)
	}
	return 0
}

func nullMonth(v sql.NullInt64) int32 {
	if !v.Valid {
		return 0
	}
	return monthOf(v.Int64)
}

// nextMonth is the YYYYMM month after m.
func nextMonth(m int32) int32 {
	if m%100 == 12 {
		return m - 11 + 100
	}
	return m + 1
}

// monthStart is the first instant of month m, in Unix ms.
func monthStart(m int32) int64 {
	return time.Date(int(m/100), time.Month(m%100), 1, 0, 0, 0, 0, time.UTC).UnixMilli()
}

// EnsureMonths creates the partitions of now's month and the next, where
// missing (rw_add_month: idempotent, replicas take turns on its lock, and
// rows of the month already in DEFAULT move in). Open runs it, and so does
// Prune: a server running for months still gets each month's partitions
// before its rows arrive, and rows that arrive first wait in DEFAULT.
func (db *DB) EnsureMonths(ctx context.Context, now time.Time) error {
	m := monthOf(now.UnixMilli())
	for _, month := range []int32{m, nextMonth(m)} {
		if _, err := db.pool.Exec(ctx, `SELECT rw_add_month($1)`, month); err != nil {
			return fmt.Errorf("store: partitions of %d: %w", month, err)
		}
	}
	return nil
}

// monthsSQL lists the months of restore's partitions (the three tables'
// are made and dropped together).
const monthsSQL = `SELECT substr(c.relname, length('restore_p') + 1)::int AS m
	FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
	WHERE i.inhparent = 'restore'::regclass AND c.relname ~ '^restore_p[0-9]{6}$' ORDER BY m`
