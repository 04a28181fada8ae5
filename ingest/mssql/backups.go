package mssql

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/restorewatch/restorewatch/store"
)

// SourceBackups names the backup-history source in errors and runs.
const SourceBackups = "backups"

// BackupMark is the backup source's watermark: the last backupset row read,
// with its finish date so that a rebuilt msdb whose new ids pass the old
// ones is still noticed.
type BackupMark struct {
	ID   int64     `json:"id"`
	Date time.Time `json:"date"` // backup_finish_date, local wall time
}

// BackupResult is one pass of the backup source.
type BackupResult struct {
	Sets []store.BackupSet
	// Mark is the watermark to store once Sets are committed.
	Mark BackupMark
	// Rebuilt says why the stored watermark was dropped; "".
	Rebuilt string
	// More is set when the pass stopped at its row cap.
	More bool
	// Availability says why the instance's availability-group membership
	// could not be read ("" when it was, or it has none); the sets are then
	// not tagged with it.
	Availability string
}

// Backups reads the backup history after mark (backup_history.sql), at
// most maxSets sets, with their devices and, for fulls, their files.
// Re-reading sets the warehouse holds is harmless: an import keys them
// by backup_set_uuid.
func (s *Session) Backups(ctx context.Context, mark BackupMark, maxSets int) (res *BackupResult, err error) {
	var minID, maxID sql.NullInt64
	var wmDate sql.NullTime
	err = s.each(ctx, SourceBackups, "backup_history/check", []any{sql.Named("watermark", mark.ID)},
		func(r *sql.Rows) error { return r.Scan(&minID, &maxID, &wmDate) })
	if err != nil {
		return nil, err
	}
	res = &BackupResult{Mark: mark}
	if mark.ID > 0 && maxID.Valid {
		switch {
		case maxID.Int64 < mark.ID:
			res.Rebuilt = fmt.Sprintf("msdb rebuilt: backupset's highest id is %d, below the watermark %d", maxID.Int64, mark.ID)
		case wmDate.Valid && !mark.Date.IsZero() && !wall(wmDate.Time).Equal(mark.Date):
			res.Rebuilt = fmt.Sprintf("msdb rebuilt: backupset row %d now finished at %s, not %s",
				mark.ID, wall(wmDate.Time).Format(time.DateTime), mark.Date.Format(time.DateTime))
		}
		if res.Rebuilt != "" {
			res.Mark = BackupMark{}
		}
	}
	if !maxID.Valid {
		return res, nil
	}
	defer func() {
		if err == nil {
			res.Availability = s.tagAvailability(ctx, res.Sets)
		}
	}()
	for {
		batch := min(HistoryBatch, maxSets-len(res.Sets))
		if batch <= 0 {
			res.More = res.Mark.ID < maxID.Int64
			return res, nil
		}
		from := res.Mark.ID
		n := 0
		ids := map[int64]int{}
		var last BackupMark
		args := []any{sql.Named("watermark", from), sql.Named("upto", maxID.Int64), sql.Named("batch", batch)}
		err := s.each(ctx, SourceBackups, "backup_history/rows", args, func(r *sql.Rows) error {
			id, b, finish, err := s.scanBackup(r)
			if err != nil {
				return err
			}
			n++
			ids[id] = len(res.Sets)
			res.Sets = append(res.Sets, b)
			last = BackupMark{ID: id, Date: finish}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if n > 0 {
			if err := s.backupFiles(ctx, from, last.ID, ids, res.Sets); err != nil {
				return nil, err
			}
			res.Mark = last
		}
		if n < batch {
			return res, nil
		}
	}
}

// backupFiles adds the files of the full backups in (from, upto].
func (s *Session) backupFiles(ctx context.Context, from, upto int64, ids map[int64]int, sets []store.BackupSet) error {
	args := []any{sql.Named("watermark", from), sql.Named("upto", upto)}
	return s.each(ctx, SourceBackups, "backup_history/files", args, func(r *sql.Rows) error {
		var id int64
		var logical, physical, typ, size, fg sql.NullString
		if err := r.Scan(&id, &logical, &physical, &typ, &size, &fg); err != nil {
			return err
		}
		i, ok := ids[id]
		if !ok || !logical.Valid {
			return nil // a set the rows query left out (one this server restored)
		}
		f := store.BackupFile{LogicalName: logical.String, PhysicalName: physical.String,
			Type: strings.TrimSpace(typ.String), Filegroup: fg.String}
		if v := decimalInt(size); v != nil {
			f.Size = *v
		}
		sets[i].Files = append(sets[i].Files, f)
		return nil
	})
}

func (s *Session) scanBackup(r *sql.Rows) (int64, store.BackupSet, time.Time, error) {
	var (
		id                                        int64
		uuid, diffGUID, fork1, fork2, family      mssql.NullUniqueIdentifier
		dbName, typ, server, machine, model, devs sql.NullString
		mediaSet, families, devType               sql.NullInt64
		copyOnly, damaged, checksums, bulk        sql.NullBool
		first, last, ckp, dbl, diffLSN, forkLSN   sql.NullString
		start, finish                             sql.NullTime
		tz                                        sql.NullInt64
		size, compressed                          sql.NullString
		major, minor, build                       sql.NullInt64
	)
	if err := r.Scan(&id, &uuid, &dbName, &mediaSet, &families, &typ, &copyOnly, &damaged, &checksums, &bulk,
		&first, &last, &ckp, &dbl, &diffLSN, &diffGUID, &forkLSN, &fork1, &fork2, &start, &finish, &tz,
		&size, &compressed, &major, &minor, &build, &server, &machine, &model, &devType, &devs, &family); err != nil {
		return 0, store.BackupSet{}, time.Time{}, err
	}
	b := store.BackupSet{Instance: s.inst.Name, Database: dbName.String, MediaSetID: mediaSet.Int64,
		Families: int(families.Int64), Type: strings.TrimSpace(typ.String), CopyOnly: copyOnly.Bool, Damaged: damaged.Bool,
		Checksums: checksums.Bool, BulkLogged: bulk.Bool, FirstLSN: decimalText(first), LastLSN: decimalText(last),
		CheckpointLSN: decimalText(ckp), DatabaseBackupLSN: decimalText(dbl), DiffBaseLSN: decimalText(diffLSN),
		ForkPointLSN: decimalText(forkLSN), ServerName: server.String, MachineName: machine.String,
		RecoveryModel: model.String, Origin: store.Origin{Source: "live", File: s.inst.Name, Line: int(id)}}
	for _, g := range []struct {
		v   mssql.NullUniqueIdentifier
		dst *string
	}{{uuid, &b.UUID}, {diffGUID, &b.DiffBaseGUID}, {fork1, &b.FirstForkGUID}, {fork2, &b.LastForkGUID}, {family, &b.FamilyGUID}} {
		if g.v.Valid {
			*g.dst = g.v.UUID.String()
		}
	}
	if v := decimalInt(size); v != nil {
		b.Size = *v
	}
	if v := decimalInt(compressed); v != nil {
		b.CompressedSize = *v
	}
	if major.Valid {
		b.SoftwareBuild = strconv.FormatInt(major.Int64, 10) + "." + strconv.FormatInt(minor.Int64, 10) + "." + strconv.FormatInt(build.Int64, 10)
	}
	b.Start, b.Finish = wall(start.Time), wall(finish.Time)
	localFinish := b.Finish
	if tz.Valid && tz.Int64 != 127 && tz.Int64 >= -48 && tz.Int64 <= 48 {
		off := int(tz.Int64) * 15
		b.UTCOffset = &off
		b.Start = b.Start.Add(-time.Duration(off) * time.Minute)
		b.Finish = b.Finish.Add(-time.Duration(off) * time.Minute)
	}
	for i, d := range paths(devs.String) {
		b.Media = append(b.Media, store.BackupMedia{Family: i + 1, DeviceType: int(devType.Int64), Device: d})
	}
	return id, b, localFinish, nil
}

// tagAvailability marks the sets of the instance's availability-group
// databases with their AG (Availability), which the warehouse records as
// the AG's membership. It returns why it could not read it, or what it
// could not read; a failure costs the tags, not the sets.
func (s *Session) tagAvailability(ctx context.Context, sets []store.BackupSet) string {
	if len(sets) == 0 {
		return ""
	}
	ms, note, err := s.Availability(ctx, SourceBackups)
	if err != nil {
		return "availability groups not read: " + err.Error()
	}
	byDB := map[string]store.AGMembership{}
	for _, m := range ms {
		byDB[m.Database] = m
	}
	for i := range sets {
		if m, ok := byDB[sets[i].Database]; ok {
			sets[i].AvailabilityGroup, sets[i].AGListener, sets[i].GroupDatabaseID = m.AG, m.Listener, m.GroupDatabaseID
		}
	}
	return note
}

// Availability reads the availability-group databases the instance holds a
// replica of (backup_history/availability): one membership per database,
// its own availability group's, never a distributed AG's (which lists the
// database again; a Managed Instance link is one). note says what was left
// out and why: a distributed AG told apart, a listener that the login may
// not see (VIEW ANY DEFINITION). err is the query's failure (VIEW SERVER
// STATE missing: Msg 300).
func (s *Session) Availability(ctx context.Context, source string) (ms []store.AGMembership, note string, err error) {
	seen := map[string]bool{}
	var notes []string
	hidden := false
	err = s.each(ctx, source, "backup_history/availability", nil, func(r *sql.Rows) error {
		var ag, db, listener sql.NullString
		var id mssql.NullUniqueIdentifier
		var distributed, canView sql.NullInt64
		if err := r.Scan(&ag, &db, &id, &listener, &distributed, &canView); err != nil {
			return err
		}
		m := store.AGMembership{Database: db.String, AG: ag.String, Listener: listener.String, Distributed: distributed.Int64 == 1}
		if id.Valid {
			m.GroupDatabaseID = id.UUID.String()
		}
		if m.Database == "" || m.AG == "" {
			return nil
		}
		if !listener.Valid && canView.Valid && canView.Int64 == 0 {
			hidden = true
		}
		if seen[m.Database] {
			if m.Distributed {
				notes = append(notes, fmt.Sprintf("%s is also in distributed availability group %s: recorded in its own group only", m.Database, m.AG))
			}
			return nil
		}
		seen[m.Database] = true
		ms = append(ms, m)
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	if hidden {
		notes = append(notes, "availability-group listeners not read: the login lacks VIEW ANY DEFINITION (optional in permissions.sql), so plans cannot be asked by listener name")
	}
	return ms, strings.Join(notes, "; "), nil
}
