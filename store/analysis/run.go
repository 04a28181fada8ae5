package analysis

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// Options configure Run.
type Options struct {
	Config      Config
	KnownIssues []KnownIssue // nil = DefaultKnownIssues()
	// Now anchors "recent" (exposure, restores per year); zero = time.Now().
	Now time.Time
}

// RunStats counts what Run looked at and found.
type RunStats struct {
	Instances, Series, Restores, Regressions, Improvements int
}

// judged is one series' finding before it is stored.
type judged struct {
	s     *store.SeriesRestores
	ser   store.Series
	f     Finding
	sides *changeSides // the restores to rank factors over, for a regression or an improvement
}

// findings are what Run stores for one instance.
type findings struct {
	id     int64
	series []store.SeriesRestores
	saved  []store.Series
	regs   []store.Regression
	exp    []store.Exposure
	st     RunStats
	err    error
	done   chan struct{}
}

// chunkRestores bounds how many restores Run holds at once: the instances
// are judged in groups of contiguous ids expected to hold about this many
// restores (from the warehouse's average per instance), so that analysing
// a fleet, or what a huge import touched, does not hold every point in
// memory. On the analysis benchmark two groups took the same time as one
// and less memory (docs/benchmarks-log.md, "Analysis").
var chunkRestores int64 = 500_000

// groupsRun counts the groups Run has judged, for tests.
var groupsRun atomic.Int64

// Warehouse is what Run reads its series from and writes its findings to;
// the SQLite warehouse satisfies it.
type Warehouse interface {
	InstanceIDs(ctx context.Context) ([]int64, error)
	RestoresPerInstance(ctx context.Context) (int64, error)
	AnalysisPending(ctx context.Context) (map[int64]int64, error)
	LoadSeries(ctx context.Context, ids []int64) ([]store.SeriesRestores, error)
	RestoreFactors(ctx context.Context, ids []int64) (map[int64]map[string]string, error)
	SaveFindings(ctx context.Context, instanceID, pending int64, series []store.Series, regs []store.Regression, exp []store.Exposure) error
	Report(p store.Progress)
}

// Run judges every series of the given instances (all when ids is nil) and
// stores the findings: series verdicts, regressions with what changed and the
// known issues that match, and per-instance known-issue exposure.
//
// The series are read in one pass per group of instances
// (Warehouse.LoadSeries; see chunkRestores). One worker per core then takes
// the instances in turn: it judges their series and reads the factors (what
// changed) of the few that show a change; the findings are stored in
// instance order as they come, on the writer connection, while the workers
// go on.
func Run(ctx context.Context, db Warehouse, ids []int64, opt Options) (RunStats, error) {
	var st RunStats
	if opt.KnownIssues == nil {
		opt.KnownIssues = DefaultKnownIssues()
	}
	if opt.Config == (Config{}) {
		opt.Config = DefaultConfig() // a zero Config would also skip the bootstrap interval
	}
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	load := ids // what LoadSeries reads when one group holds everything: nil = every instance
	if ids == nil {
		var err error
		if ids, err = db.InstanceIDs(ctx); err != nil {
			return st, err
		}
	}
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	per, err := db.RestoresPerInstance(ctx)
	if err != nil {
		return st, err
	}
	size := len(ids)
	if per > 0 {
		size = int(max(1, min(chunkRestores/per, int64(len(ids)))))
	}
	if size >= len(ids) {
		return runGroup(ctx, db, ids, load, opt, 0, len(ids))
	}
	for i := 0; i < len(ids); i += size {
		group := ids[i:min(i+size, len(ids))]
		gst, err := runGroup(ctx, db, group, group, opt, i, len(ids))
		st.Instances += gst.Instances
		st.Series += gst.Series
		st.Restores += gst.Restores
		st.Regressions += gst.Regressions
		st.Improvements += gst.Improvements
		if err != nil {
			return st, err
		}
	}
	return st, nil
}

// runGroup judges the instances ids (sorted), reading load (nil: every
// instance) with LoadSeries; done and total place it in Run's progress.
func runGroup(ctx context.Context, db Warehouse, ids, load []int64, opt Options, done, total int) (RunStats, error) {
	var st RunStats
	groupsRun.Add(1)
	// The marks are read before the restores: a derivation committed after
	// this read raises a mark past what SaveFindings clears.
	pending, err := db.AnalysisPending(ctx)
	if err != nil {
		return st, err
	}
	all, err := db.LoadSeries(ctx, load)
	if err != nil {
		return st, err
	}
	work := make([]findings, len(ids))
	for i, id := range ids {
		work[i] = findings{id: id, done: make(chan struct{})}
	}
	for k := 0; k < len(all); {
		j := k + 1
		for j < len(all) && all[j].InstanceID == all[k].InstanceID {
			j++
		}
		if i, ok := slices.BinarySearch(ids, all[k].InstanceID); ok {
			work[i].series = all[k:j]
		}
		k = j
	}

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	var next atomic.Int64
	for range min(runtime.GOMAXPROCS(0), len(work)) {
		wg.Go(func() {
			var buf []Point
			for i := int(next.Add(1)) - 1; i < len(work); i = int(next.Add(1)) - 1 {
				w := &work[i]
				if w.err = ctx.Err(); w.err == nil {
					buf, w.err = w.judge(ctx, db, opt, buf)
				}
				close(w.done)
			}
		})
	}
	for i := range work {
		w := &work[i]
		<-w.done
		if w.err != nil {
			return st, w.err
		}
		if err := db.SaveFindings(ctx, w.id, pending[w.id], w.saved, w.regs, w.exp); err != nil {
			return st, err
		}
		st.Series += w.st.Series
		st.Restores += w.st.Restores
		st.Regressions += w.st.Regressions
		st.Improvements += w.st.Improvements
		st.Instances++
		db.Report(store.Progress{Phase: store.PhaseAnalysing, Done: done + i + 1, Total: total})
		*w = findings{} // let the points go
	}
	return st, nil
}

// judge judges the series of one instance and fills in its findings. buf is
// scratch space handed from one call to the next.
func (w *findings) judge(ctx context.Context, db Warehouse, opt Options, buf []Point) ([]Point, error) {
	res := make([]judged, len(w.series))
	var changed []int64
	for k := range w.series {
		res[k], buf = judge(&w.series[k], opt.Config, buf)
		if r := &res[k]; r.sides != nil && (r.f.Verdict == Regression || r.f.Verdict == Improvement) {
			for _, p := range r.s.Points {
				changed = append(changed, p.RestoreID)
			}
		}
	}
	var factors map[int64]map[string]string
	if len(changed) > 0 {
		var err error
		if factors, err = db.RestoreFactors(ctx, changed); err != nil {
			return buf, err
		}
	}
	var recent store.Conditions
	build := ""
	cutoff := opt.Now.AddDate(0, -3, 0)
	for k := range res {
		r := &res[k]
		w.st.Series++
		w.st.Restores += len(r.s.Points)
		w.saved = append(w.saved, r.ser)
		if reg := regression(r, factors, opt); reg != nil {
			w.regs = append(w.regs, *reg)
			if reg.Direction == string(Regression) {
				w.st.Regressions++
			} else {
				w.st.Improvements++
			}
		}
		if r.s.Build != "" {
			build = r.s.Build
		}
		for _, p := range r.s.Points {
			if p.At().After(cutoff) {
				recent |= p.Cond
			}
		}
	}
	if build == "" {
		return buf, nil
	}
	for _, ki := range MatchKnownIssues(opt.KnownIssues, build, conditions(recent)) {
		if len(ki.Affected) == 0 {
			continue // a build-free entry is advice, not exposure
		}
		w.exp = append(w.exp, store.Exposure{IssueID: ki.ID, Build: build, Conditions: strings.Join(ki.Conditions, ", ")})
	}
	return buf, nil
}

// conditions names the known-issue conditions in c.
func conditions(c store.Conditions) map[string]bool {
	out := map[string]bool{}
	for _, n := range []struct {
		bit  store.Conditions
		name string
	}{
		{store.CondCompressed, "compressed"},
		{store.CondEncrypted, "encrypted"},
		{store.CondAlign4K, "io_alignment_4096"},
		{store.CondVirtual, "vdi"},
		{store.CondStriped, "striped"},
	} {
		if c&n.bit != 0 {
			out[n.name] = true
		}
	}
	return out
}

// points turns a series into Detect's input, in buf.
func points(s *store.SeriesRestores, factors map[int64]map[string]string, buf []Point) []Point {
	pts := slices.Grow(buf[:0], len(s.Points))[:len(s.Points)]
	for i, p := range s.Points {
		pts[i] = Point{RestoreID: p.RestoreID, At: p.At(), DurationS: p.DurationS, Bytes: p.Bytes, MiBps: p.MiBps,
			Factors: factors[p.RestoreID]}
	}
	return pts
}

// judge runs Detect over one series, without the factors, and turns the
// finding into the series record; buf is scratch space, returned for the
// next call.
func judge(s *store.SeriesRestores, cfg Config, buf []Point) (judged, []Point) {
	pts := points(s, nil, buf)
	measured := 0
	for _, p := range s.Points {
		if p.MiBps > 0 {
			measured++
		}
	}
	f, sides := detect(pts, cfg)
	ser := store.Series{InstanceID: s.InstanceID, Instance: s.Instance, Database: s.Database, Kind: s.Kind,
		N: len(pts), NMeasured: measured, Verdict: string(f.Verdict), Note: f.Note}
	if len(pts) > 0 {
		last := s.Points[len(pts)-1]
		ser.LastAt, ser.Family = last.At(), s.Family
		if last.Bytes > 0 {
			ser.LastBytes = &last.Bytes
		}
	}
	if f.BaselineMiBps > 0 {
		ser.BaselineMiBps = &f.BaselineMiBps
	}
	if f.CurrentMiBps > 0 {
		ser.CurrentMiBps = &f.CurrentMiBps
	}
	for _, i := range f.Outliers {
		ser.Outliers = append(ser.Outliers, pts[i].RestoreID)
	}
	if f.ChangeIndex >= 0 && f.ChangeIndex < len(pts) {
		ser.ChangePoints = []int64{pts[f.ChangeIndex].RestoreID}
	}
	if w := f.Watch; w != nil {
		ser.Watch = &store.Watch{InstanceID: s.InstanceID, Instance: s.Instance, Database: s.Database, Kind: s.Kind,
			Direction: string(w.Direction), RestoreID: pts[w.Index].RestoreID, OpenedAt: pts[w.Index].At, Ratio: w.Ratio,
			DurationRatio: w.DurationRatio, UsualMiBps: w.UsualMiBps, UsualN: w.UsualN, State: store.WatchOpen}
	}
	if f.Verdict != Regression && f.Verdict != Improvement {
		if g := growthNote(s.Points); g != "" && !strings.Contains(ser.Note, "larger") {
			ser.Note = strings.TrimSuffix(ser.Note, ".") + "; " + g
		}
	}
	return judged{s: s, ser: ser, f: f, sides: sides}, pts
}

// regression turns the finding of a series that regressed or improved into
// a store record, with what changed (from the factors by restore id) and the
// known issues that match; nil for any other verdict.
func regression(r *judged, factors map[int64]map[string]string, opt Options) *store.Regression {
	f, s := r.f, r.s
	if f.Verdict != Regression && f.Verdict != Improvement {
		return nil
	}
	pts := points(s, factors, nil)
	if r.sides != nil {
		f.ChangedFactors = r.sides.rank(pts)
	}
	before, after := s.Points[:f.ChangeIndex], s.Points[f.ChangeIndex:]
	reg := &store.Regression{InstanceID: s.InstanceID, Instance: s.Instance, Database: s.Database, Kind: s.Kind,
		Direction: string(f.Verdict), ChangedAt: f.ChangedAt, ChangeRestoreID: pts[f.ChangeIndex].RestoreID,
		BaselineMiBps: f.BaselineMiBps, CurrentMiBps: f.CurrentMiBps, Ratio: f.Ratio, RatioLow: f.RatioLow,
		RatioHigh: f.RatioHigh, BaselineN: f.BaselineN, CurrentN: f.CurrentN, PValue: f.PValue,
		SizeGrowth: f.SizeGrowth, DurationRatio: f.DurationRatio, Note: f.Note,
		BaselineDurationS: medianDuration(before), CurrentDurationS: medianDuration(after),
		RestoresPerYear: perYear(s.Points)}
	for _, c := range f.ChangedFactors {
		reg.ChangedFactors = append(reg.ChangedFactors, store.FactorChange{Factor: c.Factor, Before: c.Before, After: c.After, Score: c.Score})
	}
	// Known issues: the build and conditions of the slow restores.
	var slow store.Conditions
	builds := map[string]int{}
	for i, p := range after {
		slow |= p.Cond
		if b := pts[f.ChangeIndex+i].Factors["instance_build"]; b != "" {
			builds[b]++
		}
	}
	if f.Verdict == Regression {
		conds := conditions(slow)
		for _, b := range topKeys(builds) {
			for _, ki := range MatchKnownIssues(opt.KnownIssues, b, conds) {
				if len(ki.Affected) > 0 && !slices.Contains(reg.KnownIssues, ki.ID) {
					reg.KnownIssues = append(reg.KnownIssues, ki.ID)
				}
			}
		}
	}
	return reg
}

func medianDuration(ps []store.SeriesPoint) float64 {
	var d []float64
	for _, p := range ps {
		if p.DurationS > 0 {
			d = append(d, p.DurationS)
		}
	}
	if len(d) == 0 {
		return 0
	}
	return Median(d)
}

// perYear estimates how many restores of this series a year brings, from
// the span the series covers.
func perYear(ps []store.SeriesPoint) float64 {
	if len(ps) < 2 {
		return float64(len(ps))
	}
	span := ps[len(ps)-1].At().Sub(ps[0].At()).Hours() / 24
	if span < 1 {
		span = 1
	}
	return float64(len(ps)-1) / span * 365
}

func topKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

// growthNote explains a duration that grew steadily with the backup while
// throughput held: the first third of the series against the last third.
// Detect finds step changes; gradual growth has none, yet it is exactly what
// a manager sees as "the restore got slower".
func growthNote(ps []store.SeriesPoint) string {
	var ds, bs []float64
	for _, p := range ps {
		if p.DurationS > 0 && p.Bytes > 0 {
			ds, bs = append(ds, p.DurationS), append(bs, float64(p.Bytes))
		}
	}
	n := len(ds) / 3
	if n < 3 {
		return ""
	}
	d0, b0 := Median(ds[:n]), Median(bs[:n])
	d1, b1 := Median(ds[len(ds)-n:]), Median(bs[len(bs)-n:])
	dr, br := d1/d0, b1/b0
	if dr < 1.25 || br < 1.2 || dr/br > 1.25 || dr/br < 0.8 {
		return ""
	}
	return fmt.Sprintf("duration grew %.1f× over the series because the backup is %.1f× larger; throughput unchanged, not a regression", dr, br)
}
