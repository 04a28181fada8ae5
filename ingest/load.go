package ingest

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/restorewatch/restorewatch/ingest/backups"
	"github.com/restorewatch/restorewatch/ingest/console"
	"github.com/restorewatch/restorewatch/ingest/csv"
	"github.com/restorewatch/restorewatch/ingest/errorlog"
	"github.com/restorewatch/restorewatch/ingest/messages"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
)

// Loader is the one import pipeline: it stores the records of any number of
// files, uploads or collector passes, then derives the instances they touched
// and analyses them, once. The CLI's import, serve's upload, the collector,
// demo and analyze all go through it, so "store, derive, analyse" has one
// home.
//
// Storing is safe from several goroutines: each stream has its own
// sqlite.Import and the warehouse's single writer connection serialises their
// commits. Derive must not run concurrently with Store on the same Loader.
type Loader struct {
	db  store.Warehouse
	opt LoaderOptions

	mu      sync.Mutex
	touched map[int64]string // instances whose facts this loader stored
}

// LoaderOptions configure a Loader.
type LoaderOptions struct {
	// Analysis configures the regression engine run by Derive.
	Analysis analysis.Options
}

// NewLoader returns a loader writing to db.
func NewLoader(db store.Warehouse, opt LoaderOptions) *Loader {
	return &Loader{db: db, opt: opt, touched: map[int64]string{}}
}

// Input is one stream to store.
type Input struct {
	Kind FileKind // never empty: detect it first (Detect)
	// Name names the stream in records' origins and rejects (a file's base
	// name, an upload's file name).
	Name string
	R    io.Reader
	Size int64 // bytes, for progress; 0 when unknown
	Options
}

// Stored is what storing one stream did.
type Stored struct {
	store.ImportSummary
	// Instance is the instance the records were put on and InstanceSource
	// where its name came from ("file" when the file says it, "option",
	// "folder"); empty when the parser does not say.
	Instance, InstanceSource string
	Untimed                  int64  // restores nothing dates: rejected, see UntimedAdvice
	UntimedAdvice            string // how to date them
	Backups                  int64  // backup statistics, which are not restores
	// Ignored counts lines and statements the parser set aside on purpose,
	// by the rule that names why (a recovery step, a failed attempt, a BOM).
	Ignored map[string]int64
	// Switches counts changes of encoding inside an error log (logs
	// concatenated with cat, UTF-16 pasted into UTF-8).
	Switches int64
	// Wrappers names what the text came wrapped in and the parser removed
	// (HTML, Markdown, docker compose or kubectl prefixes ...).
	Wrappers []string
}

// Store parses one stream into the warehouse in an import of its own and
// remembers the instances it touched. Nothing is derived until Derive. Bad
// lines are rejects in the summary; an error means the stream could not be
// read to its end, the sink failed or ctx ended (whatever batches committed
// before stay, exactly once).
func (l *Loader) Store(ctx context.Context, in Input) (Stored, error) {
	im, err := l.db.NewImport(ctx, string(in.Kind), in.Name)
	if err != nil {
		return Stored{ImportSummary: store.ImportSummary{Source: string(in.Kind), File: in.Name}}, err
	}
	out, perr := parse(ctx, im, in)
	sum, cerr := im.Commit()
	sum.Source = string(in.Kind)
	out.ImportSummary = sum
	l.remember(sum)
	if perr != nil {
		return out, perr
	}
	return out, cerr
}

func (l *Loader) remember(sum store.ImportSummary) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, id := range sum.InstanceIDs {
		l.touched[id] = sum.Instances[i]
	}
}

// parse hands one stream's records to sink with the parser of its kind.
func parse(ctx context.Context, sink store.Sink, in Input) (Stored, error) {
	out := Stored{ImportSummary: store.ImportSummary{Source: string(in.Kind), File: in.Name}}
	var perr error
	inst := in.Instance
	if inst == "" {
		inst = in.Fallback
	}
	if in.Kind == History || in.Kind == Messages || in.Kind == Backups {
		var sh console.Shape
		var ok bool
		if sh, ok, in.R = asConsole(in.R); ok {
			_, perr = console.Parse(ctx, in.R, console.Options{File: in.Name, Instance: inst, DateFormat: in.DateFormat}, sink)
			out.InstanceSource, out.Wrappers = "file", []string{sh.String()}
			if perr != nil {
				perr = fmt.Errorf("%s: %w", in.Name, perr)
			}
			return out, perr
		}
	}
	switch in.Kind {
	case ErrorLog:
		var st errorlog.Stats
		st, perr = errorlog.Parse(ctx, in.R, errorlog.Options{File: in.Name, Instance: in.Instance, Fallback: in.Fallback, Progress: in.Progress}, sink)
		out.Instance, out.InstanceSource = st.Instance, instanceSource(st.InstanceSource)
		out.Backups, out.Ignored, out.Switches, out.Wrappers = st.Backups, st.Ignored, st.Switches, st.Wrappers
	case History:
		// The CSV names each row's instance; inst fills rows that do not.
		_, perr = csv.Parse(ctx, in.R, csv.Options{File: in.Name, Instance: inst, DateFormat: in.DateFormat, Progress: in.Progress}, sink)
		out.InstanceSource = "file"
	case Messages:
		// Client output names its server only in sqlcmd -m-1 headers.
		var st messages.Stats
		st, perr = messages.Parse(ctx, in.R, messages.Options{File: in.Name, Instance: in.Instance, Fallback: in.Fallback,
			Database: in.Database, At: in.At}, sink)
		out.Instance, out.InstanceSource = st.Instance, instanceSource(st.InstanceSource)
		out.Untimed, out.Backups, out.Ignored = st.Untimed, st.Backups, st.Ignored
		out.UntimedAdvice, out.Wrappers = st.UntimedAdvice, st.Wrappers
	case Backups:
		_, perr = backups.Store(ctx, in.R, backups.Options{File: in.Name, Instance: inst, DateFormat: in.DateFormat}, sink)
		out.InstanceSource = "file"
	default:
		perr = store.Errorf(store.EINVALID, "unknown import kind %q", in.Kind)
	}
	if perr != nil {
		perr = fmt.Errorf("%s: %w", in.Name, perr)
	}
	return out, perr
}

// Records stores what fn hands to the sink (a collector pass, a generated
// fleet) as one import named name from source, like Store does for a file.
func (l *Loader) Records(ctx context.Context, source, name string, fn func(store.Sink) error) (store.ImportSummary, error) {
	return l.records(ctx, source, name, nil, fn)
}

// Push stores a collector's push batch mark from what fn hands to the
// sink, all of it in one transaction that also marks the batch applied
// with its run records (store.Import.MarkPush): all of its restores and
// runs show, or none, and a resend after a failure applies it once. When
// fn fails nothing is committed.
func (l *Loader) Push(ctx context.Context, source, name string, mark store.PushMark, fn func(store.Sink) error) (store.ImportSummary, error) {
	return l.records(ctx, source, name, &mark, fn)
}

func (l *Loader) records(ctx context.Context, source, name string, push *store.PushMark, fn func(store.Sink) error) (store.ImportSummary, error) {
	im, err := l.db.NewImport(ctx, source, name)
	if err != nil {
		return store.ImportSummary{Source: source, File: name}, err
	}
	if push != nil {
		im.WholeInOne()
		im.MarkPush(*push)
	}
	ferr := fn(im)
	if ferr != nil && push != nil {
		return store.ImportSummary{Source: source, File: name}, ferr // nothing committed: the resend applies it
	}
	sum, cerr := im.Commit()
	l.remember(sum)
	if ferr != nil {
		return sum, ferr
	}
	return sum, cerr
}

// Derived is what Derive did.
type Derived struct {
	Instances []string // the instances this loader touched, sorted
	Analysis  analysis.RunStats
	// Untimed lists the warehouse's records that nothing places in time
	// (kept, listed nowhere until dated), by source, with their remedy.
	Untimed []store.Untimed
	// How long each half took: the restores are on the pages after
	// DeriveTime, the regressions after AnalyseTime as well.
	DeriveTime, AnalyseTime time.Duration
}

// Derive derives the restores of every instance whose facts changed (those
// this loader stored, and any an interrupted earlier run left marked), then
// re-judges the series of the instances it touched. A crash before it ends
// leaves the instances marked: the next Derive (any import, analyze) finishes
// the work.
func (l *Loader) Derive(ctx context.Context) (Derived, error) {
	l.mu.Lock()
	ids := make([]int64, 0, len(l.touched))
	var d Derived
	for id, name := range l.touched {
		ids = append(ids, id)
		d.Instances = append(d.Instances, name)
	}
	l.touched = map[int64]string{}
	l.mu.Unlock()
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	sort.Strings(d.Instances)
	start := time.Now()
	err := l.db.Reconcile(ctx)
	d.DeriveTime = time.Since(start)
	if err != nil {
		return d, err
	}
	// Reconcile may have derived instances this loader did not touch (a
	// new warehouse's first derivation marks every instance, one an import
	// of backups alone created included): they are analysed too, so an
	// import leaves nothing pending for the next command to complete.
	marks, err := l.db.AnalysisPending(ctx)
	if err != nil {
		return d, err
	}
	for id := range marks {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return d, nil
	}
	slices.Sort(ids)
	st, err := analysis.Run(ctx, l.db, ids, l.opt.Analysis)
	d.Analysis, d.AnalyseTime = st, time.Since(start)-d.DeriveTime
	if err != nil {
		return d, err
	}
	d.Untimed, err = l.db.Untimed(ctx)
	return d, err
}

// Analyzed is what Analyze did and how long each half took.
type Analyzed struct {
	analysis.RunStats
	Derivation, Analysis time.Duration
}

// Analyze derives whatever is pending and re-judges every series of the
// warehouse (`restorewatch analyze`); with rederive every restore is derived
// again first.
func (l *Loader) Analyze(ctx context.Context, rederive bool) (Analyzed, error) {
	var a Analyzed
	start := time.Now()
	var err error
	if rederive {
		err = l.db.ReconcileAll(ctx)
	} else {
		err = l.db.Reconcile(ctx)
	}
	a.Derivation = time.Since(start)
	if err != nil {
		return a, err
	}
	a.RunStats, err = analysis.Run(ctx, l.db, nil, l.opt.Analysis)
	a.Analysis = time.Since(start) - a.Derivation
	return a, err
}

func instanceSource(s string) string {
	switch s {
	case "", "option":
		return s
	case "fallback":
		return "folder"
	case "sqlcmd_header":
		return "sqlcmd message headers"
	}
	return "file"
}
