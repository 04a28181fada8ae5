// Command fleet makes the synthetic fleets of the import and analysis
// benchmarks (BENCHMARKS.md, SCALE.md) and times the analysis alone.
//
//	fleet csv     -o FILE [-rows 1000000] [-instances 400] [-databases 50]
//	    writes a restore-history CSV in the SPEC §3.3 format (the export
//	    query's columns, as sqlcmd/SSMS save them) for `restorewatch import history`.
//	fleet build   -db FILE [-restores 1000000] [-instances 400] [-databases 50] [-cpuprofile FILE]
//	    fills a new warehouse with the same fleet through store's import API
//	    (sqlite.DB.NewImport: the batching, validation and reconciliation every
//	    importer uses; only file parsing is skipped): per instance a host
//	    snapshot, and per restore its msdb history row and its error-log
//	    completion line with the 3014 seconds, so every restore has an
//	    engine-measured duration and the analysis has real work to do. All
//	    facts are imported first, in instance order, and derived once at the
//	    end (store's Reconcile, which drops and rebuilds the restore indexes
//	    for a bulk derivation), as one `restorewatch import` run of many files.
//	fleet day     -o DIR -shape estate [shape flags]
//	    writes the estate's next day (the day after -end) as files the real
//	    CLI imports: DIR/history.csv (`restorewatch import history`) and
//	    DIR/<instance>/ERRORLOG, UTF-16LE as on Windows (`restorewatch import
//	    errorlog --instance-from-dir DIR`).
//	fleet backups -db FILE -shape estate [-sources 100] [shape flags]
//	    adds to an estate warehouse the msdb backup history of the source
//	    servers of its first N instances (backups.go): what restore plans and
//	    the overview's projections read.
//	fleet analyze -db FILE [-cpuprofile FILE]
//	    runs analysis.Run over every instance, as `restorewatch analyze` does
//	    after reconciling, and prints its time and the Go heap's peak.
//
// The default shape is instances × databases series of full restores, one a
// day; one series in twenty slows to 0.4× when its backups start coming from
// a newer source build (see fleet.go). -shape estate is the 10 M estate of
// issue 16: 10,000 instances over 90 days, 400 of them log-shipping
// secondaries restoring 5 databases' logs every 30 minutes (estate.go); its
// flags are -days, -logship, -logdbs, -every and -end. The same flags write
// the same data.
package main

import (
	"bufio"
	"context"
	encsv "encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/restorewatch/restorewatch/ingest/csv"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "fleet: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: fleet csv|build|day|backups|analyze [flags] (see the package comment)")
	}
	fs := flag.NewFlagSet("fleet "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &fleet{end: time.Date(2025, 6, 30, 0, 0, 0, 0, time.UTC)}
	var out, db, prof, end string
	var sources int
	fs.IntVar(&f.instances, "instances", 400, "instances (estate: 10000)")
	fs.IntVar(&f.databases, "databases", 50, "databases per instance (one series of full restores each; not for estate)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed")
	fs.StringVar(&f.shape, "shape", "daily", "daily (instances × databases daily full restores) or estate (issue 16's 10 M estate)")
	fs.IntVar(&f.days, "days", estateDays, "estate: days, ending at -end")
	fs.IntVar(&f.logship, "logship", estateLogShip, "estate: log-shipping secondaries among the instances")
	fs.IntVar(&f.logDBs, "logdbs", estateLogDBs, "estate: log-shipped databases per secondary")
	fs.IntVar(&f.every, "every", estateEvery, "estate: minutes between log restores (a divisor of 1440)")
	fs.StringVar(&end, "end", "2025-06-30", "estate: the last day built (YYYY-MM-DD)")
	switch args[0] {
	case "csv":
		fs.IntVar(&f.restores, "rows", 1_000_000, "rows")
		fs.StringVar(&out, "o", "", "CSV file to write")
	case "build":
		fs.IntVar(&f.restores, "restores", 1_000_000, "restores (not for estate)")
		fs.StringVar(&db, "db", "", "warehouse to create")
		fs.StringVar(&prof, "cpuprofile", "", "write a CPU profile of the build")
	case "day":
		fs.StringVar(&out, "o", "", "directory to write the next day's files into")
	case "analyze":
		fs.StringVar(&db, "db", "", "warehouse")
		fs.StringVar(&prof, "cpuprofile", "", "write a CPU profile of the analysis")
	case "backups":
		fs.StringVar(&db, "db", "", "estate warehouse to add the backup history to")
		fs.IntVar(&sources, "sources", 100, "source servers whose backup history to write (those of the first N instances)")
	default:
		return fmt.Errorf("unknown command %q: want csv, build, day, backups or analyze", args[0])
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if err := f.settle(fs, end); err != nil {
		return err
	}
	if args[0] == "day" && !f.estate() {
		return errors.New("day: only the estate shape has a next day (-shape estate)")
	}
	switch args[0] {
	case "csv":
		if out == "" {
			return errors.New("csv: -o FILE is required")
		}
		return writeCSV(f, out, stdout)
	case "build":
		if db == "" {
			return errors.New("build: -db FILE is required")
		}
		stop, err := cpuProfile(prof)
		if err != nil {
			return err
		}
		defer stop()
		return build(ctx, f, db, stdout, stderr)
	case "day":
		if out == "" {
			return errors.New("day: -o DIR is required")
		}
		return writeDay(ctx, f, out, stdout)
	case "backups":
		if db == "" {
			return errors.New("backups: -db FILE is required")
		}
		return backups(ctx, f, db, sources, stdout)
	default:
		if db == "" {
			return errors.New("analyze: -db FILE is required")
		}
		return analyze(ctx, db, prof, stdout)
	}
}

// writeCSV writes the fleet's history as the export query's CSV.
func writeCSV(f *fleet, path string, stdout io.Writer) error {
	start := time.Now()
	h, err := newHistoryCSV(path)
	if err != nil {
		return err
	}
	defer h.file.Close()
	n := 0
	for i := range f.instances {
		err := f.each(i, func(r *restore) error {
			n++
			return h.write(r)
		})
		if err != nil {
			return err
		}
	}
	if _, err := h.close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "fleet: wrote %d rows for %d instances to %s in %.1f s\n",
		n, f.instances, path, time.Since(start).Seconds())
	return nil
}

// historyCSV writes restores' msdb rows as the export query's CSV.
type historyCSV struct {
	file *os.File
	b    *bufio.Writer
	w    *encsv.Writer
	cols []string
	row  []string
}

func newHistoryCSV(path string) (*historyCSV, error) {
	file, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	h := &historyCSV{file: file, b: bufio.NewWriterSize(file, 1<<20), cols: csv.Columns()}
	h.w = encsv.NewWriter(h.b)
	h.w.UseCRLF = true
	h.row = make([]string, len(h.cols))
	if err := h.w.Write(h.cols); err != nil {
		file.Close()
		return nil, err
	}
	return h, nil
}

func (h *historyCSV) write(r *restore) error {
	row := r.history()
	for c, name := range h.cols {
		h.row[c] = field(&row, name)
	}
	return h.w.Write(h.row)
}

// close flushes and closes the file and returns its size.
func (h *historyCSV) close() (int64, error) {
	h.w.Flush()
	if err := h.w.Error(); err != nil {
		return 0, err
	}
	if err := h.b.Flush(); err != nil {
		return 0, err
	}
	st, err := h.file.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), h.file.Close()
}

// field renders one column of the export query's CSV: dates as
// YYYY-MM-DD HH:MM:SS.fff local time, bits 0/1, NULL as an empty field,
// devices '|'-separated.
func field(h *store.HistoryRow, col string) string {
	date := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.Format("2006-01-02 15:04:05.000")
	}
	num := func(v *int64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatInt(*v, 10)
	}
	bit := func(v *bool) string {
		switch {
		case v == nil:
			return ""
		case *v:
			return "1"
		}
		return "0"
	}
	switch col {
	case "instance":
		return h.Instance
	case "restore_history_id":
		return strconv.FormatInt(h.RestoreHistoryID, 10)
	case "restore_date":
		return date(&h.RestoreDate)
	case "destination_database_name":
		return h.Database
	case "user_name":
		return h.UserName
	case "restore_type":
		return h.RestoreType
	case "replace":
		return bit(h.Replace)
	case "recovery":
		return bit(h.Recovery)
	case "stop_at":
		return date(h.StopAt)
	case "device_count":
		return num(h.DeviceCount)
	case "backup_set_uuid":
		return h.BackupSetUUID
	case "family_guid":
		return h.FamilyGUID
	case "source_server_name":
		return h.SourceServer
	case "source_machine_name":
		return h.SourceMachine
	case "source_database_name":
		return h.SourceDatabase
	case "backup_type":
		return h.BackupType
	case "backup_start_date":
		return date(h.BackupStart)
	case "backup_finish_date":
		return date(h.BackupFinish)
	case "first_lsn":
		return h.FirstLSN
	case "last_lsn":
		return h.LastLSN
	case "backup_size":
		return num(h.BackupSize)
	case "compressed_backup_size":
		return num(h.CompressedSize)
	case "software_major_version":
		return num(h.SoftwareMajor)
	case "software_minor_version":
		return num(h.SoftwareMinor)
	case "software_build_version":
		return num(h.SoftwareBuild)
	case "is_copy_only":
		return bit(h.IsCopyOnly)
	case "has_backup_checksums":
		return bit(h.HasChecksums)
	case "key_algorithm":
		return h.KeyAlgorithm
	case "media_family_count":
		return num(h.MediaFamilies)
	case "device_type":
		return num(h.DeviceType)
	case "physical_device_names":
		return strings.Join(h.Devices, "|")
	}
	return ""
}

// build fills a new warehouse: every instance's facts first, in instance
// order, then one reconciliation of them all.
//
// It used to import and reconcile one instance at a time, and each
// restore added cost more as the warehouse grew (docs/scale-log.md): every
// small reconciliation inserted its restores
// into the restore table's secondary indexes, ordered by time, measure,
// build, source or database across the fleet, so each row landed on a
// random page of each index, and those indexes soon outgrew the writer's
// cache. One reconciliation at the end is large enough for the store to
// drop those indexes and sort them once (store/bulk.go), as the CLI does
// for a run of many files.
func build(ctx context.Context, f *fleet, path string, stdout, stderr io.Writer) error {
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("build: %s exists; choose a new file", path)
	}
	start := time.Now()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	var added, read, restores int64
	// One import per chunk of instances: each commits its batches as it
	// goes (store.BatchSize records a transaction) and records its run.
	const chunk = 100
	var im store.Import
	commit := func() error {
		if im == nil {
			return nil
		}
		sum, err := im.Commit()
		im = nil
		if err != nil {
			return err
		}
		if len(sum.Rejects) > 0 {
			return fmt.Errorf("build: %d rejects, first %s", len(sum.Rejects), sum.Rejects[0])
		}
		added += sum.Added
		read += sum.Read
		return nil
	}
	last, lastRestores := start, int64(0)
	for i := range f.instances {
		if im == nil {
			if im, err = db.NewImport(ctx, "bench", fmt.Sprintf("fleet/%s…", f.instanceName(i))); err != nil {
				return err
			}
		}
		host := f.host(i)
		if f.estate() {
			if host, err = f.bannerHost(ctx, i, 0); err != nil {
				return err
			}
		}
		err = im.Host(host)
		if err == nil {
			err = f.each(i, func(r *restore) error {
				restores++
				if err := im.History(r.history()); err != nil {
					return err
				}
				return im.LogRestore(r.logRestore())
			})
		}
		if err != nil {
			_, cerr := im.Commit()
			return errors.Join(err, cerr)
		}
		if (i+1)%chunk == 0 || i+1 == f.instances {
			if err := commit(); err != nil {
				return err
			}
			if now := time.Now(); now.Sub(last) >= 10*time.Second || i+1 == f.instances {
				el := now.Sub(start).Seconds()
				fmt.Fprintf(stderr, "fleet: %.0f s: facts of %d/%d instances, %d restores (%.0f restores/s, %.0f since the last line)\n",
					el, i+1, f.instances, restores, float64(restores)/el, float64(restores-lastRestores)/now.Sub(last).Seconds())
				last, lastRestores = now, restores
			}
		}
	}
	imported := time.Since(start)
	fmt.Fprintf(stderr, "fleet: %.0f s: %d facts imported (%d records added); deriving\n", imported.Seconds(), read, added)
	var mu sync.Mutex
	var lastReport time.Time
	db.SetProgress(func(p store.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); now.Sub(lastReport) >= 10*time.Second || p.Done == p.Total {
			lastReport = now
			fmt.Fprintf(stderr, "fleet: %.0f s: %s %d/%d\n", now.Sub(start).Seconds(), p.Phase, p.Done, p.Total)
		}
	})
	if err := db.Reconcile(ctx); err != nil {
		return err
	}
	db.SetProgress(nil)
	p, err := db.Restores(ctx, store.RestoreQuery{Filter: store.RestoreFilter{Limit: 1}})
	if err != nil {
		return err
	}
	took := time.Since(start)
	fmt.Fprintf(stdout, "fleet: built %s: %d records added, %d restores on %d instances, in %.1f s (facts %.1f s, derivation %.1f s): %.0f restores/s\n",
		path, added, p.Total, f.instances, took.Seconds(), imported.Seconds(), (took - imported).Seconds(), float64(p.Total)/took.Seconds())
	if int64(p.Total) != restores {
		return fmt.Errorf("build: %d restores derived from %d generated", p.Total, restores)
	}
	return nil
}

// analyze times analysis.Run alone, with the Go heap's peak sampled every 50 ms.
func analyze(ctx context.Context, path, prof string, stdout io.Writer) error {
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	stopProfile, err := cpuProfile(prof)
	if err != nil {
		return err
	}
	defer stopProfile()
	stop := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var top uint64
		var ms runtime.MemStats
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			top = max(top, ms.HeapInuse)
			select {
			case <-stop:
				peak <- top
				return
			case <-t.C:
			}
		}
	}()
	start := time.Now()
	st, err := analysis.Run(ctx, db, nil, analysis.Options{})
	took := time.Since(start)
	close(stop)
	heap := <-peak
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "analysis.Run: %d restores in %d series on %d instances: %d regressions, %d improvements in %.2f s; Go heap in use peaked at %d MiB\n",
		st.Restores, st.Series, st.Instances, st.Regressions, st.Improvements, took.Seconds(), heap>>20)
	return nil
}

// cpuProfile starts a CPU profile into path ("": none) and returns what
// stops it.
func cpuProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	pf, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(pf); err != nil {
		pf.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		pf.Close()
	}, nil
}
