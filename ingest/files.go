package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/restorewatch/restorewatch/store"
)

// FilesOptions configure a run over many files.
type FilesOptions struct {
	// Kind is the kind of every file; empty detects each file's kind from
	// its content.
	Kind FileKind
	Options
	// InstanceFromDir names the instance of a file that does not name it
	// after the folder that holds it (`--instance-from-dir`).
	InstanceFromDir bool
	// Workers parse files in parallel into the single writer; 0 means one
	// per core.
	Workers int
	// Progress, when set, is called as files progress (from any worker,
	// serialised).
	Progress func(FilesProgress)
	// Reread reads files an earlier run imported whole, though their
	// content and options are unchanged (`--reread`); without it they are
	// skipped, which re-reading would only confirm.
	Reread bool
}

// FilesProgress is the state of a run over many files.
type FilesProgress struct {
	Files, FilesDone int
	Bytes, BytesDone int64
	Records          int64 // records stored so far (restores, history rows, snapshots)
}

// FileResult is what happened to one file of a run.
type FileResult struct {
	Path string
	Kind FileKind
	// KindWhy says how the kind was decided: "given" or what detection saw.
	KindWhy string
	Stored
	// Skipped is why a file was left out (its kind could not be told from
	// its content); Err is a file that could not be opened or read to its
	// end.
	Skipped string
	Err     error
	// Unchanged is the earlier import of this very content with the same
	// options: the file was not read again.
	Unchanged *store.ImportedFile
	// fingerprint identifies the content and options, to mark the file
	// imported once its records are committed.
	fingerprint string
}

// File is one file of a run.
type File struct {
	Path string
	// Folder is the name of the folder that holds the file when that folder
	// can name a server (--instance-from-dir): the parent of a file named on
	// the command line with a folder, or of a file found below a folder given
	// on the command line — not that given folder itself, which holds the
	// servers' folders.
	Folder string
	// Kind and Instance, when set, override the run's for this file (a
	// generated fleet knows each file's kind and server).
	Kind     FileKind
	Instance string
}

// ExpandPaths turns the command line's paths into files: a file stays, a
// folder gives every regular file under it (recursively, in name order,
// hidden files and folders left out), and a pattern that names no file is a
// glob. A path that names nothing is an error.
func ExpandPaths(paths []string) ([]File, error) {
	var out []File
	seen := map[string]bool{}
	add := func(path, folder string) {
		if !seen[path] {
			seen[path] = true
			out = append(out, File{Path: path, Folder: folder})
		}
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) || !strings.ContainsAny(p, "*?[") {
				return nil, store.Errorf(store.EINVALID, "%s could not be imported: %v", p, unwrapPath(err))
			}
			m, gerr := filepath.Glob(p)
			if gerr != nil {
				return nil, store.Errorf(store.EINVALID, "%s: %v", p, gerr)
			}
			if len(m) == 0 {
				return nil, store.Errorf(store.EINVALID, "%s could not be imported: no file matches", p)
			}
			sub, err := ExpandPaths(m)
			if err != nil {
				return nil, err
			}
			for _, s := range sub {
				add(s.Path, s.Folder)
			}
			continue
		}
		if !st.IsDir() {
			folder := ""
			if d := filepath.Dir(p); d != "." && d != string(filepath.Separator) {
				folder = filepath.Base(d)
			}
			add(p, folder)
			continue
		}
		root := filepath.Clean(p)
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if path != p && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() {
				folder := ""
				if dir := filepath.Dir(path); filepath.Clean(dir) != root {
					folder = filepath.Base(dir)
				}
				add(path, folder)
			}
			return nil
		})
		if err != nil {
			return nil, store.Errorf(store.EINVALID, "%s: %v", p, unwrapPath(err))
		}
	}
	return out, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Run is what StoreFiles did.
type Run struct {
	Files []FileResult // one per file, in the order given
	// Added and Duplicates count the records of the whole run: the files of
	// a run share their imports (see StoreFiles), so each file reports what
	// it handed in and rejected, and the run what was new.
	Added, Duplicates int64
}

// StoreFiles stores every file, parsing up to Workers at once into the
// warehouse's single writer. Each worker feeds all its files into one
// sqlite.Import, so a folder of thousands of small error logs commits in
// batches of store.BatchSize records, not a transaction per file. Nothing is
// derived: call Derive once after the last file. A file that fails does not
// stop the others; the error returned is ctx's or a failed commit's.
func (l *Loader) StoreFiles(ctx context.Context, files []File, opt FilesOptions) (Run, error) {
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, max(1, len(files)))
	run := Run{Files: make([]FileResult, len(files))}
	sizes := make([]int64, len(files))
	var prog struct {
		sync.Mutex
		FilesProgress
	}
	prog.Files = len(files)
	for i, f := range files {
		if st, err := os.Stat(f.Path); err == nil {
			sizes[i] = st.Size()
			prog.Bytes += st.Size()
		}
	}
	var records atomic.Int64
	report := func(doneFile bool, bytes int64) {
		if opt.Progress == nil {
			return
		}
		prog.Lock()
		defer prog.Unlock()
		if doneFile {
			prog.FilesDone++
		}
		prog.BytesDone += bytes
		prog.Records = records.Load()
		opt.Progress(prog.FilesProgress)
	}
	next := make(chan int)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			im, err := l.db.NewImport(ctx, "files", fmt.Sprintf("%d files, worker %d of %d", len(files), w+1, workers))
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				for range next {
				}
				return
			}
			var done []store.ImportedFile
			for i := range next {
				var last int64
				progress := func(n int64) { report(false, n-last); last = n }
				read0, rej0 := im.Handed()
				n0 := len(rej0)
				r := l.storeFile(ctx, im, files[i], opt, progress)
				read1, rej1 := im.Handed()
				r.Read = read1 - read0
				r.Rejects = append([]store.Reject(nil), rej1[n0:]...)
				run.Files[i] = r
				records.Add(r.Read)
				report(true, sizes[i]-last)
				if r.fingerprint != "" && r.Err == nil && r.Skipped == "" && r.Unchanged == nil {
					done = append(done, store.ImportedFile{Fingerprint: r.fingerprint, Path: r.Path, Size: sizes[i],
						Records: r.Read, Rejected: int64(len(r.Rejects))})
				}
			}
			sum, err := im.Commit()
			l.remember(sum)
			if err == nil {
				// Only now are the files' records committed.
				err = l.db.MarkImported(ctx, done)
			}
			mu.Lock()
			run.Added += sum.Added
			run.Duplicates += sum.Duplicates
			if err != nil {
				errs = append(errs, err)
			}
			mu.Unlock()
		}()
	}
	// Largest first: a run's big CSVs then overlap the many small logs
	// instead of leaving one worker alone with the last of them.
	order := make([]int, len(files))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return sizes[order[a]] > sizes[order[b]] })
	for _, i := range order {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return run, err
	}
	return run, errors.Join(errs...)
}

func (l *Loader) storeFile(ctx context.Context, im store.Import, file File, opt FilesOptions, progress func(int64)) FileResult {
	path := file.Path
	r := FileResult{Path: path, Kind: opt.Kind, KindWhy: "given"}
	if file.Kind != "" {
		r.Kind = file.Kind
	}
	if file.Instance != "" {
		opt.Instance = file.Instance
	}
	f, err := os.Open(path)
	if err != nil {
		r.Err = store.Errorf(store.EINVALID, "%s: cannot open: %v", path, unwrapPath(err))
		return r
	}
	defer f.Close()
	folder := ""
	if opt.InstanceFromDir {
		folder = file.Folder
	}
	judged := l.judge(ctx, f, path, r.Kind, folder, opt)
	if r.Kind == "" {
		kind, why, err := Detect(f)
		if err != nil {
			// Skipped only if new: an unchanged file is reported as such.
			if v := <-judged; v.err != nil || v.unchanged {
				return r.judged(v)
			}
			r.Skipped = err.Error()
			return r
		}
		r.Kind, r.KindWhy = kind, why
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			<-judged
			r.Err = err
			return r
		}
	}
	in := Input{Kind: r.Kind, Name: filepath.Base(path), R: f, Options: opt.Options}
	in.Progress = progress
	if st, err := f.Stat(); err == nil {
		in.Size = st.Size()
	}
	if opt.InstanceFromDir {
		in.Fallback = file.Folder
	}
	g := &gate{sink: im, ch: judged}
	if in.Size < overlapFrom {
		// A small file's hash is quick: waiting for it costs less than
		// parsing a file an earlier run imported whole (a folder's re-run).
		v := <-judged
		if v.err != nil || v.unchanged {
			return r.judged(v)
		}
		g.decide(v)
	}
	r.Stored, r.Err = parse(ctx, g, in)
	v, err := g.close()
	if v.err != nil || v.unchanged {
		return FileResult{Path: r.Path, Kind: r.Kind, KindWhy: r.KindWhy}.judged(v)
	}
	r.fingerprint = v.fingerprint
	if r.Err == nil {
		r.Err = err
	}
	return r
}

// judged is r for a file whose verdict ended it: unreadable, or imported
// before.
func (r FileResult) judged(v verdict) FileResult {
	if v.err != nil {
		r.Err = v.err
		return r
	}
	r.Unchanged = &v.prior
	return r
}

// Totals sums the results of a run for its closing summary.
type Totals struct {
	Files, Imported, Skipped, Failed int
	Unchanged                        int   // files an earlier run imported whole, not read again
	UnchangedRejects                 int64 // the lines those files rejected when they were read
	Kinds                            map[FileKind]int
	Read, Added, Duplicates          int64
	Rejects                          int
	RejectsByReason                  map[string]int // reasons with their numbers and names taken out
	Untimed, Backups                 int64
	Ignored                          map[string]int64 // lines set aside on purpose, by rule
	Switches                         int64            // encoding changes inside files
	InstanceSources                  map[string]int   // how many files got their instance name where
	Wrappers                         map[string]int   // how many files came in each wrapper (unwrap's names)
}

// Sum totals a run.
func (run Run) Sum() Totals {
	t := Sum(run.Files)
	t.Added, t.Duplicates = run.Added, run.Duplicates
	return t
}

// Sum totals results.
func Sum(rs []FileResult) Totals {
	t := Totals{Files: len(rs), Kinds: map[FileKind]int{}, RejectsByReason: map[string]int{}, InstanceSources: map[string]int{},
		Ignored: map[string]int64{}, Wrappers: map[string]int{}}
	for _, r := range rs {
		switch {
		case r.Unchanged != nil:
			t.Unchanged++
			t.UnchangedRejects += r.Unchanged.Rejected
			continue
		case r.Skipped != "":
			t.Skipped++
			continue
		case r.Err != nil:
			t.Failed++
		default:
			t.Imported++
		}
		t.Kinds[r.Kind]++
		t.Read += r.Read
		t.Added += r.Added
		t.Duplicates += r.Duplicates
		t.Rejects += len(r.Rejects)
		for _, rj := range r.Rejects {
			t.RejectsByReason[ReasonClass(rj.Reason)]++
		}
		t.Untimed += r.Untimed
		t.Backups += r.Backups
		t.Switches += r.Switches
		for _, w := range r.Wrappers {
			t.Wrappers[w]++
		}
		for k, n := range r.Ignored {
			t.Ignored[k] += n
		}
		if r.InstanceSource != "" {
			t.InstanceSources[r.InstanceSource]++
		}
	}
	return t
}

// ReasonClass shortens a reject's reason to its class, so a summary can
// count a thousand lines' "bad timestamp" once: quoted text (the line's
// own) is taken out and numbers become N.
func ReasonClass(reason string) string {
	s := quotedRE.ReplaceAllString(reason, "…")
	s = numberRE.ReplaceAllString(s, "N")
	if len(s) > 140 {
		s = clip(s, 140)
	}
	return strings.TrimSpace(s)
}

var (
	quotedRE = regexp.MustCompile(`"[^"]*"|“[^”]*”|«[^»]*»`)
	numberRE = regexp.MustCompile(`\d+`)
)

// SortedKeys returns m's keys in order, for stable summaries.
func SortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
