package mssql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/restorewatch/restorewatch/store"
)

// HistoryMark is the history source's watermark: the last restorehistory
// row read, with its date so that a rebuilt msdb whose new ids pass the old
// ones is still noticed.
type HistoryMark struct {
	ID   int64     `json:"id"`
	Date time.Time `json:"date"` // restore_date, local wall time
}

// HistoryResult is one pass of the history source.
type HistoryResult struct {
	Rows []store.HistoryRow
	// Mark is the watermark to store once Rows are committed.
	Mark HistoryMark
	// Rebuilt says why the stored watermark was dropped (msdb was rebuilt or
	// restored from an old backup) and history re-read from its start; "".
	Rebuilt string
	// More is set when the pass stopped at its row cap.
	More bool
}

// HistoryBatch is the TOP (@batch) of one history query.
const HistoryBatch = 5000

// History reads the restore history after mark, at most maxRows rows.
// Re-reading rows the warehouse holds is harmless: they are deduplicated by
// (instance, restore_history_id, restore_date).
func (s *Session) History(ctx context.Context, mark HistoryMark, maxRows int) (*HistoryResult, error) {
	var minID, maxID sql.NullInt64
	var wmDate sql.NullTime
	err := s.each(ctx, SourceHistory, "restore_history/check", []any{sql.Named("watermark", mark.ID)},
		func(r *sql.Rows) error { return r.Scan(&minID, &maxID, &wmDate) })
	if err != nil {
		return nil, err
	}
	res := &HistoryResult{Mark: mark}
	if mark.ID > 0 && maxID.Valid {
		switch {
		case maxID.Int64 < mark.ID:
			res.Rebuilt = fmt.Sprintf("msdb rebuilt: restorehistory's highest id is %d, below the watermark %d", maxID.Int64, mark.ID)
		case wmDate.Valid && !mark.Date.IsZero() && !wall(wmDate.Time).Equal(mark.Date):
			res.Rebuilt = fmt.Sprintf("msdb rebuilt: restorehistory row %d now has restore_date %s, not %s",
				mark.ID, wall(wmDate.Time).Format(time.DateTime), mark.Date.Format(time.DateTime))
		case !wmDate.Valid && minID.Valid && minID.Int64 <= mark.ID:
			// A purge removes the oldest rows; a row gone from the middle
			// means the table was replaced.
			res.Rebuilt = fmt.Sprintf("msdb rebuilt: restorehistory row %d vanished while older rows remain", mark.ID)
		}
		if res.Rebuilt != "" {
			res.Mark = HistoryMark{}
		}
	}
	if !maxID.Valid {
		return res, nil
	}
	for {
		batch := min(HistoryBatch, maxRows-len(res.Rows))
		if batch <= 0 {
			res.More = res.Mark.ID < maxID.Int64
			return res, nil
		}
		n := 0
		args := []any{sql.Named("watermark", res.Mark.ID), sql.Named("upto", maxID.Int64), sql.Named("batch", batch)}
		err := s.each(ctx, SourceHistory, "restore_history/rows", args, func(r *sql.Rows) error {
			h, err := s.scanHistory(r)
			if err != nil {
				return err
			}
			n++
			res.Rows = append(res.Rows, h)
			res.Mark = HistoryMark{ID: h.RestoreHistoryID, Date: h.RestoreDate}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if n < batch {
			return res, nil
		}
	}
}

func (s *Session) scanHistory(r *sql.Rows) (store.HistoryRow, error) {
	var (
		id                                  int64
		restored                            sql.NullTime
		dbName, user, rtype                 sql.NullString
		replace, recovery                   sql.NullBool
		stopAt                              sql.NullTime
		devCount                            sql.NullInt64
		setUUID, family                     mssql.NullUniqueIdentifier
		srvName, machine, srcDB, btype      sql.NullString
		bStart, bFinish                     sql.NullTime
		firstLSN, lastLSN, size, compressed sql.NullString
		major, minor, build                 sql.NullInt64
		copyOnly, checksums                 sql.NullBool
		keyAlg                              sql.NullString
		families, devType                   sql.NullInt64
		devices, destinations               sql.NullString
	)
	if err := r.Scan(&id, &restored, &dbName, &user, &rtype, &replace, &recovery, &stopAt, &devCount,
		&setUUID, &family, &srvName, &machine, &srcDB, &btype, &bStart, &bFinish, &firstLSN, &lastLSN,
		&size, &compressed, &major, &minor, &build, &copyOnly, &checksums, &keyAlg, &families, &devType,
		&devices, &destinations); err != nil {
		return store.HistoryRow{}, err
	}
	h := store.HistoryRow{
		Instance: s.inst.Name, RestoreHistoryID: id, Database: dbName.String, UserName: user.String,
		RestoreType: strings.TrimSpace(rtype.String), Replace: ptrBool(replace), Recovery: ptrBool(recovery),
		StopAt: ptrTime(stopAt), DeviceCount: ptrInt(devCount),
		SourceServer: srvName.String, SourceMachine: machine.String, SourceDatabase: srcDB.String,
		BackupType: strings.TrimSpace(btype.String), BackupStart: ptrTime(bStart), BackupFinish: ptrTime(bFinish),
		FirstLSN: decimalText(firstLSN), LastLSN: decimalText(lastLSN),
		BackupSize: decimalInt(size), CompressedSize: decimalInt(compressed),
		SoftwareMajor: ptrInt(major), SoftwareMinor: ptrInt(minor), SoftwareBuild: ptrInt(build),
		IsCopyOnly: ptrBool(copyOnly), HasChecksums: ptrBool(checksums), KeyAlgorithm: keyAlg.String,
		MediaFamilies: ptrInt(families), DeviceType: ptrInt(devType),
		Origin: store.Origin{Source: "live", File: s.inst.Name, Line: int(id)},
	}
	if restored.Valid {
		h.RestoreDate = wall(restored.Time)
	}
	if setUUID.Valid {
		h.BackupSetUUID = setUUID.UUID.String()
	}
	if family.Valid {
		h.FamilyGUID = family.UUID.String()
	}
	h.Devices, h.DestinationFiles = paths(devices.String), paths(destinations.String)
	return h, nil
}

// paths splits a '|'-joined path list of the history query (FOR XML PATH
// concatenation), dropping empty entries.
func paths(joined string) []string {
	var out []string
	for _, p := range strings.Split(joined, "|") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
