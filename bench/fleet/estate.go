package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/restorewatch/restorewatch/ingest/errorlog"
	"github.com/restorewatch/restorewatch/store"
)

// The estate shape (-shape estate) is a whole estate's restores over days
// ending at f.end: every instance restores one or two databases in full
// each day (test restores), and a few instances are log-shipping
// secondaries, whose databases restore a log backup every f.every minutes
// WITH NORECOVERY after one full restore at the start of their chain. Its
// defaults are the 10 M fleet of issue 16: 10,000 instances over 90 days,
// 400 secondaries × 5 databases restoring a log every 30 minutes — 8.64 M
// log restores and 1.35 M full ones.
//
// Every restore is a function of (seed, instance, series, day), with days
// counted from the first day: building N+1 days gives the same restores as
// building N days and importing day N+1 (fleet day), to the byte.
const (
	estateInstances = 10000
	estateDays      = 90
	estateLogShip   = 400
	estateLogDBs    = 5
	estateEvery     = 30
	// regressDay is the first day a regressing series is slow (60 % of the
	// default 90 days).
	regressDay = 54
)

// estate reports whether f has the estate shape.
func (f *fleet) estate() bool { return f.shape == "estate" }

// start is local midnight of the estate's first day.
func (f *fleet) start() time.Time { return f.end.AddDate(0, 0, -(f.days - 1)) }

// secondary reports whether instance i is a log-shipping secondary: the
// f.logship secondaries are spread evenly over the instances.
func (f *fleet) secondary(i int) bool {
	if f.logship <= 0 {
		return false
	}
	step := max(f.instances/f.logship, 1)
	return i%step == 0 && i/step < f.logship
}

// fullDBs is how many databases instance i test-restores in full each day.
func fullDBs(i int) int { return 1 + i%2 }

// regresses reports whether the full restores of instance i's database k
// slow down from regressDay on: one series in twenty, counted in instance
// order (instance i's first series is the (i + i/2)th).
func (f *fleet) regresses(i, k int) bool { return (i+i/2+k)%20 == 7 }

// slows reports whether the log restores of secondary i's chain c slow
// down from regressDay on: one chain in twenty.
func (f *fleet) slows(i, c int) bool {
	step := max(f.instances/max(f.logship, 1), 1)
	return (i/step*f.logDBs+c)%20 == 3
}

var dbNames = []string{"Sales", "Ledger", "Stock", "CRM", "Audit"}

// lsn is msdb's numeric LSN of the log position (vlf, block, slot).
func lsn(vlf, block, slot int64) string {
	return fmt.Sprintf("%d%010d%05d", vlf, block, slot)
}

// chainLSN is the position at the start of log backup s of chain ch: log s
// covers chainLSN(ch, s) to chainLSN(ch, s+1).
func chainLSN(ch uint64, s int) string { return lsn(chainVLF(ch, s), chainBlock(s), 1) }

func chainVLF(ch uint64, s int) int64 { return 1000 + int64(ch%1000)*100_000 + int64(s) }

func chainBlock(s int) int64 { return int64(16 + (s*7919)%9000) }

// dayRand is the random source of one series on one day.
func (f *fleet) dayRand(series uint64, day int) *rand.Rand {
	return rand.New(rand.NewPCG(f.seed+uint64(day+1)*0x9E3779B97F4A7C15, series))
}

// estateEach calls fn for every restore of instance i on days from … to
// (counted from the first day, inclusive), in the order the instance ran
// them, with msdb's restore_history_id increasing in that order.
func (f *fleet) estateEach(i, from, to int, fn func(*restore) error) error {
	var day []*restore
	for d := from; d <= to; d++ {
		day = f.estateDay(i, d, day[:0])
		for _, r := range day {
			if err := fn(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// estateDay appends the restores instance i started on day d, oldest first.
func (f *fleet) estateDay(i, d int, out []*restore) []*restore {
	midnight := f.start().AddDate(0, 0, d)
	inst, src := f.instanceName(i), fmt.Sprintf("PROD-SQL%04d", i)
	for k := range fullDBs(i) {
		s := uint64(i)*4 + uint64(k) // full series, fleet-wide
		rs := rand.New(rand.NewPCG(f.seed, s))
		size := math.Exp(20 + rs.Float64()*6) // 0.5 GB … 200 GB
		speed := 40 + rs.Float64()*360        // MiB/s
		hour := time.Duration(rs.IntN(20)) * time.Hour
		name := fmt.Sprintf("App%02d_%s", k, dbNames[(i+k)%5])
		rng := f.dayRand(s, d)
		r := &restore{instance: inst, database: name, offset: f.offset(i), srcServer: src, srcMajor: 15, srcBuild: 4236,
			kind: store.KindFull, restoreType: "D", recovery: true, replace: true, family: uuid(int64(s), 2)}
		v := speed * (0.85 + 0.3*rng.Float64())
		if f.regresses(i, k) && d >= regressDay {
			v *= 0.4
			r.srcMajor, r.srcBuild = 16, 4135
		}
		r.bytes = int64(size*(1+0.002*float64(d))) &^ 8191
		r.compressed = r.bytes * 3 / 10
		r.seconds = math.Round(float64(r.bytes)/(1<<20)/v*1000) / 1000
		r.start = midnight.Add(hour + time.Duration(rng.IntN(3600))*time.Second)
		r.backupStart = r.start.Add(-6 * time.Hour)
		vlf := int64(5000 + d*100)
		r.firstLSN, r.lastLSN = lsn(vlf, 1, 1), lsn(vlf, 50001, 1)
		r.device = fmt.Sprintf(`\\nas%02d\sql\%s\%s\%s_FULL_%s.bak`, i%7, src, name, name, r.backupStart.Format("20060102_150405"))
		out = append(out, r)
	}
	if f.secondary(i) {
		perDay := 1440 / f.every
		for c := range f.logDBs {
			ch := uint64(i)*64 + uint64(c) // chain, fleet-wide
			rs := rand.New(rand.NewPCG(f.seed^0x5EC0, ch))
			m0 := time.Duration(rs.IntN(f.every)) * time.Minute
			dbSize := math.Exp(21 + rs.Float64()*4)  // 1.3 GB … 72 GB
			logSize := math.Exp(15 + rs.Float64()*5) // 3 MB … 490 MB
			speed := 60 + rs.Float64()*340
			name := fmt.Sprintf("LS%02d_%s", c, dbNames[c%5])
			slow := f.slows(i, c) && d >= regressDay
			rng := f.dayRand(ch|1<<40, d)
			for j := range perDay {
				slot := d*perDay + j
				r := &restore{instance: inst, database: name, offset: f.offset(i), srcServer: src, srcMajor: 15,
					srcBuild: 4236, family: uuid(int64(ch), 3)}
				r.start = midnight.Add(m0 + time.Duration(j*f.every)*time.Minute + time.Duration(rng.IntN(60))*time.Second)
				v := speed * (0.8 + 0.4*rng.Float64())
				if slot == 0 {
					// The chain starts with the full backup, restored WITH
					// NORECOVERY so the logs can follow.
					r.kind, r.restoreType, r.replace = store.KindFull, "D", true
					r.bytes = int64(dbSize) &^ 8191
					r.firstLSN, r.lastLSN = chainLSN(ch, 0), lsn(chainVLF(ch, 1), chainBlock(1)+20, 1)
					r.backupStart = r.start.Add(-2 * time.Hour)
					r.device = fmt.Sprintf(`\\nas%02d\logship\%s\%s\%s_FULL.bak`, i%7, src, name, name)
				} else {
					r.kind, r.restoreType = store.KindLog, "L"
					r.bytes = int64(logSize*(0.5+rng.Float64())) &^ 8191
					r.firstLSN, r.lastLSN = chainLSN(ch, slot), chainLSN(ch, slot+1)
					r.backupStart = r.start.Add(-15 * time.Minute)
					r.device = fmt.Sprintf(`\\nas%02d\logship\%s\%s\%s_%s.trn`, i%7, src, name, name,
						r.backupStart.Add(-time.Duration(f.offset(i))*time.Minute).Format("20060102150405"))
				}
				if slow {
					v *= 0.45
					r.srcMajor, r.srcBuild = 16, 4135
				}
				r.bytes = max(r.bytes, 8192)
				r.compressed = r.bytes * 3 / 10
				r.seconds = math.Round((float64(r.bytes)/(1<<20)/v+0.2)*1000) / 1000
				out = append(out, r)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b *restore) int { return a.start.Compare(b.start) })
	for k, r := range out {
		r.histID = int64(d+1)*10_000 + int64(k) + 1
		r.uid = int64(i)<<32 | r.histID
		r.end = r.start.Add(time.Duration(r.seconds * float64(time.Second))).Truncate(10 * time.Millisecond)
	}
	return out
}

// banner is the start of instance i's error log when it was cycled at
// local midnight of day d (sp_cycle_errorlog: the session that cycled it
// is the source), in the formats of the reference's §2.6 and §4.8.
func (f *fleet) banner(i, d int) []logLine {
	at := f.start().AddDate(0, 0, d)
	off := f.offset(i)
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	src := "spid52"
	return []logLine{
		{at, src, "Microsoft SQL Server 2019 (RTM-CU16) (KB5014353) - 15.0.4236.7 (X64) \n\tMay 29 2022 15:55:47 \n\tCopyright (C) 2019 Microsoft Corporation\n\tEnterprise Edition (64-bit) on Windows Server 2019 Datacenter 10.0 <X64> (Build 17763: ) (Hypervisor)\n"},
		{at, src, fmt.Sprintf("UTC adjustment: %s%d:%02d", sign, off/60, off%60)},
	}
}

// bannerHost is the host snapshot the error-log reader takes from
// f.banner(i, d): the build reads the same lines so that a day imported
// from files and a day built directly agree.
func (f *fleet) bannerHost(ctx context.Context, i, d int) (store.HostSnapshot, error) {
	var b bytes.Buffer
	for _, l := range f.banner(i, d) {
		l.write(&b)
	}
	var c store.Collect
	if _, err := errorlog.Parse(ctx, &b, errorlog.Options{File: "ERRORLOG", Instance: f.instanceName(i)}, &c); err != nil {
		return store.HostSnapshot{}, err
	}
	if len(c.Hosts) != 1 || len(c.Rejects) > 0 {
		return store.HostSnapshot{}, fmt.Errorf("banner of %s: %d snapshots, rejects %v", f.instanceName(i), len(c.Hosts), c.Rejects)
	}
	return c.Hosts[0], nil
}

// logLine is one error-log entry; text may hold continuation lines.
type logLine struct {
	at     time.Time
	source string
	text   string
}

func (l logLine) write(b *bytes.Buffer) {
	fmt.Fprintf(b, "%s %-12s%s\n", l.at.Format("2006-01-02 15:04:05.00"), l.source, l.text)
}

// logLines are the error-log entries of the restore: the engine's
// completion message (18267 for a database, 18268 for a log) and the 3014
// line, with the 4356 line before a restore WITH RECOVERY and the "marked
// RESTORING" line before a full restore WITH NORECOVERY (reference §2.4,
// §4.6, §4.7).
func (r *restore) logLines() []logLine {
	first, _ := store.LSNToLog(r.firstLSN)
	last, _ := store.LSNToLog(r.lastLSN)
	created := "2024/01/15(10:00:00)"
	dev := fmt.Sprintf("(FILE=1, TYPE=DISK: {'%s'})", r.device)
	lr := r.logRestore()
	var out []logLine
	var msg string
	if r.kind == store.KindLog {
		msg = fmt.Sprintf("Log was restored. Database: %s, creation date(time): %s, first LSN: %s, last LSN: %s, number of dump devices: 1, device information: %s. This is an informational message. No user action is required.",
			r.database, created, first, last, dev)
	} else {
		if r.recovery {
			out = append(out, logLine{r.end, "Backup", fmt.Sprintf("Restore is complete on database '%s'.  The database is now available.", r.database)})
		} else {
			out = append(out, logLine{r.end.Add(-40 * time.Millisecond), "spid63", fmt.Sprintf("The database '%s' is marked RESTORING and is in a state that does not allow recovery to be run.", r.database)})
		}
		msg = fmt.Sprintf("Database was restored: Database: %s, creation date(time): %s, first LSN: %s, last LSN: %s, number of dump devices: 1, device information: %s. Informational message. No user action required.",
			r.database, created, first, last, dev)
	}
	out = append(out, logLine{r.end, "Backup", msg},
		logLine{r.end.Add(20 * time.Millisecond), "Backup", fmt.Sprintf("%s successfully processed %d pages in %.3f seconds (%.3f MB/sec).",
			lr.Statement, lr.Pages, lr.Seconds, lr.MBps)})
	return out
}

// utf16le encodes ASCII text as UTF-16LE with a byte-order mark and CRLF
// line ends, as SQL Server writes ERRORLOG on Windows (reference §2.1).
func utf16le(text []byte) []byte {
	out := make([]byte, 0, 2+2*len(text)+len(text)/32)
	out = append(out, 0xFF, 0xFE)
	for _, c := range text {
		if c == '\n' {
			out = append(out, '\r', 0)
		}
		out = append(out, c, 0)
	}
	return out
}

// dayLabel names day d for messages.
func (f *fleet) dayLabel(d int) string { return f.start().AddDate(0, 0, d).Format("2006-01-02") }

// settle checks the flags and gives the estate shape its defaults where no
// flag was given.
func (f *fleet) settle(fs *flag.FlagSet, end string) error {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if !f.estate() {
		if f.shape != "daily" {
			return fmt.Errorf("-shape %q: want daily or estate", f.shape)
		}
		for _, name := range []string{"days", "logship", "logdbs", "every", "end"} {
			if set[name] {
				return fmt.Errorf("-%s is a flag of -shape estate", name)
			}
		}
		if fs.Name() != "fleet analyze" && (f.instances < 1 || f.databases < 1 || f.restores < f.series()) {
			return errors.New("need at least one instance, one database and one restore per series")
		}
		return nil
	}
	for _, name := range []string{"databases", "restores", "rows"} {
		if set[name] {
			return fmt.Errorf("-%s is not a flag of -shape estate (it has -days, -logship, -logdbs, -every)", name)
		}
	}
	if !set["instances"] {
		f.instances = estateInstances
	}
	t, err := time.Parse("2006-01-02", end)
	if err != nil {
		return fmt.Errorf("-end %q: want YYYY-MM-DD", end)
	}
	f.end = t
	switch {
	case f.instances < 1 || f.days < 1:
		return errors.New("need at least one instance and one day")
	case f.logship < 0 || f.logship > f.instances:
		return fmt.Errorf("-logship %d: between 0 and the %d instances", f.logship, f.instances)
	case f.logDBs < 1 || f.logDBs > 64:
		return fmt.Errorf("-logdbs %d: between 1 and 64", f.logDBs)
	case f.every < 1 || 1440%f.every != 0:
		return fmt.Errorf("-every %d: minutes that divide a day", f.every)
	}
	return nil
}

// writeDay writes the estate's next day, the day after f.end, as files the
// CLI imports: DIR/history.csv and DIR/<instance>/ERRORLOG.
func writeDay(ctx context.Context, f *fleet, dir string, stdout io.Writer) error {
	start := time.Now()
	d := f.days
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	hist, err := newHistoryCSV(filepath.Join(dir, "history.csv"))
	if err != nil {
		return err
	}
	defer hist.file.Close()
	var restores, logBytes int64
	var day []*restore
	var text bytes.Buffer
	var lines []logLine
	for i := range f.instances {
		day = f.estateDay(i, d, day[:0])
		lines = append(lines[:0], f.banner(i, d)...)
		for _, r := range day {
			if err := hist.write(r); err != nil {
				return err
			}
			lines = append(lines, r.logLines()...)
		}
		restores += int64(len(day))
		slices.SortStableFunc(lines, func(a, b logLine) int { return a.at.Compare(b.at) })
		text.Reset()
		for _, l := range lines {
			l.write(&text)
		}
		idir := filepath.Join(dir, f.instanceName(i))
		if err := os.MkdirAll(idir, 0o755); err != nil {
			return err
		}
		b := utf16le(text.Bytes())
		logBytes += int64(len(b))
		if err := os.WriteFile(filepath.Join(idir, "ERRORLOG"), b, 0o644); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	size, err := hist.close()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "fleet: day %s (day %d): %d restores on %d instances; %s/history.csv %d bytes, %d ERRORLOG files %d bytes, in %.1f s\n",
		f.dayLabel(d), d+1, restores, f.instances, dir, size, f.instances, logBytes, time.Since(start).Seconds())
	return nil
}
