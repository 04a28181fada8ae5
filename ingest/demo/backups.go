package demo

import (
	"encoding/csv"
	"fmt"
	"math"
	"strings"
	"time"
)

// The backup history of the fleet, for restore plans: every database an
// instance restores with a full (a refresh of a copy) is also backed up
// there (weekly full, daily differential, log backups every 15 minutes)
// over the last BackupDays days, written as backup_history_export.sql's
// CSV. The schedule is in UTC and ends at Now: the week's full is on the
// history's fourth day and the daily differential starts 20 h 15 min
// before Now's time of day (Now rounded down to a quarter hour).
//
// The history could have happened: no backup of a database runs while a
// restore over it does, and each such restore replaces the database, so a
// full backup is taken five minutes after it ends and starts a new chain
// (a new recovery fork, the restored database's LSNs); a log-shipped copy,
// always restoring, has no backups at all. Planted along the way, where no
// restore runs: a copy-only full (the fleet's first database), a striped
// full (every job with stripes), a missing log backup (the second
// database: a broken chain) and a recovery fork (the third: a restore WITH
// RECOVERY to an earlier instant, after which the log backups follow a
// new fork).

// BackupDays is how many days of backup history the demo writes.
const BackupDays = 9

// DefaultBackupInstances is Config.BackupInstances when unset.
const DefaultBackupInstances = 50

// backupColumns are backup_history_export.sql's output columns.
var backupColumns = []string{"instance", "database_name", "backup_set_uuid", "media_set_id", "media_family_count", "type",
	"is_copy_only", "is_damaged", "has_backup_checksums", "has_bulk_logged_data", "first_lsn", "last_lsn", "checkpoint_lsn",
	"database_backup_lsn", "differential_base_lsn", "differential_base_guid", "fork_point_lsn", "first_recovery_fork_guid",
	"last_recovery_fork_guid", "backup_start_date", "backup_finish_date", "time_zone", "backup_size", "compressed_backup_size",
	"software_major_version", "software_minor_version", "software_build_version", "server_name", "machine_name",
	"recovery_model", "device_type", "physical_device_names", "logical_name", "physical_name", "file_type", "file_size",
	"filegroup_name"}

// BackupTruth records what the demo planted in the backup history, for tests.
type BackupTruth struct {
	CopyOnly   [2]string // instance, database with a copy-only full
	CopyAt     time.Time // when the copy-only full was taken (UTC)
	Gap        [2]string // instance, database missing a log backup
	GapAt      time.Time // the start of the missing log backup (UTC)
	Fork       [2]string // instance, database with a recovery fork
	ForkAt     time.Time // when the forking restore happened (UTC)
	LastDiff   time.Time // the last differential's start (UTC), same for every database not being restored over then
	Refreshes  int       // fulls taken after a restore over their database
	Databases  int
	BackupSets int
}

type backupWriter struct {
	w    *csv.Writer
	n    int
	uuid int
}

// writeBackups writes the fleet's backup history.
func (g *gen) writeBackups(path string) (BackupTruth, error) {
	var t BackupTruth
	f, buf, c, err := createFile(path)
	if err != nil {
		return t, err
	}
	bw := &backupWriter{w: csv.NewWriter(buf)}
	_ = bw.w.Write(backupColumns)
	end := g.cfg.Now.Truncate(15 * time.Minute)
	t.LastDiff = end.Add(-20*time.Hour - 15*time.Minute)
	k := 0
	withHistory := g.cfg.BackupInstances
	if withHistory <= 0 {
		withHistory = DefaultBackupInstances
	}
	for _, in := range g.plan.instances[:min(withHistory, len(g.plan.instances))] {
		seen := map[string]bool{}
		for _, s := range in.series {
			if seen[s.db] || s.kind == jobLog {
				// A log-shipped copy is always restoring: it cannot be
				// backed up.
				continue
			}
			seen[s.db] = true
			d := dbBackups{w: bw, in: in, s: s, idx: k, end: end, lastDiff: t.LastDiff}
			switch k {
			case 0:
				t.CopyOnly = [2]string{in.name, s.db}
				d.copyOnly = true
			case 1:
				t.Gap = [2]string{in.name, s.db}
				d.gap = true
			case 2:
				t.Fork = [2]string{in.name, s.db}
				d.fork = true
			}
			d.write()
			if d.copyOnly {
				t.CopyAt = d.copyAt
			}
			t.Refreshes += d.refreshes
			if d.gap {
				t.GapAt = d.gapAt
			}
			if d.fork {
				t.ForkAt = d.forkAt
			}
			k++
		}
	}
	t.Databases, t.BackupSets = k, bw.n
	bw.w.Flush()
	err = bw.w.Error()
	if ferr := buf.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	g.bytes += c.n
	if err != nil {
		return t, fmt.Errorf("demo: %w", err)
	}
	return t, nil
}

// dbBackups writes one database's history. LSNs advance 1000 a minute (a
// log backup holds [first_lsn, last_lsn); a data backup's last_lsn falls
// inside the next log backup), from a base of the database's own.
type dbBackups struct {
	w                   *backupWriter
	in                  *instance
	s                   *series
	idx                 int
	end, lastDiff       time.Time
	copyOnly, gap, fork bool
	gapAt, forkAt       time.Time
	copyAt              time.Time
	refreshes           int
	refreshed           []time.Time // the fulls taken after a restore over the database

	t0       time.Time
	fullUUID string
	fullCkpt string
	forkA    string
	forkB    string
}

func (d *dbBackups) lsn(t time.Time) int64 {
	return (int64(40+d.idx)*1_000_000_000+10_000_000)*100_000 + 1 + int64(t.Sub(d.t0)/time.Minute)*1000 + 10
}

func (d *dbBackups) write() {
	d.t0 = d.lastDiff.Add(-time.Duration(BackupDays-1) * 24 * time.Hour)
	d.fullCkpt = itoa(d.lsn(d.t0) - 7*24*60*1000) // the full before the history's start
	d.forkA = guid(0xF0, d.idx, 0)
	d.forkB = guid(0xF1, d.idx, 0)
	// The planted events fall where no restore runs over the database.
	forkPoint := d.free(d.end.Add(-3*24*time.Hour+7*time.Hour), 2*time.Hour) // restored to this instant …
	d.forkAt = forkPoint.Add(40 * time.Minute)                               // … by a restore at this one
	d.copyAt = d.free(d.end.Add(-4*24*time.Hour+10*time.Hour), 2*time.Hour).Add(5 * time.Minute)
	gapAt := d.free(d.lastDiff.Add(-2*24*time.Hour+5*time.Hour), time.Hour)
	fork, forked := d.forkA, false
	lastLog := d.lsn(d.t0)
	over := 0
	for t := d.t0; t.Before(d.end); t = t.Add(15 * time.Minute) {
		// A restore over the database that ended before t replaced it:
		// the next chain starts with a full taken after it, from the
		// restored database's own LSNs and a new recovery fork.
		for over < len(d.s.over) && !d.s.over[over].end.After(t) {
			w := d.s.over[over]
			over++
			if w.end.Before(d.t0) {
				continue
			}
			at := w.end.Add(5 * time.Minute).Truncate(time.Minute)
			if !at.Before(d.end) || d.busy(at, at) {
				continue
			}
			d.refreshes++
			fork = guid(0xF2, d.idx, d.refreshes)
			d.data("D", at, false, fork)
			d.refreshed = append(d.refreshed, at)
			lastLog = d.lsn(at) - 500
		}
		day := int(t.Sub(d.t0) / (24 * time.Hour))
		if t.Sub(d.t0)%(24*time.Hour) == 0 && !d.busy(t, t.Add(d.took("D", t))) {
			// Day 3 is the week's full; the other days' backups are
			// differentials. A backup that would run while a restore
			// replaces the database is not taken.
			if day%7 == 3 {
				d.data("D", t, false, fork)
			} else {
				d.data("I", t, false, fork)
			}
		}
		if d.copyOnly && t.Equal(d.copyAt.Add(-5*time.Minute)) {
			d.data("D", d.copyAt, true, fork)
		}
		if t.Equal(d.t0) || d.busy(t.Add(-15*time.Minute), t.Add(time.Minute)) {
			continue
		}
		if d.gap && t.Equal(gapAt) {
			d.gapAt = t
			lastLog = d.lsn(t)
			continue // the missing log backup
		}
		first, last := lastLog, d.lsn(t)
		if d.fork && !forked && !t.Before(d.forkAt) {
			// The first log backup after the forking restore: from the
			// restored log's start to the new branch's end, across the fork.
			at := forkPoint.Truncate(15 * time.Minute)
			first = d.lsn(at)
			d.log(t, first, last, fork, d.forkB, d.lsn(forkPoint))
			fork, forked = d.forkB, true
			lastLog = last
			continue
		}
		d.log(t, first, last, fork, fork, 0)
		lastLog = last
	}
}

// busy says whether [from, to] meets a restore over the database.
func (d *dbBackups) busy(from, to time.Time) bool {
	for _, w := range d.s.over {
		if !from.After(w.end) && !to.Before(w.start) {
			return true
		}
	}
	return false
}

// free is the first quarter hour at or after t from which need passes
// with no restore over the database, and none ended in the half hour
// before (the full taken after one).
func (d *dbBackups) free(t time.Time, need time.Duration) time.Time {
	t = t.Truncate(15 * time.Minute)
	for d.busy(t.Add(-30*time.Minute), t.Add(need)) {
		t = t.Add(15 * time.Minute)
	}
	return t
}

// took is how long a data backup of typ taken at t runs.
func (d *dbBackups) took(typ string, t time.Time) time.Duration {
	dur := time.Duration(float64(d.pages(t)*8192)/(400<<20)*float64(time.Second)) + time.Second
	if typ == "I" {
		dur /= 12
	}
	return dur
}

func (d *dbBackups) pages(t time.Time) float64 {
	frac := t.Sub(d.in.local(d.t0)).Hours() / (24 * 180)
	return d.s.pages0 * math.Pow(d.s.growth, 1+frac)
}

func (d *dbBackups) data(typ string, t time.Time, copyOnly bool, fork string) {
	size := int64(d.pages(t) * 8192)
	kind := "FULL"
	dur := d.took(typ, t)
	if typ == "I" {
		kind, size = "DIFF", size/12
	}
	d.w.uuid++
	uuid := guid(0xB0, d.idx, d.w.uuid)
	stripes := 1
	if typ == "D" && !copyOnly {
		stripes = max(d.s.stripes, 1)
	}
	ckp := d.lsn(t) - 400
	// A data backup's log records run from its checkpoint to its end: the
	// log backups taken meanwhile overlap it, and the first one to restore
	// after it is the one that holds its last LSN.
	r := d.row(uuid, typ, t, t.Add(dur), itoa(d.lsn(t)-500), itoa(d.lsn(t.Add(dur))+50), fork, fork, size, stripes)
	r["checkpoint_lsn"] = itoa(ckp)
	r["database_backup_lsn"] = d.fullCkpt
	if copyOnly {
		r["is_copy_only"] = "1"
		kind = "COPY_ONLY"
	}
	if typ == "I" {
		r["differential_base_lsn"], r["differential_base_guid"] = d.fullCkpt, d.fullUUID
	} else if !copyOnly {
		d.fullUUID, d.fullCkpt = uuid, itoa(ckp)
	}
	r["physical_device_names"] = strings.Join(d.devices(kind, ".bak", t, stripes), "|")
	if typ != "D" {
		d.w.put(r)
		return
	}
	safe := safeName(d.s.db)
	data, log := `D:\SQLData\`, `L:\SQLLogs\`
	if d.in.linux {
		data, log = "/var/opt/mssql/data/", "/var/opt/mssql/log/"
	}
	files := [][4]string{{d.s.db, data + safe + ".mdf", "D", "PRIMARY"}, {d.s.db + "_log", log + safe + "_log.ldf", "L", ""}}
	for _, f := range files {
		r["logical_name"], r["physical_name"], r["file_type"], r["filegroup_name"] = f[0], f[1], f[2], f[3]
		r["file_size"] = itoa(size + size/10)
		d.w.put(r)
	}
}

func (d *dbBackups) log(t time.Time, first, last int64, fork1, fork2 string, forkPoint int64) {
	d.w.uuid++
	// About a fifth of the database changes a day, in proportion to the
	// log each backup holds.
	size := int64(d.pages(t)*8192/500*float64(last-first)/15000) + 1<<20
	r := d.row(guid(0xB0, d.idx, d.w.uuid), "L", t, t.Add(2*time.Second+time.Duration(size/(200<<20))*time.Second),
		itoa(first), itoa(last), fork1, fork2, size, 1)
	r["checkpoint_lsn"], r["database_backup_lsn"] = d.fullCkpt, d.fullCkpt
	if forkPoint > 0 {
		r["fork_point_lsn"] = itoa(forkPoint)
	}
	r["physical_device_names"] = d.devices("LOG", ".trn", t, 1)[0]
	d.w.put(r)
}

func (d *dbBackups) row(uuid, typ string, start, finish time.Time, first, last, fork1, fork2 string, size int64, stripes int) map[string]string {
	local := func(t time.Time) string { return d.in.local(t).Format("2006-01-02 15:04:05.000") }
	ver := strings.Split(at(d.in.builds, finish), ".")
	for len(ver) < 3 {
		ver = append(ver, "0")
	}
	return map[string]string{"instance": d.in.name, "database_name": d.s.db, "backup_set_uuid": uuid,
		"media_set_id": itoa(int64(d.w.uuid)), "media_family_count": itoa(int64(stripes)), "type": typ, "is_copy_only": "0",
		"is_damaged": "0", "has_backup_checksums": "1", "has_bulk_logged_data": "0", "first_lsn": first, "last_lsn": last,
		"first_recovery_fork_guid": fork1, "last_recovery_fork_guid": fork2, "backup_start_date": local(start),
		"backup_finish_date": local(finish), "time_zone": itoa(int64(d.in.tz / 15)), "backup_size": itoa(size),
		"compressed_backup_size": itoa(int64(float64(size) * math.Max(d.s.ratio, 0.3))), "software_major_version": ver[0],
		"software_minor_version": ver[1], "software_build_version": ver[2], "server_name": d.in.name, "machine_name": d.in.host,
		"recovery_model": "FULL", "device_type": "2"}
}

// devices names the backup files in Ola Hallengren's layout in the job's
// folder, one per stripe.
func (d *dbBackups) devices(typ, ext string, t time.Time, stripes int) []string {
	dir := at(d.s.dirs, t)
	safe := safeName(d.s.db)
	dir = strings.NewReplacer("{src}", safeName(d.in.name), "{db}", safe, "{type}", typ).Replace(dir)
	sep := `\`
	if strings.HasPrefix(dir, "/") {
		sep = "/"
	}
	name := dir + sep + safeName(d.in.name) + "_" + safe + "_" + typ + "_" + d.in.local(t).Format("20060102_150405")
	if stripes == 1 {
		return []string{name + ext}
	}
	out := make([]string, stripes)
	for i := range out {
		out[i] = name + "_" + itoa(int64(i+1)) + ext
	}
	return out
}

func (w *backupWriter) put(r map[string]string) {
	rec := make([]string, len(backupColumns))
	for i, c := range backupColumns {
		rec[i] = r[c]
	}
	if r["logical_name"] == "" || r["file_type"] == "D" {
		w.n++
	}
	_ = w.w.Write(rec)
}

func guid(tag byte, db, n int) string {
	return fmt.Sprintf("%02X%06X-0000-4000-8000-%012X", tag, db, n)
}
