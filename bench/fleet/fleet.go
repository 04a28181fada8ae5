package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// fleet is a synthetic fleet for the benchmarks: instances × databases
// series of full restores, one restore a day per series ending at end, the
// same bytes for the same flags. One series in twenty slows to 0.4× at 60 %
// of its history, when its backups start coming from a newer source build;
// the rest hold a steady throughput with ±15 % noise and a database that
// grows a little every day.
type fleet struct {
	instances, databases, restores int
	seed                           uint64
	end                            time.Time // local midnight of the last day

	// The estate shape (estate.go).
	shape                        string
	days, logship, logDBs, every int
}

// restore is one restore of the fleet, in both the msdb and error-log shapes.
type restore struct {
	instance, database string
	offset             int // minutes east of UTC
	histID             int64
	start, end         time.Time // local wall time (UTC location, "local" meaning)
	seconds            float64
	bytes, compressed  int64
	firstLSN, lastLSN  string
	srcServer          string
	srcMajor, srcBuild int64
	device             string

	kind              store.Kind
	restoreType       string // restorehistory.restore_type: D or L
	recovery, replace bool
	uid               int64 // the backup set's, fleet-wide
	family            string
	backupStart       time.Time
}

func (f *fleet) series() int { return f.instances * f.databases }

func (f *fleet) instanceName(i int) string { return fmt.Sprintf("BENCH-SQL%04d", i) }

func (f *fleet) offset(i int) int { return []int{-300, 60, 0, 330}[i%4] }

// each calls fn for every restore of instance i, oldest first within a
// series, series by series.
func (f *fleet) each(i int, fn func(*restore) error) error {
	if f.estate() {
		return f.estateEach(i, 0, f.days-1, fn)
	}
	per, extra := f.restores/f.series(), f.restores%f.series()
	for d := range f.databases {
		s := i*f.databases + d
		n := per
		if s < extra {
			n++
		}
		rng := rand.New(rand.NewPCG(f.seed, uint64(s)))
		size := math.Exp(20 + rng.Float64()*6) // 0.5 GB … 200 GB
		speed := 40 + rng.Float64()*360        // MiB/s
		regressed := s%20 == 7 && n >= 10      // one series in twenty
		change := n * 6 / 10                   // first slow restore
		hour := time.Duration(rng.IntN(20)) * time.Hour
		name := fmt.Sprintf("App%02d_%s", d, []string{"Sales", "Ledger", "Stock", "CRM", "Audit"}[d%5])
		src := fmt.Sprintf("PROD-SQL%04d", i)
		for k := range n {
			r := &restore{instance: f.instanceName(i), database: name, offset: f.offset(i), srcServer: src,
				srcMajor: 15, srcBuild: 4236, kind: store.KindFull, restoreType: "D", recovery: true, replace: true}
			r.histID = int64(s)*100_000 + int64(k) + 1
			r.uid, r.family = r.histID, uuid(r.histID>>20, 2)
			v := speed * (0.85 + 0.3*rng.Float64())
			if regressed && k >= change {
				v *= 0.4
				r.srcMajor, r.srcBuild = 16, 4135
			}
			r.bytes = int64(size*(1+0.002*float64(k))) &^ 8191
			r.compressed = r.bytes * 3 / 10
			r.seconds = math.Round(float64(r.bytes)/(1<<20)/v*1000) / 1000
			day := f.end.AddDate(0, 0, k-n+1)
			r.start = day.Add(hour + time.Duration(rng.IntN(3600))*time.Second)
			r.end = r.start.Add(time.Duration(r.seconds * float64(time.Second))).Truncate(10 * time.Millisecond)
			r.backupStart = r.start.Add(-6 * time.Hour)
			lsn := int64(1000+k)*1_000_000_000_000_000 + int64(d+1)*100_000
			r.firstLSN = strconv.FormatInt(lsn+1, 10)
			r.lastLSN = strconv.FormatInt(lsn+50_001, 10)
			r.device = fmt.Sprintf(`\\nas%02d\sql\%s\%s_%d.bak`, i%7, name, name, k)
			if err := fn(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// history is the restore's msdb row.
func (r *restore) history() store.HistoryRow {
	yes, no := true, false
	one, disk := int64(1), int64(2)
	bstart := r.backupStart
	bfinish := bstart.Add(20 * time.Minute)
	user := `CORP\svc_restore`
	if r.kind == store.KindLog {
		bfinish, user = bstart.Add(time.Minute), `CORP\svc_logship`
	}
	minor := int64(0)
	replace, recovery := r.replace, r.recovery
	return store.HistoryRow{Instance: r.instance, RestoreHistoryID: r.histID, RestoreDate: r.start.Truncate(time.Second),
		Database: r.database, UserName: user, RestoreType: r.restoreType, Replace: &replace, Recovery: &recovery,
		DeviceCount: &one, BackupSetUUID: uuid(r.uid, 1), FamilyGUID: r.family, SourceServer: r.srcServer,
		SourceMachine: r.srcServer, SourceDatabase: r.database, BackupType: r.restoreType, BackupStart: &bstart, BackupFinish: &bfinish,
		FirstLSN: r.firstLSN, LastLSN: r.lastLSN, BackupSize: &r.bytes, CompressedSize: &r.compressed,
		SoftwareMajor: &r.srcMajor, SoftwareMinor: &minor, SoftwareBuild: &r.srcBuild, IsCopyOnly: &no, HasChecksums: &yes,
		MediaFamilies: &one, DeviceType: &disk, Devices: []string{r.device},
		Origin: store.Origin{Source: "history", File: "bench-history.csv"}}
}

// logRestore is the restore's error-log completion line with its 3014 line.
func (r *restore) logRestore() store.LogRestore {
	off := r.offset
	pages := r.bytes / 8192
	msg, stmt := 18267, "RESTORE DATABASE"
	if r.kind == store.KindLog {
		msg, stmt = 18268, "RESTORE LOG"
	}
	return store.LogRestore{Instance: r.instance, Database: r.database, Kind: r.kind, MessageID: msg,
		CompletedAt: r.end, UTCOffset: &off, FirstLSN: r.firstLSN, LastLSN: r.lastLSN, DeviceCount: 1, DeviceType: "DISK",
		Devices: []string{r.device}, Has3014: true, Statement: stmt, Pages: pages, Seconds: r.seconds,
		MBps:   math.Round(float64(pages)*8192/(1<<20)/r.seconds*1000) / 1000,
		Origin: store.Origin{Source: "errorlog", File: "ERRORLOG"}}
}

// host is the instance's startup banner, a day before its first restore.
func (f *fleet) host(i int) store.HostSnapshot {
	off := f.offset(i)
	cores, mem := int64(8+8*(i%4)), int64(65536)
	ifi := i%3 != 0
	return store.HostSnapshot{Instance: f.instanceName(i), ObservedAt: f.end.AddDate(0, 0, -f.restores/f.series()-2),
		UTCOffset: &off, Version: "15.0.4236.7", Level: "RTM", UpdateLevel: "CU16", UpdateRef: "KB5014353",
		Edition: "Enterprise Edition (64-bit)", OS: "Windows Server 2019 Datacenter 10.0", Cores: &cores, MemoryMB: &mem,
		IFI: &ifi, Origin: store.Origin{Source: "errorlog", File: "ERRORLOG"}}
}

func uuid(n int64, salt uint64) string {
	r := rand.New(rand.NewPCG(uint64(n), salt))
	return fmt.Sprintf("%08X-%04X-%04X-%04X-%012X", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff)
}
