package analysis

import (
	"math"
	"slices"
	"time"
)

// Point is one restore of a series, in time order.
type Point struct {
	RestoreID int64
	At        time.Time // finished (UTC)
	DurationS float64   // wall seconds; 0 = unknown
	Bytes     int64     // logical backup size; 0 = unknown
	MiBps     float64   // logical throughput; <= 0 or not finite = unknown, and the point is skipped
	// Factors maps a factor name of SPEC §6.1 (instance_build, source_build,
	// source_server, compression, encryption, checksum, device_kind,
	// stripes, buffer_count, max_transfer_size, io_alignment, ifi,
	// cpu_count, memory, loaded_modules, trace_flags, size_class) to its
	// value for this restore; "" means unknown.
	Factors map[string]string
}

// Config holds the thresholds of Detect. Ratio, MinEach, Alpha and
// ImproveRatio at zero or below take their defaults, so a partly filled
// Config from a TOML file still works; Bootstrap 0 skips the interval.
type Config struct {
	Ratio        float64 // flag a regression when current/baseline <= Ratio (0.67)
	MinEach      int     // restores needed on each side of a change (3)
	Alpha        float64 // significance level of the one-sided rank test (0.05)
	ImproveRatio float64 // flag an improvement when current/baseline >= ImproveRatio (1.5)
	Bootstrap    int     // resamples for the interval of the ratio (1000)
	Seed         uint64  // seed of the bootstrap, so reruns agree
}

// DefaultConfig returns the thresholds of SPEC §5.
func DefaultConfig() Config {
	return Config{Ratio: 0.67, MinEach: 3, Alpha: 0.05, ImproveRatio: 1.5, Bootstrap: 1000}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Ratio <= 0 || c.Ratio >= 1 {
		c.Ratio = d.Ratio
	}
	if c.MinEach <= 0 {
		c.MinEach = d.MinEach
	}
	if c.Alpha <= 0 || c.Alpha >= 1 {
		c.Alpha = d.Alpha
	}
	if c.ImproveRatio <= 1 {
		c.ImproveRatio = d.ImproveRatio
	}
	return c
}

// Verdict is the outcome of Detect for one series.
type Verdict string

// The verdicts, spelt as they are stored and shown.
const (
	Regression    Verdict = "regression"
	Improvement   Verdict = "improvement"
	Stable        Verdict = "stable"
	NotEnoughData Verdict = "not_enough_data"
)

// Finding is what Detect concludes about one series. Fields that were not
// computed are zero, except ChangeIndex, which is -1 when no change was
// located.
type Finding struct {
	Verdict     Verdict
	ChangeIndex int       // index in the series of the first restore after the change (the first slow one), or -1
	ChangedAt   time.Time // At of that restore
	// Medians of logical throughput before and after the change; with no
	// change both are the median of the whole series.
	BaselineMiBps, CurrentMiBps float64
	Ratio                       float64 // CurrentMiBps / BaselineMiBps
	RatioLow, RatioHigh         float64 // bootstrap 95 % interval of Ratio, computed only for a regression or improvement
	// BaselineN and CurrentN count the restores behind each median
	// (outliers and unknown throughput excluded); for not_enough_data,
	// BaselineN is the number of restores with a known throughput.
	BaselineN, CurrentN int
	// PValue is the one-sided Mann–Whitney p-value in the direction of the
	// observed change (after slower, or after faster); 1 with no change.
	PValue        float64
	Outliers      []int   // series indexes of brief excursions, left out of every figure above
	SizeGrowth    float64 // median bytes after / before (0 = unknown), so "slower because larger" can be told apart
	DurationRatio float64 // median duration after / before (0 = unknown)
	// ChangedFactors lists what differs between the restores before and
	// after the change, cleanest split first (see RankFactors).
	ChangedFactors []FactorChange
	Note           string // one plain-language sentence for the page
	// Watch is set when the newest restore is a slow (or fast) outlier:
	// the series is watched until its next restore confirms the change
	// (a second outlier in the same direction: a regression dated to the
	// first) or closes it (back to usual).
	Watch *Watch
	// Confirmed says the change was confirmed at its second slow (or
	// fast) restore, before the change-point rule's three.
	Confirmed bool
}

// Watch is a series' newest restore set apart as a slow or fast outlier.
type Watch struct {
	Index     int     // series index of the restore
	Direction Verdict // Regression (slower) or Improvement (faster)
	// Ratio is the restore's throughput over the usual (the median of the
	// restores it was judged against); DurationRatio its duration over
	// their median duration (0 = unknown).
	Ratio, DurationRatio float64
	UsualMiBps           float64
	UsualN               int // restores behind the usual
}

// FactorChange is one factor whose usual value differs across a change.
type FactorChange struct {
	Factor, Before, After string
	// Score in [0,1] says how cleanly the factor separates the restores
	// after the change from those before: 1 when every known value before
	// is Before and every known value after is After.
	Score float64
}

const (
	// outlierK is the classic Hampel/Iglewicz–Hoaglin cut of 3.5 robust
	// sigmas.
	outlierK = 3.5
	// penaltyFactor scales the segmentation penalty, penaltyFactor·ln(n)·σ²
	// in squared log units. BIC would use 2; the simulations in
	// detect_sim_test.go show that 2 splits a fifth of stable ±25 % series
	// while drops of 0.5× still clear 4 with a wide margin.
	penaltyFactor = 4.0
	// minSigma floors the noise estimate (2 %) so that a series of
	// identical throughputs (same size, whole-second durations) does not
	// get a zero penalty and split on its first wobble.
	minSigma = 0.02
)

// Detect judges one series as described in the package documentation.
// series must be in time order; it is not modified.
func Detect(series []Point, cfg Config) Finding {
	f, sides := detect(series, cfg)
	if sides != nil {
		f.ChangedFactors = sides.rank(series)
	}
	return f
}

// changeSides are the series indexes of the restores a finding compares,
// before and after its change.
type changeSides struct{ before, after []int }

// rank lists what changed across the sides (Finding.ChangedFactors).
func (s *changeSides) rank(series []Point) []FactorChange {
	before := make([]Point, len(s.before))
	for j, i := range s.before {
		before[j] = series[i]
	}
	after := make([]Point, len(s.after))
	for j, i := range s.after {
		after[j] = series[i]
	}
	return RankFactors(before, after)
}

// detect is Detect without the factor ranking, which needs every restore's
// factors: it returns the sides to rank instead (nil when no change was
// located), so Run reads factors only for the series that show a change.
func detect(series []Point, cfg Config) (Finding, *changeSides) {
	cfg = cfg.withDefaults()
	// Sized up front: growing these slices was a third of the cost of a
	// stable series, which is most of a fleet run.
	pos := make([]int, 0, len(series)) // series index of each usable point
	logx := make([]float64, 0, len(series))
	for i, p := range series {
		if p.MiBps > 0 && !math.IsInf(p.MiBps, 0) {
			pos = append(pos, i)
			logx = append(logx, math.Log(p.MiBps))
		}
	}
	need := 2 * cfg.MinEach
	if len(pos) < need {
		f := Finding{Verdict: NotEnoughData, ChangeIndex: -1, BaselineN: len(pos)}
		f.Note = noteNotEnough(len(pos), need)
		return f, nil
	}

	slow, fast := math.Log(1/cfg.Ratio), math.Log(cfg.ImproveRatio)
	out := findOutliers(logx, outlierRule{
		k: outlierK, slowMin: slow, fastMin: fast,
		maxRun: cfg.MinEach - 1, window: cfg.MinEach + 1,
	})
	var outIdx []int
	keep := make([]int, 0, len(pos))
	keepLog := make([]float64, 0, len(pos))
	for j, i := range pos {
		if len(out) > 0 && out[0] == j {
			out = out[1:]
			outIdx = append(outIdx, i)
			continue
		}
		keep = append(keep, i)
		keepLog = append(keepLog, logx[j])
	}

	// The newest restores against the usual of the series' regime: one
	// beyond it opens a watch, two in the same direction confirm a change
	// dated to the first of them.
	lo, c, changed := lastChange(keepLog, cfg, -slow, fast)
	from := 0
	if changed {
		from = keep[c]
	}
	var tail []int
	// A MinEach above the default asks for that many restores on each
	// side of every change: the confirmation at the second is then off.
	// Otherwise the longest run of newest restores that all lie beyond
	// the usual before it (two at least) is a change dated to its first,
	// until the change-point rule dates the same change itself: a run
	// stays confirmed as it grows, so a confirmed regression does not
	// vanish at the next restore.
	if n := len(pos); n >= 2 && cfg.MinEach <= DefaultConfig().MinEach {
		for L := min(n-1, maxRun); L >= 2; L-- {
			start := pos[n-L]
			base := from
			if changed {
				switch at := keep[c]; {
				case start == at:
					continue // the change-point rule dates this change
				case start < at || len(usual(keep, at, start)) <= 1:
					// The change found lies inside the run, or takes one
					// low restore of noise before it: judge the run
					// against the regime before.
					base = keep[lo]
				}
			}
			if f, sides, ok := confirm(series, keep, pos[n-L:], base, cfg); ok {
				run := pos[n-L:]
				f.Outliers = slices.DeleteFunc(outIdx, func(i int) bool { return slices.Contains(run, i) })
				return f, sides
			}
		}
	}
	if n := len(pos); n >= 1 {
		tail = []int{pos[n-1]}
	}
	watch := func(f Finding) Finding {
		if len(tail) == 1 {
			f.Watch = watchOf(series, keep, tail[0], from, cfg)
		}
		return f
	}

	// Throughput first: it is what a regression is judged on. A change
	// after fewer than confirmBase restores (a young series, whose usual
	// is not known yet) needs more restores after it: MinEach plus what
	// the baseline lacks of confirmBase (at least MinEach+2). The
	// walk-forward replays of null fleets showed such early changes raised
	// and withdrawn as the series grew.
	if changed {
		if before := len(usual(keep, keep[lo], keep[c])); before < confirmBase && len(keep)-c < max(cfg.MinEach+2, confirmBase-before+cfg.MinEach) {
			changed = false
		}
	}
	if changed {
		f, sides := compare(series, keep, keep[lo], keep[c])
		f.Outliers = outIdx
		if f.Ratio <= 1 {
			f.Verdict = Regression
		} else {
			f.Verdict = Improvement
		}
		if cfg.Bootstrap > 0 {
			b, a := split(keep, keep[lo], keep[c])
			f.RatioLow, f.RatioHigh = BootstrapRatio(mibps(series, b), mibps(series, a), cfg.Bootstrap, cfg.Seed)
		}
		f.Note = noteChange(f)
		return watch(f), sides
	}

	// Throughput held. A lasting change of duration is then explained by
	// size, and worth saying so the page does not leave the DBA guessing.
	dpos := make([]int, 0, len(keep))
	dlog := make([]float64, 0, len(keep))
	for _, i := range keep {
		if d := series[i].DurationS; d > 0 && !math.IsInf(d, 0) {
			dpos = append(dpos, i)
			dlog = append(dlog, math.Log(d))
		}
	}
	if lo, c, ok := lastChange(dlog, cfg, -fast, slow); ok {
		f, sides := compare(series, keep, dpos[lo], dpos[c])
		f.Verdict, f.Outliers = Stable, outIdx
		f.Note = noteDuration(f)
		return watch(f), sides
	}

	all := mibps(series, keep)
	m := Median(all)
	f := Finding{
		Verdict: Stable, ChangeIndex: -1, BaselineMiBps: m, CurrentMiBps: m, Ratio: 1,
		BaselineN: len(keep), PValue: 1, Outliers: outIdx,
	}
	f.Note = noteStable(f)
	return watch(f), nil
}

// usual returns the kept restores the newest ones are judged against: the
// last UsualWindow restores of the regime the series is in (since from),
// before series index before, so a watch compares with what the DBA has
// lately seen.
func usual(keep []int, from, before int) []int {
	a, _ := slices.BinarySearch(keep, from)
	b, _ := slices.BinarySearch(keep, before)
	if a >= b {
		return nil // from at or after before: no restore between
	}
	if b-a > UsualWindow {
		a = b - UsualWindow
	}
	return keep[a:b]
}

// UsualWindow is how many recent restores make "usual" for a watch, and
// confirmBase the fewest that let two restores confirm a change.
const (
	UsualWindow = 30
	confirmBase = 10
	// maxRun is the longest run of newest restores the confirmation
	// judges: by then the change-point rule (MinEach restores after a
	// change) has dated any change it will.
	maxRun = 10
)

// beyond says whether throughput x lies beyond the usual restores base:
// below every one of them and at most lo times their median (slower, -1),
// or above every one and at least hi times it (faster, +1); 0 otherwise.
func beyond(series []Point, base []int, x, lo, hi float64, cfg Config) int {
	if len(base) < cfg.MinEach || !(x > 0) {
		return 0
	}
	v := mibps(series, base)
	m := Median(v)
	switch {
	case x < slices.Min(v) && x <= lo*m:
		return -1
	case x > slices.Max(v) && x >= hi*m:
		return 1
	}
	return 0
}

// ConfirmSpread is how far from the usual a restore confirming a change
// must lie (besides beyond every recent restore): beyond the ±25 % SPEC §5
// calls stable, with a margin (a median of 30 noisy restores is itself a
// few per cent off), so that a one-off slow restore followed by an
// ordinary low one does not confirm. The walk-forward replays in
// watch_sim_test.go set it: at 0.25, 12 of 200 null series-years raised a
// regression that vanished; at 0.30, none of the 0.5× steps is late.
const ConfirmSpread = 0.30

// runSpread bounds how far the restores of a confirming run may differ
// from each other: the widest two draws of the stable ±25 % can.
const runSpread = 1.25 / 0.75

// watchOf describes the restore at series index i when it lies beyond the
// usual of its regime (since from); nil when it does not.
func watchOf(series []Point, keep []int, i, from int, cfg Config) *Watch {
	base := usual(keep, from, i)
	dir := beyond(series, base, series[i].MiBps, cfg.Ratio, cfg.ImproveRatio, cfg)
	if dir == 0 {
		return nil
	}
	m := Median(mibps(series, base))
	w := &Watch{Index: i, Direction: Regression, UsualMiBps: m, UsualN: len(base), Ratio: series[i].MiBps / m}
	if dir > 0 {
		w.Direction = Improvement
	}
	var ds []float64
	for _, j := range base {
		if d := series[j].DurationS; d > 0 {
			ds = append(ds, d)
		}
	}
	if d := series[i].DurationS; d > 0 && len(ds) > 0 {
		w.DurationRatio = d / Median(ds)
	}
	return w
}

// confirm judges the run of restores that ends the series (series
// indexes, oldest first) as a change: when every one lies beyond every
// usual restore of the regime before the run (since from) and outside its
// stable spread, in one direction, and the median of the run is a
// material change (Ratio, ImproveRatio), it is a regression (or
// improvement) dated to the run's first restore, compared with that usual.
func confirm(series []Point, keep, run []int, from int, cfg Config) (Finding, *changeSides, bool) {
	base := usual(keep, from, run[0])
	if len(base) < confirmBase {
		return Finding{}, nil, false // too young to know its usual: the change-point rule's three decide
	}
	lo, hi := 1-ConfirmSpread, 1/(1-ConfirmSpread)
	d := beyond(series, base, series[run[len(run)-1]].MiBps, lo, hi, cfg)
	if d == 0 {
		return Finding{}, nil, false
	}
	for _, i := range run[:len(run)-1] {
		if beyond(series, base, series[i].MiBps, lo, hi, cfg) != d {
			return Finding{}, nil, false
		}
	}
	// The run agrees with itself, as restores of one new regime do (the
	// ±25 % SPEC §5 calls stable, fastest over slowest at most 1.25/0.75):
	// a one-off at a third of the speed followed by an ordinary low
	// restore is two things, not one change.
	speeds := mibps(series, run)
	if slices.Max(speeds) > slices.Min(speeds)*runSpread {
		return Finding{}, nil, false
	}
	idx := append(slices.Clone(base), run...)
	f, sides := compare(series, idx, base[0], run[0])
	if d < 0 && f.Ratio > cfg.Ratio || d > 0 && f.Ratio < cfg.ImproveRatio {
		return Finding{}, nil, false
	}
	f.Verdict, f.Confirmed = Regression, true
	if d > 0 {
		f.Verdict = Improvement
	}
	if cfg.Bootstrap > 0 {
		f.RatioLow, f.RatioHigh = BootstrapRatio(mibps(series, base), mibps(series, run), cfg.Bootstrap, cfg.Seed)
	}
	f.Note = noteChange(f)
	return f, sides, true
}

// lastChange finds the most recent lasting change of level in logx and
// returns the position where the segment before it starts (lo) and the
// position of the first value after it (c). A change lasts when the
// medians on either side differ by at least the materiality thresholds
// (log ratio <= down or >= up) and the one-sided rank test in that
// direction gives p < Alpha. Segmentation proposes changes; the weakest
// failing one is merged away and the rest re-judged against the merged
// segments, so a slide in small steps still adds up to one change.
func lastChange(logx []float64, cfg Config, down, up float64) (lo, c int, ok bool) {
	n := len(logx)
	if n < 2*cfg.MinEach {
		return 0, 0, false
	}
	sigma := max(noiseSigma(logx), minSigma)
	cps := ChangePoints(logx, cfg.MinEach, penaltyFactor*math.Log(float64(n))*sigma*sigma)
	// Judgements are cached and only the two neighbours of a merged change
	// are judged again, so a long series with many proposed changes costs
	// O(changes · n log n), not its square.
	type judgement struct {
		d, p  float64
		valid bool
	}
	js := make([]judgement, len(cps))
	for len(cps) > 0 {
		weakest, weakestSize := -1, math.Inf(1)
		for k, cp := range cps {
			if !js[k].valid {
				from, to := 0, n
				if k > 0 {
					from = cps[k-1]
				}
				if k+1 < len(cps) {
					to = cps[k+1]
				}
				d, p := shift(logx[from:cp], logx[cp:to])
				js[k] = judgement{d, p, true}
			}
			j := js[k]
			if (j.d <= down || j.d >= up) && j.p < cfg.Alpha {
				continue
			}
			if math.Abs(j.d) < weakestSize {
				weakest, weakestSize = k, math.Abs(j.d)
			}
		}
		if weakest < 0 {
			if len(cps) > 1 {
				lo = cps[len(cps)-2]
			}
			return lo, cps[len(cps)-1], true
		}
		cps = slices.Delete(cps, weakest, weakest+1)
		js = slices.Delete(js, weakest, weakest+1)
		if weakest > 0 {
			js[weakest-1].valid = false
		}
		if weakest < len(js) {
			js[weakest].valid = false
		}
	}
	return 0, 0, false
}

// shift returns the log of the ratio of medians after/before, and the
// one-sided rank-test p-value in the direction of that ratio.
func shift(before, after []float64) (d, p float64) {
	d = logMedian(after) - logMedian(before)
	if d <= 0 {
		_, p = MannWhitneyU(after, before)
	} else {
		_, p = MannWhitneyU(before, after)
	}
	return d, p
}

// logMedian is the log of the median of exp(x): medians of throughput are
// what the page shows, so materiality is judged on the same figure.
func logMedian(logx []float64) float64 {
	buf := make([]float64, len(logx))
	for i, x := range logx {
		buf[i] = math.Exp(x)
	}
	return math.Log(medianInPlace(buf))
}

// split returns the kept series indexes in [from, at) and [at, end).
func split(keep []int, from, at int) (before, after []int) {
	for _, i := range keep {
		switch {
		case i >= at:
			after = append(after, i)
		case i >= from:
			before = append(before, i)
		}
	}
	return before, after
}

// compare fills the figures of a finding for the change at series index at,
// with the baseline starting at series index from, all but ChangedFactors:
// it returns the sides to rank them from.
func compare(series []Point, keep []int, from, at int) (Finding, *changeSides) {
	b, a := split(keep, from, at)
	mb, ma := mibps(series, b), mibps(series, a)
	f := Finding{
		ChangeIndex: at, ChangedAt: series[at].At,
		BaselineMiBps: Median(mb), CurrentMiBps: Median(ma),
		BaselineN: len(b), CurrentN: len(a),
	}
	f.Ratio = f.CurrentMiBps / f.BaselineMiBps
	if f.Ratio <= 1 {
		_, f.PValue = MannWhitneyU(ma, mb)
	} else {
		_, f.PValue = MannWhitneyU(mb, ma)
	}
	f.SizeGrowth = medianRatio(series, b, a, func(p Point) float64 { return float64(p.Bytes) })
	f.DurationRatio = medianRatio(series, b, a, func(p Point) float64 { return p.DurationS })
	return f, &changeSides{before: b, after: a}
}

func mibps(series []Point, idx []int) []float64 {
	out := make([]float64, len(idx))
	for j, i := range idx {
		out[j] = series[i].MiBps
	}
	return out
}

// medianRatio compares the medians of the known (positive) values of one
// field; 0 when either side knows none.
func medianRatio(series []Point, b, a []int, field func(Point) float64) float64 {
	known := func(idx []int) []float64 {
		var v []float64
		for _, i := range idx {
			if x := field(series[i]); x > 0 {
				v = append(v, x)
			}
		}
		return v
	}
	vb, va := known(b), known(a)
	if len(vb) == 0 || len(va) == 0 {
		return 0
	}
	return Median(va) / Median(vb)
}
