package analysis

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
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

// Run judges every series of the given instances (all when ids is nil) and
// stores the findings: series verdicts, regressions with what changed and the
// known issues that match, and per-instance known-issue exposure.
func Run(ctx context.Context, db *store.DB, ids []int64, opt Options) (RunStats, error) {
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
	if ids == nil {
		var err error
		if ids, err = db.InstanceIDs(ctx); err != nil {
			return st, err
		}
	}
	type acc struct {
		series []store.Series
		regs   []store.Regression
		recent map[string]bool
		build  string
	}
	per := map[int64]*acc{}
	for _, id := range ids {
		per[id] = &acc{recent: map[string]bool{}}
	}
	err := db.EachSeries(ctx, ids, func(s *store.SeriesRestores) error {
		a := per[s.InstanceID]
		if a == nil {
			return nil
		}
		st.Series++
		st.Restores += len(s.Points)
		ser, reg := judge(s, opt)
		a.series = append(a.series, ser)
		if reg != nil {
			a.regs = append(a.regs, *reg)
			if reg.Direction == string(Regression) {
				st.Regressions++
			} else {
				st.Improvements++
			}
		}
		if s.Build != "" {
			a.build = s.Build
		}
		cutoff := opt.Now.AddDate(0, -3, 0)
		for _, p := range s.Points {
			if p.At.After(cutoff) {
				for c, ok := range conditions(p) {
					a.recent[c] = a.recent[c] || ok
				}
			}
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	keys := make([]int64, 0, len(per))
	for id := range per {
		keys = append(keys, id)
	}
	slices.Sort(keys)
	for _, id := range keys {
		a := per[id]
		var exp []store.Exposure
		if a.build != "" {
			for _, ki := range MatchKnownIssues(opt.KnownIssues, a.build, a.recent) {
				if len(ki.Affected) == 0 {
					continue // a build-free entry is advice, not exposure
				}
				exp = append(exp, store.Exposure{IssueID: ki.ID, Build: a.build, Conditions: strings.Join(ki.Conditions, ", ")})
			}
		}
		if err := db.SaveFindings(ctx, id, a.series, a.regs, exp); err != nil {
			return st, err
		}
		st.Instances++
	}
	return st, nil
}

// conditions are the known-issue conditions one restore meets.
func conditions(p store.SeriesPoint) map[string]bool {
	return map[string]bool{
		"compressed":        p.Compressed,
		"encrypted":         p.Encrypted,
		"io_alignment_4096": p.Alignment4K,
		"vdi":               p.Virtual,
		"striped":           p.Striped,
	}
}

// judge runs Detect over one series and turns the finding into store records.
func judge(s *store.SeriesRestores, opt Options) (store.Series, *store.Regression) {
	pts := make([]Point, len(s.Points))
	measured := 0
	for i, p := range s.Points {
		pts[i] = Point{RestoreID: p.RestoreID, At: p.At, DurationS: p.DurationS, Bytes: p.Bytes, MiBps: p.MiBps, Factors: p.Factors}
		if p.MiBps > 0 {
			measured++
		}
	}
	f := Detect(pts, opt.Config)
	ser := store.Series{InstanceID: s.InstanceID, Instance: s.Instance, Database: s.Database, Kind: s.Kind,
		N: len(pts), NMeasured: measured, Verdict: string(f.Verdict), Note: f.Note}
	if len(pts) > 0 {
		last := s.Points[len(pts)-1]
		ser.LastAt, ser.Family = last.At, last.Family
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
	if f.Verdict != Regression && f.Verdict != Improvement {
		if g := growthNote(s.Points); g != "" && !strings.Contains(ser.Note, "larger") {
			ser.Note = strings.TrimSuffix(ser.Note, ".") + "; " + g
		}
		return ser, nil
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
	conds := map[string]bool{}
	builds := map[string]int{}
	for _, p := range after {
		for c, ok := range conditions(p) {
			if ok {
				conds[c] = true
			}
		}
		if b := p.Factors["instance_build"]; b != "" {
			builds[b]++
		}
	}
	if f.Verdict == Regression {
		for _, b := range topKeys(builds) {
			for _, ki := range MatchKnownIssues(opt.KnownIssues, b, conds) {
				if len(ki.Affected) > 0 && !slices.Contains(reg.KnownIssues, ki.ID) {
					reg.KnownIssues = append(reg.KnownIssues, ki.ID)
				}
			}
		}
	}
	return ser, reg
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
	span := ps[len(ps)-1].At.Sub(ps[0].At).Hours() / 24
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
