package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Tables lists the warehouse's tables in the order they were created
// (parents before the tables that reference them), leaving out SQLite's
// own and the migrations' record: what moving the warehouse to another
// engine copies (restorewatch migrate).
func (db *DB) Tables(ctx context.Context) ([]string, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'
		AND name NOT LIKE 'sqlite\_%' ESCAPE '\' AND name <> 'schema_migration' ORDER BY rowid`)
	if err != nil {
		return nil, fmt.Errorf("store: tables: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("store: tables: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// FactMonths lists the months (YYYYMM, UTC as the local times are stored)
// that the warehouse's history rows and dated log restores fall in, for a
// copy to PostgreSQL to make their partitions before it copies them
// (postgres.DB.Load). A month it gets wrong at an edge costs that copy a
// move, not a row.
func (db *DB) FactMonths(ctx context.Context) ([]int32, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT DISTINCT CAST(strftime('%Y%m', restore_local / 1000, 'unixepoch') AS INTEGER) FROM history_row
		UNION SELECT DISTINCT CAST(strftime('%Y%m', completed_local / 1000, 'unixepoch') AS INTEGER) FROM log_restore WHERE completed_local IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("store: months of the facts: %w", err)
	}
	defer rows.Close()
	var out []int32
	for rows.Next() {
		var m sql.NullInt32
		if err := rows.Scan(&m); err != nil {
			return nil, fmt.Errorf("store: months of the facts: %w", err)
		}
		if m.Valid {
			out = append(out, m.Int32)
		}
	}
	return out, rows.Err()
}

// TableRows streams one table's rows as stored, every column: Next, Values
// and Err are the shape pgx's CopyFrom reads. Close it when done.
type TableRows struct {
	Table   string
	Columns []string
	rows    *sql.Rows
	vals    []any
	err     error
}

// ReadTable streams every row of table (a name Tables returned). Each
// table is its own read: a copy of the whole warehouse wants no writer
// running (restorewatch migrate says so).
func (db *DB) ReadTable(ctx context.Context, table string) (*TableRows, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT * FROM "`+strings.ReplaceAll(table, `"`, `""`)+`"`)
	if err != nil {
		return nil, fmt.Errorf("store: read %s: %w", table, err)
	}
	cols, err := rows.Columns()
	if err != nil {
		rows.Close()
		return nil, fmt.Errorf("store: read %s: %w", table, err)
	}
	return &TableRows{Table: table, Columns: cols, rows: rows}, nil
}

// Next advances to the next row.
func (t *TableRows) Next() bool {
	if t.err != nil || !t.rows.Next() {
		return false
	}
	vals := make([]any, len(t.Columns))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := t.rows.Scan(ptrs...); err != nil {
		t.err = err
		return false
	}
	t.vals = vals
	return true
}

// Values returns the current row: int64, float64, string, []byte or nil.
func (t *TableRows) Values() ([]any, error) { return t.vals, t.err }

// Err returns the error that ended the rows, if any.
func (t *TableRows) Err() error {
	if t.err != nil {
		return t.err
	}
	return t.rows.Err()
}

// Close releases the read.
func (t *TableRows) Close() error { return t.rows.Close() }

// CountRows counts the rows of table.
func (db *DB) CountRows(ctx context.Context, table string) (int64, error) {
	var n int64
	err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM "`+strings.ReplaceAll(table, `"`, `""`)+`"`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count %s: %w", table, err)
	}
	return n, nil
}
