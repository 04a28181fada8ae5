package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

// backups writes into an estate warehouse the msdb backup history of the
// source servers of its first n instances (PROD-SQLnnnn, whose backups
// instance nnnn restores), so that restore plans and the overview's
// projections are measured at 10 M restores (issue 16): every backup a
// restore of the estate restored (each test-restored database's daily
// full; each log-shipping chain's full and logs, with the restores' LSNs),
// and a full of each log-shipped database before the first log of each
// later day, which the secondary never restores: a plan to the latest
// instant is then that day's full and the logs since, as on a real
// primary, not the chain's first full and three months of logs. The source
// servers have no restores, so every step of their plans rests on the
// fleet's rates.
func backups(ctx context.Context, f *fleet, path string, n int, stdout io.Writer) error {
	if !f.estate() {
		return errors.New("backups: only the estate shape (-shape estate)")
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("backups: %w (build the estate first)", err)
	}
	start := time.Now()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	im, err := db.NewImport(ctx, "fleet", "backups")
	if err != nil {
		return err
	}
	var total int64
	for i := range min(n, f.instances) {
		var sets []store.BackupSet
		lastDay := map[string]string{} // log-shipped database -> the local day of its previous log
		err := f.each(i, func(r *restore) error {
			day := r.start.Format("2006-01-02")
			if r.kind == store.KindLog && lastDay[r.database] != "" && lastDay[r.database] != day {
				// The day's full on the primary, between the previous log
				// and this one: its LSNs fall inside this log's range.
				full := *r
				full.kind, full.uid = store.KindFull, r.uid|1<<31
				full.lastLSN = lsnAfter(r.firstLSN)
				full.backupStart = r.backupStart.Add(-10 * time.Minute)
				full.device = r.device[:len(r.device)-len(".trn")] + "_FULL.bak"
				full.bytes = r.bytes * 400
				full.compressed = full.bytes * 3 / 10
				sets = append(sets, f.backupSet(i, &full))
			}
			if r.kind == store.KindLog {
				lastDay[r.database] = day
			}
			sets = append(sets, f.backupSet(i, r))
			return nil
		})
		if err != nil {
			return err
		}
		for _, b := range sets {
			if err := im.BackupSet(b); err != nil {
				return err
			}
		}
		total += int64(len(sets))
	}
	sum, err := im.Commit()
	if err != nil {
		return err
	}
	if len(sum.Rejects) > 0 {
		return fmt.Errorf("backups: %d sets rejected, the first %s", len(sum.Rejects), sum.Rejects[0])
	}
	added := sum.Added
	fmt.Fprintf(stdout, "fleet: %s: %d backup sets of %d source servers (%d new), in %.1f s\n",
		path, total, min(n, f.instances), added, time.Since(start).Seconds())
	return nil
}

// backupSet is the msdb backupset row of the backup r restored, as the
// source server recorded it (times in UTC: the estate's local times less
// the instance's offset).
func (f *fleet) backupSet(i int, r *restore) store.BackupSet {
	off := f.offset(i)
	typ := "D"
	if r.kind == store.KindLog {
		typ = "L"
	}
	startUTC := r.backupStart.Add(-time.Duration(off) * time.Minute)
	took := time.Duration(float64(r.bytes)/(200<<20)*float64(time.Second)) + time.Second
	return store.BackupSet{
		Instance: r.srcServer, Database: r.database, UUID: uuid(r.uid, 1), Families: 1, Type: typ, Checksums: true,
		FirstLSN: r.firstLSN, LastLSN: r.lastLSN, CheckpointLSN: r.firstLSN,
		Start: startUTC, Finish: startUTC.Add(took), UTCOffset: &off, Size: r.bytes, CompressedSize: r.compressed,
		SoftwareBuild: fmt.Sprintf("%d.0.%d", r.srcMajor, r.srcBuild), ServerName: r.srcServer, MachineName: r.srcServer,
		RecoveryModel: "FULL",
		Media:         []store.BackupMedia{{Family: 1, DeviceType: 2, Device: r.device}},
		Origin:        store.Origin{Source: "bench", File: "fleet/backups"},
	}
}

// lsnAfter is an LSN of the same virtual log file as l, ten blocks on:
// inside the log backup that starts at l.
func lsnAfter(l string) string {
	var vlf, block, slot int64
	// l is lsn(vlf, block, slot): the block is 10 digits, the slot 5.
	fmt.Sscanf(l[:len(l)-15], "%d", &vlf)
	fmt.Sscanf(l[len(l)-15:len(l)-5], "%d", &block)
	fmt.Sscanf(l[len(l)-5:], "%d", &slot)
	return lsn(vlf, block+10, slot)
}
