package demo

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
)

// The demo shows what a collector watching the fleet records, so /live,
// /collector and the restore pages are not empty: a collector run every
// 15 minutes for each instance (one instance's login lacks a permission),
// and restores seen in flight with their progress curves:
//
//   - seed 000, "The Curious Case of the Restore Slowdown": a 16 TB restore
//     onto 4K-sector disks runs at about 2 GB/s, then a little over half way
//     through drops to 200 and 100 MB/s. Still running, on /live.
//   - the same shape on the newest Billing restore of the reporting server
//     (seed 003's 4K disks), finished: its restore page shows the curve and
//     its knee.
//   - seed 002: a FileTable database's full restore goes fast until 92 %,
//     then the antimalware service's reads slow it to a crawl. Finished.

// The instances are found by the start of their name (the fleet numbers
// them): the reporting server of seeds 000 and 003 (4K disks), the
// archive server, and the instance whose collector login was not granted
// what permissions.sql grants (its error-log source degrades each pass).
const (
	livePrefix       = "RPT-SQL"
	archivePrefix    = "ARCH-SQL"
	permissionPrefix = "QA-SQL"
)

// named is the first instance whose name starts with prefix, or "".
func named(insts []store.InstanceSummary, prefix string) string {
	for _, in := range insts {
		if strings.HasPrefix(in.Name, prefix) {
			return in.Name
		}
	}
	return ""
}

// permissionError is what the collector records for it: SQL Server's
// message 297 and ingest/mssql's hint for that number, as
// mssql.Error.Msg writes them (see ingest/collector's failure test).
const permissionError = "The user does not have permission to perform this action. (error 297): " +
	"the login lacks the permission this needs (VIEW SERVER STATE; see permissions.sql)"

// recordLive writes the collector runs and progress curves. It anchors them
// at the newest restore of the fleet (the end of its period), or at now
// when the fleet ends within the last two days (serve --demo), so the
// running restore is current on /live.
func recordLive(ctx context.Context, db store.Warehouse, now time.Time) error {
	p, err := db.Restores(ctx, store.RestoreQuery{Filter: store.RestoreFilter{Limit: 1}})
	newest := p.Restores
	if err != nil || len(newest) == 0 {
		return err
	}
	anchor := newest[0].At
	if now.After(anchor) && now.Sub(anchor) < 48*time.Hour {
		anchor = now
	}
	anchor = anchor.Truncate(time.Second)
	insts, err := db.ListInstances(ctx, "")
	if err != nil {
		return err
	}
	liveInstance := named(insts, livePrefix)
	if err := collectorRuns(ctx, db, insts, anchor, liveInstance, named(insts, permissionPrefix)); err != nil {
		return err
	}
	if liveInstance == "" {
		return nil
	}
	if err := finishedCurve(ctx, db, liveInstance, "Billing", slowAfter55); err != nil {
		return err
	}
	if err := finishedCurve(ctx, db, named(insts, archivePrefix), "Archive", crawlAt92); err != nil {
		return err
	}
	// The 16 TB restore, still running (after the finished ones, whose
	// last sampling ends every other curve of their instance): 55 % in
	// 75 min, then ten times slower. Its backup's history gives its size.
	start := anchor.Add(-warehouseRan)
	if err := warehouseBackup(ctx, db, liveInstance, start); err != nil {
		return err
	}
	return addCurve(ctx, db, liveInstance, "Warehouse", warehouseSession, start, anchor, false, warehouseOffset,
		warehouseStatement, warehouseProgress)
}

// The running restore of seed 000: a 16 TB database striped over four
// files on a share, restored onto the reporting server's 4K-sector disks.
const (
	warehouseSession   = 71
	warehouseOffset    = -300
	warehouseRan       = 220 * time.Minute // when the demo is loaded
	warehouseStatement = `RESTORE DATABASE [Warehouse] FROM DISK = N'\\nas01\sql\Warehouse_1.bak', DISK = N'\\nas01\sql\Warehouse_2.bak', DISK = N'\\nas01\sql\Warehouse_3.bak', DISK = N'\\nas01\sql\Warehouse_4.bak' WITH STATS = 1`
	warehouseBytes     = 16_000_000_000_000
)

// warehouseProgress is its progress at an elapsed time.
var warehouseProgress = slowAfter(55, 75*time.Minute, 10)

// warehouseBackup records the compressed, four-stripe full backup the
// running restore reads, as the collector would have read it from msdb.
func warehouseBackup(ctx context.Context, db store.Warehouse, instance string, restoreStart time.Time) error {
	finish := restoreStart.Add(-2 * time.Hour)
	set := store.BackupSet{Instance: instance, Database: "Warehouse", UUID: "5EED0000-0000-4000-8000-00000000000E",
		Families: 4, Type: "D", Checksums: true, FirstLSN: "98000000012300001", LastLSN: "98000000045600001",
		CheckpointLSN: "98000000012300001", DatabaseBackupLSN: "97000000010000001", Start: finish.Add(-5 * time.Hour),
		Finish: finish, Size: warehouseBytes, CompressedSize: warehouseBytes * 3 / 8, SoftwareBuild: "13.0.4474",
		ServerName: "SQLPROD01", MachineName: "SQLPROD01", RecoveryModel: "FULL",
		Files: []store.BackupFile{{LogicalName: "Warehouse", PhysicalName: `D:\SQLData\Warehouse.mdf`, Type: "D", Size: warehouseBytes, Filegroup: "PRIMARY"},
			{LogicalName: "Warehouse_log", PhysicalName: `L:\SQLLogs\Warehouse_log.ldf`, Type: "L", Size: warehouseBytes / 50}}}
	for i, d := range analysis.StatementDevices(warehouseStatement) {
		set.Media = append(set.Media, store.BackupMedia{Family: i + 1, DeviceType: 2, Device: d})
	}
	im, err := db.NewImport(ctx, "demo", "backups")
	if err != nil {
		return err
	}
	if err := im.BackupSet(set); err != nil {
		return err
	}
	sum, err := im.Commit()
	if err == nil && len(sum.Rejects) > 0 {
		err = fmt.Errorf("demo: backup set rejected: %s", sum.Rejects[0])
	}
	return err
}

// collectorRuns records two hours of 15-minute passes over every instance.
func collectorRuns(ctx context.Context, db store.Warehouse, insts []store.InstanceSummary, anchor time.Time, liveInstance, permissionInstance string) error {
	for k := 7; k >= 0; k-- {
		if err := collectorPass(ctx, db, insts, anchor.Add(-time.Duration(k)*15*time.Minute), liveInstance, permissionInstance); err != nil {
			return err
		}
	}
	return nil
}

// collectorPass records one collector pass over every instance, started at
// started.
func collectorPass(ctx context.Context, db store.Warehouse, insts []store.InstanceSummary, started time.Time, liveInstance, permissionInstance string) error {
	n := started.Unix() / 900 % 3 // rows read vary from pass to pass
	for _, in := range insts {
		id, err := db.StartRun(ctx, in.Name, started)
		if err != nil {
			return err
		}
		fin := started.Add(time.Duration(2+len(in.Name)%5) * time.Second)
		run := store.CollectorRun{ID: id, Instance: in.Name, Started: started, Finished: &fin, Status: store.RunOK,
			Rows: map[string]int64{"host": 1, "history": n, "errorlog": n, "inflight": 0}}
		if in.Name == permissionInstance {
			run.Status = store.RunPartial
			delete(run.Rows, "errorlog")
			run.Errors = map[string]string{"errorlog": permissionError}
		}
		if in.Name == liveInstance {
			run.Rows["inflight"] = 1
		}
		if err := db.FinishRun(ctx, run); err != nil {
			return err
		}
	}
	return nil
}

// progressShape gives a restore's progress, 0 to 100, at a fraction of its
// duration.
type progressShape func(frac float64) float64

// slowAfter55 is seed 000: 55 % at a tenth of the time, then ten times
// slower (55/x = 45/(10 (1-x)) … the fast phase takes 55/505 of the whole).
func slowAfter55(frac float64) float64 { return phases(frac, 55, 55.0/505) }

// crawlAt92 is seed 002: fast to 92 %, then a crawl that takes two thirds
// of the restore.
func crawlAt92(frac float64) float64 { return phases(frac, 92, 1.0/3) }

// phases is a two-rate progress curve: knee percent at fraction kneeAt of
// the time.
func phases(frac, knee, kneeAt float64) float64 {
	if frac <= kneeAt {
		return knee * frac / kneeAt
	}
	return knee + (100-knee)*(frac-kneeAt)/(1-kneeAt)
}

// slowAfter is the running restore's progress at an elapsed time: knee
// percent after fast, then slower times slower.
func slowAfter(knee float64, fast time.Duration, slower float64) func(time.Duration) float64 {
	rate := knee / fast.Minutes() // % per minute
	return func(d time.Duration) float64 {
		if d <= fast {
			return rate * d.Minutes()
		}
		return min(99.9, knee+rate/slower*(d-fast).Minutes())
	}
}

// finishedCurve samples the newest full restore of instance's database as
// the collector would have, once a minute, with the given shape.
func finishedCurve(ctx context.Context, db store.Warehouse, instance, database string, sh progressShape) error {
	p, err := db.Restores(ctx, store.RestoreQuery{Filter: store.RestoreFilter{Instance: instance, Database: database, Kind: store.KindFull, Limit: 1}})
	rs := p.Restores
	if err != nil || len(rs) == 0 || instance == "" {
		return err
	}
	d, err := db.GetRestoreDetail(ctx, rs[0].ID)
	if err != nil {
		return err
	}
	if d.StartedLocal == nil || d.FinishedLocal == nil || !d.FinishedLocal.After(*d.StartedLocal) || d.StartedAt == nil {
		return nil
	}
	offset := int(d.StartedLocal.Sub(*d.StartedAt) / time.Minute)
	total := d.FinishedLocal.Sub(*d.StartedLocal)
	progress := func(e time.Duration) float64 { return sh(float64(e) / float64(total)) }
	from := make([]string, len(rs[0].Devices))
	for i, d := range rs[0].Devices {
		from[i] = "DISK = N'" + strings.ReplaceAll(d, "'", "''") + "'"
	}
	stmt := fmt.Sprintf("RESTORE DATABASE [%s] FROM %s WITH REPLACE, STATS = 1", strings.ReplaceAll(database, "]", "]]"), strings.Join(from, ", "))
	start := d.StartedLocal.Add(-time.Duration(offset) * time.Minute) // UTC
	return addCurve(ctx, db, instance, database, 64, start, start.Add(total), true, offset, stmt, progress)
}

// addCurve stores the samples of one restore from start to end (instants),
// 120 of them evenly spaced (at least 5 s apart), then, when ended, a sampling
// without it, which ends its curve.
func addCurve(ctx context.Context, db store.Warehouse, instance, database string, session int64, start, end time.Time, ended bool,
	offset int, stmt string, progress func(time.Duration) float64) error {
	total := end.Sub(start)
	step := max(5*time.Second, total/120)
	local := func(t time.Time) time.Time { return t.Add(time.Duration(offset) * time.Minute).UTC() }
	for e := step; e <= total; e += step {
		p := progress(e)
		rate := (p - progress(e-step)) / step.Minutes() // % per minute, now
		var left int64
		if rate > 0 {
			left = int64((100 - p) / rate * 60_000)
		}
		s := store.InflightSample{Instance: instance, Database: database, SessionID: session, Command: "RESTORE DATABASE",
			Statement: stmt, Start: local(start), SampledAt: local(start.Add(e)), UTCOffset: offset,
			Percent: p, EstRemainingMs: left, WaitType: "BACKUPIO"}
		if err := db.AddInflightSamples(ctx, instance, []store.InflightSample{s}); err != nil {
			return err
		}
	}
	if ended {
		return db.AddInflightSamples(ctx, instance, nil)
	}
	return nil
}
