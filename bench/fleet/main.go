// Command fleet makes the synthetic fleets of the import and analysis
// benchmarks (BENCHMARKS.md) and times the analysis alone.
//
//	fleet csv     -o FILE [-rows 1000000] [-instances 400] [-databases 50]
//	    writes a restore-history CSV in the SPEC §3.3 format (the export
//	    query's columns, as sqlcmd/SSMS save them) for `restorewatch import history`.
//	fleet build   -db FILE [-restores 1000000] [-instances 400] [-databases 50]
//	    fills a new warehouse with the same fleet through store's import API
//	    (store.DB.NewImport: the batching, validation and reconciliation every
//	    importer uses; only file parsing is skipped): per instance a host
//	    snapshot, and per restore its msdb history row and its error-log
//	    completion line with the 3014 seconds, so every restore has an
//	    engine-measured duration and the analysis has real work to do.
//	fleet analyze -db FILE [-cpuprofile FILE]
//	    runs analysis.Run over every instance, as `restorewatch analyze` does
//	    after reconciling, and prints its time and the Go heap's peak.
//
// The fleet is instances × databases series of full restores, one a day;
// one series in twenty slows to 0.4× when its backups start coming from a
// newer source build (see fleet.go). The same flags write the same data.
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
	"time"

	"github.com/restorewatch/restorewatch/ingest/csv"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "fleet: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: fleet csv|build|analyze [flags] (see the package comment)")
	}
	fs := flag.NewFlagSet("fleet "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &fleet{end: time.Date(2025, 6, 30, 0, 0, 0, 0, time.UTC)}
	var out, db, prof string
	fs.IntVar(&f.instances, "instances", 400, "instances")
	fs.IntVar(&f.databases, "databases", 50, "databases per instance (one series of full restores each)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed")
	switch args[0] {
	case "csv":
		fs.IntVar(&f.restores, "rows", 1_000_000, "rows")
		fs.StringVar(&out, "o", "", "CSV file to write")
	case "build":
		fs.IntVar(&f.restores, "restores", 1_000_000, "restores")
		fs.StringVar(&db, "db", "", "warehouse to create")
	case "analyze":
		fs.StringVar(&db, "db", "", "warehouse")
		fs.StringVar(&prof, "cpuprofile", "", "write a CPU profile of the analysis")
	default:
		return fmt.Errorf("unknown command %q: want csv, build or analyze", args[0])
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if args[0] != "analyze" && (f.instances < 1 || f.databases < 1 || f.restores < f.series()) {
		return errors.New("need at least one instance, one database and one restore per series")
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
		return build(ctx, f, db, stdout, stderr)
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
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	defer file.Close()
	b := bufio.NewWriterSize(file, 1<<20)
	w := encsv.NewWriter(b)
	w.UseCRLF = true
	cols := csv.Columns()
	if err := w.Write(cols); err != nil {
		return err
	}
	row := make([]string, len(cols))
	n := 0
	for i := range f.instances {
		err := f.each(i, func(r *restore) error {
			h := r.history()
			for c, name := range cols {
				row[c] = field(&h, name)
			}
			n++
			return w.Write(row)
		})
		if err != nil {
			return err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	if err := b.Flush(); err != nil {
		return err
	}
	if err := file.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "fleet: wrote %d rows for %d instances × %d databases to %s in %.1f s\n",
		n, f.instances, f.databases, path, time.Since(start).Seconds())
	return nil
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

// build fills a new warehouse, one import per instance.
func build(ctx context.Context, f *fleet, path string, stdout, stderr io.Writer) error {
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("build: %s exists; choose a new file", path)
	}
	start := time.Now()
	db, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	var added int64
	for i := range f.instances {
		im, err := db.NewImport(ctx, "bench", "fleet/"+f.instanceName(i))
		if err != nil {
			return err
		}
		err = im.Host(f.host(i))
		if err == nil {
			err = f.each(i, func(r *restore) error {
				if err := im.History(r.history()); err != nil {
					return err
				}
				return im.LogRestore(r.logRestore())
			})
		}
		sum, cerr := im.CommitAndReconcile()
		if err = errors.Join(err, cerr); err != nil {
			return err
		}
		if len(sum.Rejects) > 0 {
			return fmt.Errorf("build: %s: %d rejects, first %s", f.instanceName(i), len(sum.Rejects), sum.Rejects[0])
		}
		added += sum.Added
		if (i+1)%50 == 0 {
			fmt.Fprintf(stderr, "fleet: %d/%d instances, %.0f s\n", i+1, f.instances, time.Since(start).Seconds())
		}
	}
	p, err := db.Restores(ctx, store.RestoreQuery{Filter: store.RestoreFilter{Limit: 1}})
	if err != nil {
		return err
	}
	n := p.Total
	fmt.Fprintf(stdout, "fleet: built %s: %d records added, %d restores in %d series on %d instances, in %.1f s\n",
		path, added, n, f.series(), f.instances, time.Since(start).Seconds())
	return nil
}

// analyze times analysis.Run alone, with the Go heap's peak sampled every 50 ms.
func analyze(ctx context.Context, path, prof string, stdout io.Writer) error {
	db, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	if prof != "" {
		pf, err := os.Create(prof)
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
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
