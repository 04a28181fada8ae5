package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/ingest/csv"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/human"
	"github.com/restorewatch/restorewatch/store/postgres"
	"github.com/restorewatch/restorewatch/store/sqlite"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// ImportCmd imports offline files (SPEC §3.2): any number of files, folders
// and globs in one run, each file's kind given or detected, derived and
// analysed once at the end.
type ImportCmd struct {
	First           string   `arg:"" name:"kind-or-path" help:"An optional kind (errorlog, history, messages or backups; detected per file when left out), or the first path."`
	Paths           []string `arg:"" optional:"" name:"path" help:"Files, folders (read recursively) and globs."`
	Instance        string   `help:"Instance name for files that do not say it (an error log's own name wins; fills a history CSV's empty instance cells; names captured messages)."`
	InstanceFromDir bool     `name:"instance-from-dir" help:"Name the instance of a file that does not say it after its folder (one folder per server)."`
	Database        string   `help:"Database (messages), when the text does not say it."`
	At              string   `help:"Completion time for messages that lack one (2026-12-03 08:00 in UTC, or RFC 3339)."`
	DateFormat      string   `name:"date-format" help:"Day/month order of culture dates in PowerShell exports: DMY, MDY, YMD or the culture's pattern (dd.MM.yyyy). Inferred from the file when left out."`
	UTCOffset       string   `name:"utc-offset" help:"The instance's UTC offset (e.g. -05:00) when no error log states it."`
	Strict          bool     `help:"Any rejected line makes the import fail."`
	Reread          bool     `help:"Read files again that an earlier import read whole (same content, same options); they are skipped otherwise."`
	DryRun          bool     `name:"dry-run" help:"Parse and report exactly what would be added and rejected; write nothing."`
	Verbose         bool     `short:"v" help:"A summary line per file."`
	Workers         int      `help:"Files parsed at once (0: one per core)." default:"0"`
	AnalysisFlags   `embed:""`
}

// Run implements the command.
func (c *ImportCmd) Run(ctx context.Context, m *Main) error {
	defer derivingGC()()
	kind, paths := ingest.FileKind(""), append([]string{c.First}, c.Paths...)
	if len(paths) > 1 {
		if _, serr := os.Stat(paths[0]); serr != nil && !strings.ContainsAny(paths[0], `*?[/\.`) {
			k, err := ingest.ParseKind(paths[0])
			if err != nil {
				return usageError{fmt.Errorf("%w (or give only paths: kinds are detected)", err)}
			}
			kind, paths = k, paths[1:]
		}
	}
	if len(paths) == 1 && isKindWord(paths[0]) {
		if _, err := os.Stat(paths[0]); err != nil {
			return usageError{fmt.Errorf("import %s: give the files to import", paths[0])}
		}
	}
	at, err := store.ParseTime("--at", c.At)
	if err != nil {
		return usageError{err}
	}
	if c.DateFormat != "" {
		if err := csv.CheckDateFormat(c.DateFormat); err != nil {
			return usageError{err}
		}
	}
	files, err := ingest.ExpandPaths(paths)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return store.Errorf(store.EINVALID, "no files under %s", strings.Join(paths, ", "))
	}
	aopt, err := c.options()
	if err != nil {
		return err
	}
	db, cleanup, err := c.warehouse(ctx, m)
	if err != nil {
		return err
	}
	defer cleanup()
	if c.UTCOffset != "" {
		if c.Instance == "" {
			return usageError{fmt.Errorf("--utc-offset needs --instance")}
		}
		off, err := parseOffset(c.UTCOffset)
		if err != nil {
			return usageError{err}
		}
		if err := db.SetDefaultOffset(ctx, c.Instance, off); err != nil {
			return err
		}
	}

	start := time.Now()
	loader := ingest.NewLoader(db, ingest.LoaderOptions{Analysis: aopt})
	opt := ingest.FilesOptions{Kind: kind, InstanceFromDir: c.InstanceFromDir, Workers: c.Workers, Reread: c.Reread,
		Options: ingest.Options{Instance: c.Instance, Database: c.Database, At: at, DateFormat: c.DateFormat}}
	bar := c.runBar(m, files)
	if bar != nil {
		opt.Progress = bar.update
	}
	run, serr := loader.StoreFiles(ctx, files, opt)
	var phases *phaseBars
	if m.IsTerminal {
		phases = &phaseBars{w: m.Stderr, before: bar.finish}
		db.SetProgress(phases.report)
	}
	stored := time.Since(start)
	derived, derr := loader.Derive(ctx)
	if phases != nil {
		db.SetProgress(nil)
		phases.finish()
	}
	bar.finish()
	if serr == nil && derr == nil && !c.DryRun && run.Sum().Imported > 0 {
		keepAggregates(ctx, m, db, false)
	}
	if serr == nil {
		serr = derr
	}
	tot := run.Sum()
	c.printResults(m, run.Files, tot)
	fmt.Fprintf(m.Stdout, "derived and analysed %d instances: %d regressions, %d improvements (files %s, derivation %s, analysis %s)\n",
		len(derived.Instances), derived.Analysis.Regressions, derived.Analysis.Improvements,
		human.Duration(stored.Seconds()), human.Duration(derived.DeriveTime.Seconds()), human.Duration(derived.AnalyseTime.Seconds()))
	for _, u := range derived.Untimed {
		fmt.Fprintf(m.Stdout, "%d %s records on %d instances are kept without a time, listed nowhere until dated: %s\n",
			u.Records, u.Source, u.Instances, u.Remedy())
	}
	if c.DryRun {
		fmt.Fprintf(m.Stdout, "dry run: nothing was written to %s\n", m.warehouseName())
	}
	switch {
	case serr != nil:
		return serr
	case tot.Failed > 0:
		return store.Errorf(store.EINVALID, "%d of %d files could not be imported", tot.Failed, tot.Files)
	case tot.Imported == 0 && tot.Unchanged == 0:
		return store.Errorf(store.EINVALID, "none of the %d files could be imported", tot.Files)
	case c.Strict && tot.Rejects+int(tot.UnchangedRejects) > 0:
		if tot.UnchangedRejects > 0 {
			return store.Errorf(store.EINVALID, "%d lines rejected (--strict), %d of them when the unchanged files were read (--reread lists them)",
				tot.Rejects+int(tot.UnchangedRejects), tot.UnchangedRejects)
		}
		return store.Errorf(store.EINVALID, "%d lines rejected (--strict)", tot.Rejects)
	}
	return nil
}

func isKindWord(s string) bool { _, err := ingest.ParseKind(s); return err == nil }

// warehouse opens the warehouse, or for --dry-run a scratch copy of it that
// is deleted afterwards, so the run derives and counts exactly what a real
// import would while the warehouse itself is never written (nor created).
func (c *ImportCmd) warehouse(ctx context.Context, m *Main) (store.Warehouse, func(), error) {
	if !c.DryRun {
		db, err := m.openDB(ctx)
		return db, func() {}, err
	}
	if postgres.IsURL(m.cli.DB) {
		// A copy in a scratch database on the same server, dropped after.
		fmt.Fprintf(m.Stderr, "dry run: copying the warehouse into a scratch database on its server first (pg_dump | pg_restore)\n")
		db, drop, err := postgres.Scratch(ctx, m.cli.DB)
		if err != nil {
			return nil, nil, err
		}
		return db, func() {
			if err := drop(ctx); err != nil {
				fmt.Fprintf(m.Stderr, "dry run: %v\n", err)
			}
		}, nil
	}
	dir, err := os.MkdirTemp("", "restorewatch-dry-run-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	scratch := filepath.Join(dir, "dry-run.db")
	if _, err := os.Stat(m.cli.DB); err == nil {
		// The copy is the warehouse's size (SCALE.md gives it by fleet
		// size): a temporary folder without room for it fails up front,
		// saying where, rather than with a full disk halfway.
		need := fileSize(m.cli.DB) + fileSize(m.cli.DB+"-wal")
		if free, ok := scratchFree(dir); ok && free < need+need/10+64<<20 {
			cleanup()
			return nil, nil, store.Errorf(store.EINVALID, "--dry-run copies the warehouse (%s) to %s, which has %s free: point TMPDIR at a disk with room for it",
				formatBytes(&need), filepath.Dir(dir), formatBytes(&free))
		}
		if need >= 1<<30 {
			fmt.Fprintf(m.Stderr, "dry run: copying the warehouse (%s) to %s first\n", formatBytes(&need), filepath.Dir(dir))
		}
		// A copy of the files, not VACUUM INTO: rebuilding every index into
		// the copy was most of a large warehouse's dry run.
		if err := sqlite.CopyFiles(ctx, m.cli.DB, scratch); err != nil {
			cleanup()
			return nil, nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		cleanup()
		return nil, nil, err
	}
	db, err := sqlite.Open(ctx, scratch)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return db, func() { db.Close(); cleanup() }, nil
}

// scratchFree is freeSpace, for a test to replace.
var scratchFree = freeSpace

// fileSize is the size of the file at path, 0 when there is none.
func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// printResults prints a line per file with --verbose (always for a file
// that was skipped or failed, and its rejects), then the run's totals.
func (c *ImportCmd) printResults(m *Main, rs []ingest.FileResult, t ingest.Totals) {
	const show = 50
	shown := 0
	for _, r := range rs {
		switch {
		case r.Unchanged != nil:
			if c.Verbose {
				fmt.Fprintf(m.Stdout, "%s: unchanged since its import of %s (%d records, %d rejected then): not read again\n",
					r.Path, r.Unchanged.ImportedAt.Format("2006-01-02 15:04 UTC"), r.Unchanged.Records, r.Unchanged.Rejected)
			}
			continue
		case r.Skipped != "":
			fmt.Fprintf(m.Stdout, "%s: skipped: %s\n", r.Path, r.Skipped)
			continue
		case c.Verbose || r.Err != nil || len(r.Rejects) > 0 || len(rs) == 1:
			inst := ""
			if r.Instance != "" {
				inst = fmt.Sprintf(", instance %s (from the %s)", printable(r.Instance), r.InstanceSource)
			}
			wrapped := ""
			if len(r.Wrappers) > 0 && !strings.Contains(r.KindWhy, "inside ") && !strings.Contains(r.KindWhy, r.Wrappers[0]) {
				wrapped = ", removed " + strings.Join(r.Wrappers, ", ") // the kind was given, not detected
			}
			fmt.Fprintf(m.Stdout, "%s: %s%s%s: read %d, rejected %d\n",
				r.Path, r.KindWhy, wrapped, inst, r.Read, len(r.Rejects))
		}
		if r.Err != nil {
			fmt.Fprintf(m.Stdout, "%s: not imported to its end: %s\n", r.Path, store.ErrorMessage(errOrInternal(r.Err)))
		}
		if r.UntimedAdvice != "" {
			fmt.Fprintf(m.Stdout, "  %s\n", r.UntimedAdvice)
		}
		for _, rj := range r.Rejects {
			if shown == show {
				break
			}
			shown++
			fmt.Fprintf(m.Stdout, "  rejected %s\n", rj)
		}
	}
	if t.Rejects > shown {
		fmt.Fprintf(m.Stdout, "  … and %d more rejected lines\n", t.Rejects-shown)
	}
	var kinds []string
	for _, k := range []ingest.FileKind{ingest.ErrorLog, ingest.History, ingest.Messages, ingest.Backups} {
		if n := t.Kinds[k]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
		}
	}
	if len(kinds) == 0 {
		kinds = []string{"none read"}
	}
	fmt.Fprintf(m.Stdout, "%d files (%s), %d skipped, %d failed: read %d, added %d, duplicates %d, rejected %d\n",
		t.Files, strings.Join(kinds, ", "), t.Skipped, t.Failed, t.Read, t.Added, t.Duplicates, t.Rejects)
	if t.Unchanged > 0 {
		fmt.Fprintf(m.Stdout, "%d files unchanged since an earlier import read them whole: not read again (--reread reads them)\n", t.Unchanged)
	}
	if len(t.RejectsByReason) > 0 {
		fmt.Fprintln(m.Stdout, "rejects by reason:")
		for _, k := range ingest.SortedKeys(t.RejectsByReason) {
			fmt.Fprintf(m.Stdout, "  %6d  %s\n", t.RejectsByReason[k], k)
		}
	}
	if t.Untimed > 0 {
		fmt.Fprintf(m.Stdout, "%d restores without a completion time were rejected, not stored: import their files again with --at (when the batch ran)\n", t.Untimed)
	}
	if len(t.Ignored) > 0 {
		fmt.Fprintln(m.Stdout, "set aside by rule (not restores, not errors):")
		for _, k := range ingest.SortedKeys(t.Ignored) {
			fmt.Fprintf(m.Stdout, "  %6d  %s\n", t.Ignored[k], k)
		}
	}
	if t.Backups > 0 {
		fmt.Fprintf(m.Stdout, "%d backup statistics read and left out (restorewatch keeps restores)\n", t.Backups)
	}
	if t.Switches > 0 {
		fmt.Fprintf(m.Stdout, "%d changes of encoding inside files followed (logs joined with cat, UTF-16 pasted into UTF-8)\n", t.Switches)
	}
	if len(t.Wrappers) > 0 {
		var ws []string
		for _, k := range ingest.SortedKeys(t.Wrappers) {
			ws = append(ws, fmt.Sprintf("%d inside %s", t.Wrappers[k], k))
		}
		fmt.Fprintf(m.Stdout, "wrappers removed: %s\n", strings.Join(ws, "; "))
	}
	if len(t.InstanceSources) > 0 {
		var src []string
		for _, k := range ingest.SortedKeys(t.InstanceSources) {
			src = append(src, fmt.Sprintf("%d from the %s", t.InstanceSources[k], k))
		}
		fmt.Fprintf(m.Stdout, "instance names: %s\n", strings.Join(src, ", "))
	}
}

// runBar is the whole run's progress on a terminal: bytes done of total with
// an ETA, files done and records found.
type runBar struct{ bar *progressbar.ProgressBar }

func (c *ImportCmd) runBar(m *Main, files []ingest.File) *runBar {
	if !m.IsTerminal {
		return nil
	}
	var total int64
	for _, f := range files {
		if st, err := os.Stat(f.Path); err == nil {
			total += st.Size()
		}
	}
	if total < 8<<20 && len(files) < 20 {
		return nil
	}
	return &runBar{bar: progressbar.NewOptions64(total, progressbar.OptionSetWriter(m.Stderr),
		progressbar.OptionShowBytes(true), progressbar.OptionSetWidth(30), progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetDescription(fmt.Sprintf("files 0/%d", len(files))))}
}

func (b *runBar) update(p ingest.FilesProgress) {
	b.bar.Describe(fmt.Sprintf("files %d/%d, %d records", p.FilesDone, p.Files, p.Records))
	_ = b.bar.Set64(p.BytesDone)
}

func (b *runBar) finish() {
	if b == nil || b.bar == nil {
		return
	}
	_ = b.bar.Finish()
	b.bar = nil
}

// parseOffset parses "+05:30", "-5:00", "0" into minutes.
func parseOffset(s string) (int, error) {
	s = strings.TrimSpace(s)
	sign := 1
	switch {
	case strings.HasPrefix(s, "-"):
		sign, s = -1, s[1:]
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	}
	var h, mi int
	if _, err := fmt.Sscanf(s, "%d:%d", &h, &mi); err != nil {
		if _, err := fmt.Sscanf(s, "%d", &h); err != nil {
			return 0, fmt.Errorf("utc offset %q: want ±HH:MM", s)
		}
	}
	if h > 14 || mi > 59 || h < 0 || mi < 0 {
		return 0, fmt.Errorf("utc offset %q out of range", s)
	}
	return sign * (h*60 + mi), nil
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// derivingGC lets the Go heap grow to five times what is live, unless
// GOGC says otherwise, until the returned function restores the setting:
// an import's live Go heap is small while it derives (SQLite's pages live
// outside it), so at the default GOGC a large import collected many times
// a second and derived measurably slower. The heap is held under
// derivingLimit all the same (unless GOMEMLIMIT says otherwise): the
// analysis at the end of an import holds every series it judges, and five
// times that took a folder import past its memory target
// (docs/benchmarks-log.md). analyze gained nothing from it and serve keeps
// the default: its live heap (the fleet's orders) is large.
func derivingGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(400)
	oldLimit := int64(-1)
	if os.Getenv("GOMEMLIMIT") == "" {
		oldLimit = debug.SetMemoryLimit(derivingLimit)
	}
	return func() {
		debug.SetGCPercent(old)
		if oldLimit >= 0 {
			debug.SetMemoryLimit(oldLimit)
		}
	}
}

// derivingLimit is the soft limit of the Go heap while an import derives:
// with SQLite's caches beside it, an import stays within the 500 MiB its
// benchmarks allow.
const derivingLimit = 256 << 20
