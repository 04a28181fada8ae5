package sqlite

// A restore's evidence: the raw facts it was derived from.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/derive"
	"github.com/restorewatch/restorewatch/store/row"
)

// GetRestoreDetail returns one restore with its evidence.
func (db *DB) GetRestoreDetail(ctx context.Context, id int64) (*store.RestoreDetail, error) {
	r, err := db.GetRestore(ctx, id)
	if err != nil {
		return nil, err
	}
	d := &store.RestoreDetail{Restore: *r}
	var started, finished, rdate, hid, lid, mid sql.NullInt64
	if err := db.read.QueryRowContext(ctx, `SELECT started_local, finished_local, restore_date_local, history_id, log_id,
		extra_log_id FROM restore WHERE id = ?`, id).Scan(&started, &finished, &rdate, &hid, &lid, &mid); err != nil {
		return nil, fmt.Errorf("store: restore detail: %w", err)
	}
	d.StartedLocal, d.FinishedLocal, d.RestoreDateLocal = nTime(started), nTime(finished), nTime(rdate)
	if hid.Valid {
		var h store.HistoryFact
		var at int64
		var raw string
		if err := db.read.QueryRowContext(ctx, `SELECT restore_history_id, restore_local, facts, origin
			FROM history_row WHERE id = ?`, hid.Int64).Scan(&h.RestoreHistoryID, &at, &raw, &h.Origin); err != nil {
			return nil, fmt.Errorf("store: restore detail: %w", err)
		}
		if h.RestoreHistoryID < 0 {
			h.RestoreHistoryID = 0 // historyKey's synthetic id: the source gave none
		}
		var f derive.HistoryFacts
		if err := row.DecodeHistoryFacts(&f, raw); err != nil {
			return nil, fmt.Errorf("store: restore detail: history row %d: %w", hid.Int64, err)
		}
		h.UserName, h.RestoreType, h.BackupType, h.SourceMachine = f.User, f.RestoreType, f.BackupType, f.SourceMachine
		h.FirstLSN, h.LastLSN, h.KeyAlgorithm, h.Source = f.FirstLSN, f.LastLSN, f.KeyAlgorithm, string(f.Source)
		h.RestoreDate, h.BackupStart, h.BackupFinish = store.UnixMs(at), nTime(f.BackupStart), nTime(f.BackupFinish)
		d.History = &h
	}
	for _, l := range []sql.NullInt64{lid, mid} {
		if !l.Valid {
			continue
		}
		f, err := db.logFact(ctx, l.Int64)
		if err != nil {
			return nil, err
		}
		d.Logs = append(d.Logs, f)
	}
	return d, nil
}

func (db *DB) logFact(ctx context.Context, id int64) (store.LogFact, error) {
	var f store.LogFact
	var completed, off, pages sql.NullInt64
	var secs, mbps, upper sql.NullFloat64
	var buffer, phases, recovery sql.NullString
	err := db.read.QueryRowContext(ctx, `SELECT source, origin, COALESCE(statement,''), COALESCE(device_type,''), message_id,
		completed_local, utc_offset, has_3014, pages, seconds, mbps, upper_bound_s, buffer, phases, recovery
		FROM log_restore WHERE id = ?`, id).Scan(&f.Source, &f.Origin, &f.Statement, &f.DeviceType, &f.MessageID,
		&completed, &off, &f.Has3014, &pages, &secs, &mbps, &upper, &buffer, &phases, &recovery)
	if err != nil {
		return f, fmt.Errorf("store: restore detail: %w", err)
	}
	f.Completed, f.UTCOffset, f.Pages = nTime(completed), nInt(off), nInt(pages)
	f.Seconds, f.MBps, f.UpperBoundS = nFloat(secs), nFloat(mbps), nFloat(upper)
	if buffer.Valid {
		f.Buffer = &store.BufferConfig{}
		_ = json.Unmarshal([]byte(buffer.String), f.Buffer)
	}
	if phases.Valid {
		_ = json.Unmarshal([]byte(phases.String), &f.Phases)
	}
	if recovery.Valid {
		f.Recovery = &store.RecoveryTiming{}
		_ = json.Unmarshal([]byte(recovery.String), f.Recovery)
	}
	return f, nil
}
