package plan

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/human"
)

// The one estimator (SPEC §5, "Estimates follow the present"): every
// expected restore duration — a plan's steps, the overview's RTO, the API,
// the CLI, the report — comes from Rate, and from the regime that holds
// now. A series (one database's restores of one kind on one instance) is
// judged by analysis.Detect, the analysis' own change-point rule; after its
// latest change only the restores since count. Where the script brings back
// buffer settings the series lost, the restores that used them count
// instead.

// Query is one estimate asked of Rate: a restore of Database's Kind
// backup from DeviceKind on the target. Buffers, when set, are the
// BUFFERCOUNT and MAXTRANSFERSIZE the script will set.
type Query struct {
	Database   string
	Kind       store.Kind
	DeviceKind string
	Buffers    *Buffers
}

// minSeries is how many restores a series' present regime needs before it
// is the basis on its own.
func minSeries(cfg analysis.Config) int { return max(cfg.MinEach, 3) }

// Rate is the throughput a restore asked by q would run at on f.Target
// now, with its range and the basis in words. It tries, in order: the
// database's own series on the target (its present regime, or the
// restores that used q.Buffers when the present lost them); the target's
// restores of the kind from the device kind, each series cut to its
// present regime; the same from any device; the fleet's newest from the
// device kind; the fleet's from any device.
func Rate(f Facts, q Query) Estimate {
	cfg := f.Analysis
	if cfg.MinEach <= 0 {
		cfg = analysis.DefaultConfig()
	}
	cfg.Bootstrap = 0 // the interval of a ratio is not needed here
	kind := kindWord(q.Kind)
	own := map[string][]store.RestoreRate{} // the target's series of the kind, by database
	var fleet []store.RestoreRate
	for _, r := range f.Rates {
		if r.Kind != q.Kind || !(r.LogicalMiBps > 0) || math.IsInf(r.LogicalMiBps, 0) {
			continue
		}
		if strings.EqualFold(r.Instance, f.Target) {
			own[r.Database] = append(own[r.Database], r)
		} else {
			fleet = append(fleet, r)
		}
	}
	if e, ok := seriesRate(f, q, own[q.Database], cfg); ok {
		return e
	}
	var pooled, pooledAny []float64
	for _, db := range slices.Sorted(maps.Keys(own)) {
		cur, _ := present(own[db], cfg)
		for _, r := range cur {
			pooledAny = append(pooledAny, r.LogicalMiBps)
			if r.DeviceKind == q.DeviceKind {
				pooled = append(pooled, r.LogicalMiBps)
			}
		}
	}
	var fleetDev, fleetAny []float64
	for _, r := range fleet {
		fleetAny = append(fleetAny, r.LogicalMiBps)
		if r.DeviceKind == q.DeviceKind {
			fleetDev = append(fleetDev, r.LogicalMiBps)
		}
	}
	for _, t := range []struct {
		v     []float64
		fleet bool
		basis string
	}{
		{pooled, false, fmt.Sprintf("measured on %s (%s restores from %s, each database's since its last change)", f.Target, kind, deviceName(q.DeviceKind))},
		{fleetDev, true, fmt.Sprintf("estimated from other instances (%s restores from %s)", kind, deviceName(q.DeviceKind))},
		{pooledAny, false, fmt.Sprintf("measured on %s (%s restores from any device, each database's since its last change)", f.Target, kind)},
		{fleetAny, true, fmt.Sprintf("estimated from other instances (%s restores from any device)", kind)},
	} {
		if len(t.v) == 0 {
			continue
		}
		e := rangeOf(t.v)
		e.Basis, e.Fleet = t.basis, t.fleet
		return e
	}
	return Estimate{Basis: fmt.Sprintf("no measured %s restores anywhere in the warehouse", kind)}
}

// seriesRate is Rate's first choice: the database's own restores of the
// kind on the target. ok is false when they are too few.
func seriesRate(f Facts, q Query, series []store.RestoreRate, cfg analysis.Config) (Estimate, bool) {
	need := minSeries(cfg)
	if len(series) < need {
		return Estimate{}, false
	}
	sort.SliceStable(series, func(i, j int) bool { return series[i].At.Before(series[j].At) })
	cur, fd := present(series, cfg)
	kind := kindWord(q.Kind)
	if b := q.Buffers; b != nil && !mostlyUse(cur, b) {
		// The script sets buffers the present regime does not use: the
		// restores that used them are what the script's restore will be
		// like.
		var used []store.RestoreRate
		for _, r := range series {
			if uses(r, b) {
				used = append(used, r)
			}
		}
		if u, _ := present(used, cfg); len(u) >= need {
			e := rangeOf(mibpsOf(u))
			e.Series, e.Since, e.SetBack = true, u[0].At, b
			lo, hi := durationRange(u)
			e.Basis = fmt.Sprintf("the %d %s restores of %s on %s that used BUFFERCOUNT %d and MAXTRANSFERSIZE %d KiB, which this script sets again (%s to %s, %s – %s each): what the restore would be like with them, not measured since",
				len(u), kind, q.Database, f.Target, b.BufferCount, b.MaxTransferKiB, day(u[0].At), day(u[len(u)-1].At), human.Duration(lo), human.Duration(hi))
			return e, true
		}
	}
	changed := fd.ChangeIndex >= 0 && (fd.Verdict == analysis.Regression || fd.Verdict == analysis.Improvement)
	if changed && len(cur) > 0 && len(cur) < need {
		return youngRegime(f, q, series, cur, fd, cfg), true
	}
	if len(cur) < need {
		return Estimate{}, false
	}
	// One device kind when the present has enough of it.
	var dev []store.RestoreRate
	for _, r := range cur {
		if r.DeviceKind == q.DeviceKind {
			dev = append(dev, r)
		}
	}
	from := ""
	if len(dev) >= need {
		cur = dev
	} else {
		from = " (from any device)"
	}
	e := rangeOf(mibpsOf(cur))
	e.Series, e.Since = true, cur[0].At
	switch {
	case fd.ChangeIndex >= 0 && (fd.Verdict == analysis.Regression || fd.Verdict == analysis.Improvement):
		e.Basis = fmt.Sprintf("%d %s restores of %s on %s%s since %s, when its restores became %s", len(cur), kind, q.Database,
			f.Target, from, day(fd.ChangedAt), human.Change(fd.Ratio))
		if id := findingAt(f.Findings, f.Target, q.Database, q.Kind, fd.ChangedAt); id != 0 {
			e.RegressionID = id
			e.Basis += fmt.Sprintf(" — regression %d", id)
		}
	default:
		e.Basis = fmt.Sprintf("the %d %s restores of %s on %s%s since %s, with no lasting change of speed", len(cur), kind,
			q.Database, f.Target, from, day(cur[0].At))
	}
	if w := fd.Watch; w != nil {
		// Watched: the last restore lay beyond the usual. The step is
		// expected at the usual speed, the range stretched to cover the
		// last restore's, and the other figure is if that speed holds.
		x := series[w.Index].LogicalMiBps
		// The new speed is one restore, one draw of its own noise, and the
		// next restore another: around it the usual spread twice over
		// (at least the ±25 % SPEC §5 calls stable).
		lo, hi := min(e.P10/e.MiBps, 0.75), max(e.P90/e.MiBps, 1.25)
		e.P10, e.P90 = min(e.P10, x*lo*lo), max(e.P90, x*hi*hi)
		e.Other = &OtherSpeed{Label: "if the last restore's speed holds", MiBps: x, N: 1}
		e.Basis += fmt.Sprintf("; watching: its last restore (%s) ran %s than usual — if that speed holds the step takes the other figure, and the range covers both",
			day(series[w.Index].At), ratioWords(w.Ratio))
	}
	return e, true
}

// youngRegime is the estimate of a series whose change is confirmed by
// fewer restores than a regime needs (the second slow restore confirms a
// regression): the new speed is the figure (if it holds), the speed before
// the change the other one, and the range covers both.
func youngRegime(f Facts, q Query, series, cur []store.RestoreRate, fd analysis.Finding, cfg analysis.Config) Estimate {
	var before []store.RestoreRate
	skip := map[int]bool{}
	for _, i := range fd.Outliers {
		skip[i] = true
	}
	for i := range fd.ChangeIndex {
		if !skip[i] {
			before = append(before, series[i])
		}
	}
	if len(before) > analysis.UsualWindow {
		before = before[len(before)-analysis.UsualWindow:]
	}
	e := rangeOf(mibpsOf(cur))
	e.Series, e.Since = true, cur[0].At
	if len(before) > 0 {
		old := rangeOf(mibpsOf(before))
		// Both speeds: the new one, a median of few restores, with the
		// usual spread of the regime before twice over (its own draws and
		// the next one's; at least ±25 %).
		lo, hi := min(old.P10/old.MiBps, 0.75), max(old.P90/old.MiBps, 1.25)
		e.P10 = min(e.P10, old.P10, e.MiBps*lo*lo)
		e.P90 = max(e.P90, old.P90, e.MiBps*hi*hi)
		e.Other = &OtherSpeed{Label: "at the speed before the change", MiBps: old.MiBps, N: old.N}
	}
	e.Basis = fmt.Sprintf("the %d %s restores of %s on %s since %s, when its restores became %s than before — a young regime: this is if the new speed holds; the other figure is the speed of the %d restores before, and the range covers both",
		len(cur), kindWord(q.Kind), q.Database, f.Target, day(fd.ChangedAt), ratioWords(fd.Ratio), len(before))
	if id := findingAt(f.Findings, f.Target, q.Database, q.Kind, fd.ChangedAt); id != 0 {
		e.RegressionID = id
		e.Basis += fmt.Sprintf(" — regression %d", id)
	}
	return e
}

// ratioWords says a speed ratio as people read it: "3.1× slower" or
// "2.0× faster" (one direction for people; the raw ratio stays in JSON).
func ratioWords(r float64) string { return human.Change(r) }

// present returns the restores of one series (oldest first) that its
// present regime holds — those after its latest lasting change of speed,
// by analysis.Detect, outliers left out — and Detect's finding.
func present(series []store.RestoreRate, cfg analysis.Config) ([]store.RestoreRate, analysis.Finding) {
	pts := make([]analysis.Point, len(series))
	for i, r := range series {
		pts[i] = analysis.Point{RestoreID: r.ID, At: r.At, DurationS: r.DurationS, Bytes: r.Bytes, MiBps: r.LogicalMiBps}
	}
	fd := analysis.Detect(pts, cfg)
	from := 0
	if fd.ChangeIndex >= 0 && (fd.Verdict == analysis.Regression || fd.Verdict == analysis.Improvement) {
		from = fd.ChangeIndex
	}
	out := make([]store.RestoreRate, 0, len(series)-from)
	skip := map[int]bool{}
	for _, i := range fd.Outliers {
		skip[i] = true
	}
	for i := from; i < len(series); i++ {
		if !skip[i] {
			out = append(out, series[i])
		}
	}
	return out, fd
}

// findingAt is the id of the stored regression (or improvement) of the
// series whose change is at changedAt (within a day: the stored analysis
// may have run before the newest restores), 0 when there is none.
func findingAt(fs []store.Regression, instance, database string, kind store.Kind, changedAt time.Time) int64 {
	for _, r := range fs {
		if strings.EqualFold(r.Instance, instance) && r.Database == database && r.Kind == kind &&
			r.ChangedAt.Sub(changedAt).Abs() <= 24*time.Hour {
			return r.ID
		}
	}
	return 0
}

func uses(r store.RestoreRate, b *Buffers) bool {
	return r.BufferCount == b.BufferCount && r.MaxTransferKiB == b.MaxTransferKiB
}

// mostlyUse says whether at least half of rs used b.
func mostlyUse(rs []store.RestoreRate, b *Buffers) bool {
	n := 0
	for _, r := range rs {
		if uses(r, b) {
			n++
		}
	}
	return 2*n >= len(rs)
}

func mibpsOf(rs []store.RestoreRate) []float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = r.LogicalMiBps
	}
	return v
}

// rangeOf is the median of v and the range a next value falls in four
// times out of five: the wider of v's 10th–90th percentiles and the
// log-normal prediction interval (median ± t·σ·√(1+1/n) in log space, σ
// from the MAD) — with a handful of restores the percentiles alone are
// far too narrow, which the backtest measured. P10 and P90 are the slow
// and fast ends.
func rangeOf(v []float64) Estimate {
	sorted := slices.Clone(v)
	sort.Float64s(sorted)
	n := len(sorted)
	logs := make([]float64, n)
	for i, x := range sorted {
		logs[i] = math.Log(x)
	}
	m := Quantile(logs, 0.5)
	sigma := max(1.4826*analysis.MAD(logs), minSpread)
	half := tQuantile90(n-1) * sigma * math.Sqrt(1+1/float64(n))
	lo := min(Quantile(sorted, 0.1), math.Exp(m-half))
	hi := max(Quantile(sorted, 0.9), math.Exp(m+half))
	return Estimate{MiBps: Quantile(sorted, 0.5), P10: lo, P90: hi, N: n}
}

// minSpread floors the log-space spread of a range (5 %): restores of the
// same size timed in whole seconds can agree exactly, and a next one
// never does.
const minSpread = 0.05

// tQuantile90 is Student's t 90th percentile with df degrees of freedom
// (the normal's 1.2816 beyond 30).
func tQuantile90(df int) float64 {
	table := []float64{3.078, 3.078, 1.886, 1.638, 1.533, 1.476, 1.440, 1.415, 1.397, 1.383, 1.372,
		1.363, 1.356, 1.350, 1.345, 1.341, 1.337, 1.333, 1.330, 1.328, 1.325}
	switch {
	case df < len(table):
		return table[max(df, 1)]
	case df <= 30:
		return 1.31
	}
	return 1.2816
}

// day is "15 Oct 2026".
func day(t time.Time) string { return human.Date(t) }

// durationRange is the shortest and longest measured duration of rs.
func durationRange(rs []store.RestoreRate) (lo, hi float64) {
	for i, r := range rs {
		if i == 0 || r.DurationS < lo {
			lo = r.DurationS
		}
		hi = max(hi, r.DurationS)
	}
	return lo, hi
}
