package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/restorewatch/restorewatch/store"
)

// GetRestoreDetail returns a restore with the raw facts it was derived
// from, as the restore page shows them.
func (db *DB) GetRestoreDetail(ctx context.Context, id int64) (*store.RestoreDetail, error) {
	r, err := db.GetRestore(ctx, id)
	if err != nil {
		return nil, err
	}
	d := &store.RestoreDetail{Restore: *r}
	var started, finished, rdate, hid, lid, mid *int64
	if err := db.pool.QueryRow(ctx, `SELECT started_local, finished_local, restore_date_local, history_id, log_id,
		extra_log_id FROM restore WHERE id = $1`, id).Scan(&started, &finished, &rdate, &hid, &lid, &mid); err != nil {
		return nil, fmt.Errorf("store: restore detail: %w", err)
	}
	d.StartedLocal, d.FinishedLocal, d.RestoreDateLocal = msTime(started), msTime(finished), msTime(rdate)
	if hid != nil {
		var h store.HistoryFact
		var at int64
		var raw string
		if err := db.pool.QueryRow(ctx, `SELECT restore_history_id, restore_local, facts, origin
			FROM history_row WHERE id = $1`, *hid).Scan(&h.RestoreHistoryID, &at, &raw, &h.Origin); err != nil {
			return nil, fmt.Errorf("store: restore detail: %w", err)
		}
		if h.RestoreHistoryID < 0 {
			h.RestoreHistoryID = 0 // a synthetic id: the source gave none
		}
		f, err := historyFacts(raw)
		if err != nil {
			return nil, fmt.Errorf("store: restore detail: history row %d: %w", *hid, err)
		}
		h.UserName, h.RestoreType, h.BackupType, h.SourceMachine = f.str(1), f.str(2), f.str(12), f.str(10)
		h.FirstLSN, h.LastLSN, h.KeyAlgorithm, h.Source = f.str(15), f.str(16), f.str(24), f.str(29)
		h.RestoreDate, h.BackupStart, h.BackupFinish = store.UnixMs(at), msTime(f.int(13)), msTime(f.int(14))
		d.History = &h
	}
	for _, l := range []*int64{lid, mid} {
		if l == nil {
			continue
		}
		f, err := db.logFact(ctx, *l)
		if err != nil {
			return nil, err
		}
		d.Logs = append(d.Logs, f)
	}
	return d, nil
}

// facts is a history row's facts array (the positions store/sqlite's
// histfacts.go documents), read only for the restore page here.
type facts []json.RawMessage

func historyFacts(raw string) (facts, error) {
	var f facts
	err := json.Unmarshal([]byte(raw), &f)
	return f, err
}

func (f facts) str(i int) string {
	var s string
	if i < len(f) {
		_ = json.Unmarshal(f[i], &s)
	}
	return s
}

func (f facts) int(i int) *int64 {
	if i >= len(f) {
		return nil
	}
	v, err := strconv.ParseInt(string(f[i]), 10, 64)
	if err != nil {
		return nil
	}
	return &v
}

func (db *DB) logFact(ctx context.Context, id int64) (store.LogFact, error) {
	var f store.LogFact
	var completed, off, pages *int64
	var has3014 int64
	var buffer, phases, recovery *string
	err := db.pool.QueryRow(ctx, `SELECT source, origin, COALESCE(statement,''), COALESCE(device_type,''), message_id,
		completed_local, utc_offset, has_3014, pages, seconds, mbps, upper_bound_s, buffer, phases, recovery
		FROM log_restore WHERE id = $1`, id).Scan(&f.Source, &f.Origin, &f.Statement, &f.DeviceType, &f.MessageID,
		&completed, &off, &has3014, &pages, &f.Seconds, &f.MBps, &f.UpperBoundS, &buffer, &phases, &recovery)
	if err != nil {
		return f, fmt.Errorf("store: restore detail: %w", err)
	}
	f.Completed, f.UTCOffset, f.Pages, f.Has3014 = msTime(completed), off, pages, has3014 != 0
	if buffer != nil {
		f.Buffer = &store.BufferConfig{}
		_ = json.Unmarshal([]byte(*buffer), f.Buffer)
	}
	if phases != nil {
		_ = json.Unmarshal([]byte(*phases), &f.Phases)
	}
	if recovery != nil {
		f.Recovery = &store.RecoveryTiming{}
		_ = json.Unmarshal([]byte(*recovery), f.Recovery)
	}
	return f, nil
}
