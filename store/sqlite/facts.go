package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/derive"
	"github.com/restorewatch/restorewatch/store/row"
)

// querier is what loadFacts reads through: a read-only transaction on the
// read pool, or the writer's.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// loadFacts reads an instance's raw records for derivation; def is the
// instance's default_utc_offset, which the caller has read with the rest of
// its row.
//
// from, unless it is wholeInstance, reads only the history rows and log
// restores at or after that local time and, unless to is noBound, before
// to (a window, see window.go, and the facts before it when it reaches
// further back); host snapshots are read whole, but for a read bounded by
// to, which leaves them to the read that follows it.
func loadFacts(ctx context.Context, tx querier, id int64, def sql.NullInt64, from, to int64) (*derive.Facts, error) {
	f := &derive.Facts{}
	if def.Valid {
		v := int(def.Int64)
		f.DefaultOffset = &v
	}
	// The time range of a window, on each table's own time column.
	args := []any{id}
	within := func(col string) string { return "" }
	if from != wholeInstance {
		args = append(args, from)
		within = func(col string) string { return " AND " + col + " >= ?" }
		if to != noBound {
			args = append(args, to)
			within = func(col string) string { return " AND " + col + " >= ? AND " + col + " < ?" }
		}
	}
	histQuery := `SELECT id, restore_history_id, restore_local, facts
		FROM history_row WHERE instance_id = ?` + within("restore_local") + ` ORDER BY restore_local, id`
	logQuery := `SELECT id, source, database_name, kind, message_id, completed_local, utc_offset,
		COALESCE(first_lsn,''), COALESCE(last_lsn,''), COALESCE(device_type,''), device_count, devices, has_3014, pages,
		seconds, mbps, upper_bound_s, COALESCE(buffer,'')
		FROM log_restore WHERE instance_id = ?` + within("completed_local") + ` ORDER BY completed_local, id`
	// A whole instance's history is counted first (on the UNIQUE key's
	// index) so that the slice is made once: appending thousands of
	// history facts copied each several times. A window's few days are
	// not worth the query.
	var n int
	if from == wholeInstance {
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM history_row WHERE instance_id = ?`, id).Scan(&n); err != nil {
			return nil, err
		}
	}
	f.History = make([]derive.History, 0, n)
	rows, err := tx.QueryContext(ctx, histQuery, args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var h derive.History
		var raw string
		if err := rows.Scan(&h.ID, &h.HID, &h.RestoreLocal, &raw); err != nil {
			rows.Close()
			return nil, err
		}
		if err := row.DecodeHistoryFacts(&h.HistoryFacts, raw); err != nil {
			rows.Close()
			return nil, fmt.Errorf("history row %d: %w", h.ID, err)
		}
		f.History = append(f.History, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = tx.QueryContext(ctx, logQuery, args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var l derive.Log
		var devices, buffer string
		if err := rows.Scan(&l.ID, &l.Source, &l.DB, &l.Kind, &l.MessageID, &l.Completed, &l.Offset, &l.FirstLSN,
			&l.LastLSN, &l.DeviceType, &l.DeviceCount, &devices, &l.Has3014, &l.Pages, &l.Seconds, &l.MBps, &l.UpperBound, &buffer); err != nil {
			rows.Close()
			return nil, err
		}
		l.Devices = row.DecodeStrings(devices)
		if buffer != "" {
			l.Buffer = &store.BufferConfig{}
			if json.Unmarshal([]byte(buffer), l.Buffer) != nil {
				l.Buffer = nil
			}
		}
		f.Logs = append(f.Logs, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if to != noBound {
		return f, nil
	}
	rows, err = tx.QueryContext(ctx, `SELECT observed_local, utc_offset, COALESCE(version,''), ifi, cores, memory_mb,
		trace_flags, modules FROM host_snapshot WHERE instance_id = ? ORDER BY observed_local, id`, id)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var h derive.Host
		if err := rows.Scan(&h.Observed, &h.Offset, &h.Version, &h.IFI, &h.Cores, &h.Memory, &h.TraceFlags, &h.Modules); err != nil {
			rows.Close()
			return nil, err
		}
		f.Hosts = append(f.Hosts, h)
	}
	rows.Close()
	return f, rows.Err()
}
