package analysis

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// CohortPoint is one restore placed in a group (an instance build, a source
// build, …) with its speed relative to its own series: its MiB/s divided
// by the baseline median of its series. Relative speeds let restores of
// very different databases share one table.
type CohortPoint struct {
	Group string
	Rel   float64 // <= 0 or not finite = unknown, skipped
}

// Cohort summarises the relative speeds of one group.
type Cohort struct {
	Group                    string
	N                        int
	Median, Q1, Q3, Min, Max float64
	CILow, CIHigh            float64 // 95 % interval of the median (see Cohorts)
}

// Cohorts groups the points and summarises each group, groups ordered as
// builds when their names parse as builds (13.0.4474.0 before 13.0.5026.0)
// and as text otherwise. Quartiles are type 7 (as R and numpy).
//
// The interval of the median is the distribution-free order-statistic one:
// the ranks j and n+1−j with P(Binomial(n, ½) < j) <= 2.5 %, exact up to
// 1,000 restores and by the normal approximation above. It needs no
// resampling, so a fleet-wide table of a million restores costs one sort
// per group. Below 6 restores no pair of ranks reaches 95 %, and the
// interval is [Min, Max] (93.75 % for 5, 87.5 % for 4, …).
func Cohorts(points []CohortPoint) []Cohort {
	groups := map[string][]float64{}
	for _, p := range points {
		if p.Rel > 0 && !math.IsInf(p.Rel, 0) {
			groups[p.Group] = append(groups[p.Group], p.Rel)
		}
	}
	return CohortsOf(groups)
}

// CohortsOf is Cohorts of points already grouped, every value positive and
// finite; it sorts each group's values in place. A fleet's restores are
// grouped as they are read, without a point per restore (10 M of them
// took gigabytes).
func CohortsOf(groups map[string][]float64) []Cohort {
	out := make([]Cohort, 0, len(groups))
	for g, xs := range groups {
		slices.Sort(xs)
		lo, hi := medianCI(xs)
		out = append(out, Cohort{
			Group: g, N: len(xs),
			Median: quantile(xs, 0.5), Q1: quantile(xs, 0.25), Q3: quantile(xs, 0.75),
			Min: xs[0], Max: xs[len(xs)-1], CILow: lo, CIHigh: hi,
		})
	}
	slices.SortFunc(out, func(a, b Cohort) int { return compareGroups(a.Group, b.Group) })
	return out
}

func compareGroups(a, b string) int {
	ba, errA := parseBuild(a)
	bb, errB := parseBuild(b)
	if errA == nil && errB == nil {
		if c := compareBuilds(ba, bb); c != 0 {
			return c
		}
	}
	return cmp.Compare(a, b)
}

// medianCI returns the order-statistic 95 % interval of the median of an
// ascending slice.
func medianCI(sorted []float64) (lo, hi float64) {
	n := len(sorted)
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	j := medianCIRank(n)
	return sorted[j-1], sorted[n-j]
}

// medianCIRank returns the 1-based rank j of the lower bound; at least 1.
func medianCIRank(n int) int {
	if n > 1000 {
		j := int(math.Floor(float64(n)/2 - 1.959964*math.Sqrt(float64(n))/2))
		return max(j, 1)
	}
	// Largest j with P(X <= j-1) <= 0.025 for X ~ Binomial(n, 1/2).
	lnN := lgamma(float64(n) + 1)
	cdf := 0.0
	j := 0
	for k := 0; k <= n; k++ {
		cdf += math.Exp(lnN - lgamma(float64(k)+1) - lgamma(float64(n-k)+1) - float64(n)*math.Ln2)
		if cdf > 0.025 {
			break
		}
		j = k + 1
	}
	return max(j, 1)
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// Comparison sets two samples of throughput (or relative speed) side by
// side: two builds, two instances, two periods.
type Comparison struct {
	NA, NB              int
	MedianA, MedianB    float64
	Ratio               float64 // MedianB / MedianA
	RatioLow, RatioHigh float64 // 95 % interval of Ratio
	PValue              float64 // two-sided Mann–Whitney
}

// bootstrapCap bounds the samples Compare resamples: above it a thousand
// bootstrap medians would take seconds, and the order-statistic intervals
// are then tight enough to combine on the log scale instead.
const bootstrapCap = 20000

// Compare compares b with a. Values <= 0 or not finite are skipped. The
// interval of the ratio is a percentile bootstrap (seeded, so a page and
// its report agree) up to bootstrapCap values in all; above that it
// combines the two medians' order-statistic intervals on the log scale.
func Compare(a, b []float64, seed uint64) Comparison {
	a, b = positive(a), positive(b)
	c := Comparison{NA: len(a), NB: len(b), MedianA: Median(a), MedianB: Median(b)}
	c.Ratio = c.MedianB / c.MedianA
	if len(a) == 0 || len(b) == 0 {
		c.RatioLow, c.RatioHigh, c.PValue = math.NaN(), math.NaN(), math.NaN()
		return c
	}
	_, pBLess := MannWhitneyU(b, a)
	_, pALess := MannWhitneyU(a, b)
	c.PValue = min(1, 2*min(pBLess, pALess))
	if len(a)+len(b) <= bootstrapCap {
		c.RatioLow, c.RatioHigh = BootstrapRatio(a, b, DefaultConfig().Bootstrap, seed)
		return c
	}
	se := func(xs []float64) float64 {
		s := slices.Sorted(slices.Values(xs))
		lo, hi := medianCI(s)
		return (math.Log(hi) - math.Log(lo)) / (2 * 1.959964)
	}
	half := 1.959964 * math.Hypot(se(a), se(b))
	c.RatioLow, c.RatioHigh = c.Ratio*math.Exp(-half), c.Ratio*math.Exp(half)
	return c
}

func positive(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if x > 0 && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	return out
}

// TimeLost is the wall time side B of a comparison loses against side A:
// each restore of B's latest year would take Ratio of its time at A's
// relative speed. PerRestoreH is the typical restore's hours, TotalH the
// year's, over Restores restores with a known duration.
type TimeLost struct {
	PerRestoreH, TotalH float64
	Restores            int
}

// LostTo is the time b (side B's restores) loses at c's ratio; ok is false
// unless B is materially (at most 0.9×: 0.99× is noise even when a large
// sample makes it "significant") and significantly (p < 0.05) slower, and
// some restore of its latest year has a duration.
func LostTo(c Comparison, b []store.RelativeSpeed) (TimeLost, bool) {
	if !(c.Ratio > 0) || c.Ratio > 0.9 || math.IsInf(c.Ratio, 0) || !(c.PValue < 0.05) {
		return TimeLost{}, false
	}
	var newest time.Time
	for _, r := range b {
		if r.At.After(newest) {
			newest = r.At
		}
	}
	var total float64
	var durs []float64
	for _, r := range b {
		if r.DurationS > 0 && r.At.After(newest.AddDate(-1, 0, 0)) {
			total += r.DurationS * (1 - c.Ratio)
			durs = append(durs, r.DurationS)
		}
	}
	if len(durs) == 0 {
		return TimeLost{}, false
	}
	return TimeLost{PerRestoreH: Median(durs) * (1 - c.Ratio) / 3600, TotalH: total / 3600, Restores: len(durs)}, true
}
