package mssql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// errStop, returned by an each callback, ends the rows early without error.
var errStop = errors.New("stop")

// each runs the named query with args and calls fn for every row. A server
// error becomes a classified *Error; a row fn cannot read is a KindServer
// error of this query (the server's columns are not what the .sql file
// promises), which degrades the source instead of ending the pass.
func (s *Session) each(ctx context.Context, source, name string, args []any, fn func(*sql.Rows) error) error {
	rows, err := s.db.QueryContext(ctx, query(name, s.Major), args...)
	if err != nil {
		return classify(source, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			if err == errStop {
				return nil
			}
			if e, ok := err.(*Error); ok {
				return e
			}
			if ctx.Err() != nil {
				return classify(source, ctx.Err())
			}
			return &Error{Source: source, Kind: KindServer, Msg: fmt.Sprintf("reading %s: %v", name, err)}
		}
	}
	if err := rows.Err(); err != nil {
		return classify(source, err)
	}
	return nil
}

// wall returns t's wall-clock reading in a UTC-located time, the warehouse's
// convention for an instance's local time (see store/record.go).
func wall(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// offsetMinutes returns t's UTC offset in minutes.
func offsetMinutes(t time.Time) int {
	_, off := t.Zone()
	return off / 60
}

func ptrInt(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	x := v.Int64
	return &x
}

func ptrBool(v sql.NullBool) *bool {
	if !v.Valid {
		return nil
	}
	x := v.Bool
	return &x
}

func ptrTime(v sql.NullTime) *time.Time {
	if !v.Valid {
		return nil
	}
	x := wall(v.Time)
	return &x
}

// decimalText returns a numeric column (go-mssqldb hands DECIMAL over as
// text) as canonical digits, "" for NULL.
func decimalText(v sql.NullString) string {
	if !v.Valid {
		return ""
	}
	s := strings.TrimSpace(v.String)
	if i := strings.IndexByte(s, '.'); i >= 0 && strings.Trim(s[i+1:], "0") == "" {
		s = s[:i]
	}
	s = strings.TrimLeft(s, "0")
	if s == "" {
		return "0"
	}
	return s
}

// decimalInt returns a numeric(20,0) byte count as an int64; nil for NULL or
// a value beyond int64 (9.2 EB: not a backup).
func decimalInt(v sql.NullString) *int64 {
	s := decimalText(v)
	if s == "" {
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

// anyInt reads an integer from a column whose exact type varies between
// builds (DBCC output, sql_variant conversions).
func anyInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case int16:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint8:
		return int64(x), true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case float64:
		return int64(x), true
	case []byte:
		n, err := strconv.ParseInt(strings.TrimSpace(string(x)), 10, 64)
		return n, err == nil
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return n, err == nil
	}
	return 0, false
}
