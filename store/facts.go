package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// facts are an instance's raw records, loaded for derivation.
type facts struct {
	defaultOffset *int
	history       []histFact
	logs          []logFact
	hosts         []hostFact
}

type histFact struct {
	id, hid int64
	restore int64
	historyFacts
}

type logFact struct {
	id                         int64
	source                     Source
	db                         string
	kind                       Kind
	msgID                      int
	completed, offset          sql.NullInt64
	firstLSN, lastLSN, devType string
	deviceCount                sql.NullInt64
	devices                    []string
	has3014                    bool
	pages                      sql.NullInt64
	seconds, mbps, upper       sql.NullFloat64
	buffer                     *BufferConfig
}

type hostFact struct {
	observed            int64
	offset              sql.NullInt64
	version             string
	ifi                 sql.NullBool
	cores, memory       sql.NullInt64
	traceFlags, modules string
}

// querier is what loadFacts reads through: a read-only transaction on the
// read pool, or the writer's.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func loadFacts(ctx context.Context, tx querier, id int64) (*facts, error) {
	f := &facts{}
	var def sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT default_utc_offset FROM instance WHERE id = ?`, id).Scan(&def); err != nil {
		return nil, err
	}
	if def.Valid {
		v := int(def.Int64)
		f.defaultOffset = &v
	}
	// Counted first (on the UNIQUE key's index) so that the slice is made
	// once: appending thousands of history facts copied each several times.
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM history_row WHERE instance_id = ?`, id).Scan(&n); err != nil {
		return nil, err
	}
	f.history = make([]histFact, 0, n)
	rows, err := tx.QueryContext(ctx, `SELECT id, restore_history_id, restore_local, facts
		FROM history_row WHERE instance_id = ? ORDER BY restore_local, id`, id)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var h histFact
		var raw string
		if err := rows.Scan(&h.id, &h.hid, &h.restore, &raw); err != nil {
			rows.Close()
			return nil, err
		}
		if err := h.decode(raw); err != nil {
			rows.Close()
			return nil, fmt.Errorf("history row %d: %w", h.id, err)
		}
		f.history = append(f.history, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = tx.QueryContext(ctx, `SELECT id, source, database_name, kind, message_id, completed_local, utc_offset,
		COALESCE(first_lsn,''), COALESCE(last_lsn,''), COALESCE(device_type,''), device_count, devices, has_3014, pages,
		seconds, mbps, upper_bound_s, COALESCE(buffer,'')
		FROM log_restore WHERE instance_id = ? ORDER BY completed_local, id`, id)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var l logFact
		var devices, buffer string
		if err := rows.Scan(&l.id, &l.source, &l.db, &l.kind, &l.msgID, &l.completed, &l.offset, &l.firstLSN,
			&l.lastLSN, &l.devType, &l.deviceCount, &devices, &l.has3014, &l.pages, &l.seconds, &l.mbps, &l.upper, &buffer); err != nil {
			rows.Close()
			return nil, err
		}
		_ = json.Unmarshal([]byte(devices), &l.devices)
		if buffer != "" {
			l.buffer = &BufferConfig{}
			if json.Unmarshal([]byte(buffer), l.buffer) != nil {
				l.buffer = nil
			}
		}
		f.logs = append(f.logs, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = tx.QueryContext(ctx, `SELECT observed_local, utc_offset, COALESCE(version,''), ifi, cores, memory_mb,
		trace_flags, modules FROM host_snapshot WHERE instance_id = ? ORDER BY observed_local, id`, id)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var h hostFact
		if err := rows.Scan(&h.observed, &h.offset, &h.version, &h.ifi, &h.cores, &h.memory, &h.traceFlags, &h.modules); err != nil {
			rows.Close()
			return nil, err
		}
		f.hosts = append(f.hosts, h)
	}
	rows.Close()
	return f, rows.Err()
}
