package analysis

import (
	"math"
	"slices"
)

// ChangePoints splits logx into segments of different mean by binary
// segmentation and returns, in ascending order, the index of the first
// value of every segment but the first. A split is kept only when it lowers
// the sum of squared deviations by more than penalty and leaves at least
// minSeg values on each side; the caller scales penalty by the noise
// variance (Detect uses penaltyFactor·ln(n)·σ²). Least squares on log
// throughput is the maximum-likelihood location of a step in lognormal
// data, which is why the input is the logarithm.
//
// Binary segmentation costs O(n log n) when changes are few, but O(n·k)
// for k changes that each split off a short piece, so the search stops at
// maxChanges changes; it searches the later side of each split first, so
// what a cap leaves unsplit is the old history, not the current level.
func ChangePoints(logx []float64, minSeg int, penalty float64) []int {
	minSeg = max(minSeg, 1)
	n := len(logx)
	// Prefix sums make the cost of any segment O(1).
	s1 := make([]float64, n+1)
	s2 := make([]float64, n+1)
	for i, x := range logx {
		s1[i+1] = s1[i] + x
		s2[i+1] = s2[i] + x*x
	}
	sse := func(lo, hi int) float64 {
		k := float64(hi - lo)
		sum := s1[hi] - s1[lo]
		return max(s2[hi]-s2[lo]-sum*sum/k, 0)
	}
	var cps []int
	var split func(lo, hi int)
	split = func(lo, hi int) {
		if hi-lo < 2*minSeg || len(cps) >= maxChanges {
			return
		}
		whole := sse(lo, hi)
		best, bestGain := -1, penalty
		for c := lo + minSeg; c <= hi-minSeg; c++ {
			if gain := whole - sse(lo, c) - sse(c, hi); gain > bestGain {
				best, bestGain = c, gain
			}
		}
		if best < 0 {
			return
		}
		cps = append(cps, best)
		split(best, hi)
		split(lo, best)
	}
	split(0, n)
	slices.Sort(cps)
	return cps
}

// maxChanges bounds ChangePoints. No real restore series has hundreds of
// lasting levels; one that seems to is noise at a scale the penalty does
// not expect, and the cap keeps it from costing seconds.
const maxChanges = 256

// noiseSigma estimates the standard deviation of the noise around the
// level from successive differences (MAD of the differences, scaled, over
// √2). A step or a lone outlier spoils only one or two differences, so the
// estimate stays honest on exactly the series we most need it for, where a
// plain standard deviation would count the step itself as noise.
func noiseSigma(logx []float64) float64 {
	if len(logx) < 3 {
		return 0
	}
	d := make([]float64, len(logx)-1)
	for i := range d {
		d[i] = logx[i+1] - logx[i]
	}
	return madScale * MAD(d) / math.Sqrt2
}

// outlierRule holds the thresholds of findOutliers, all in log units.
type outlierRule struct {
	k       float64 // deviations in noise sigmas
	slowMin float64 // least drop that matters, ln(1/Config.Ratio)
	fastMin float64 // least rise that matters, ln(Config.ImproveRatio)
	maxRun  int     // longest excursion still called an outlier
	window  int     // values on each side that define the local level
}

// findOutliers returns the positions in logx of brief excursions: runs of
// at most maxRun consecutive values that all lie beyond the threshold in
// the same direction from the median of up to window values on each side,
// while the values just outside the run do not. Comparing with each side
// separately, instead of with one global median, keeps the last fast
// restore before a real step, or the first slow one after it, from being
// called an outlier: it agrees with its own side. The threshold is the
// larger of the materiality thresholds (so noise alone never makes an
// outlier) and k noise sigmas, the sigma estimated with the run left out so
// that the excursion does not widen its own tolerance.
func findOutliers(logx []float64, r outlierRule) []int {
	n := len(logx)
	var out []int
	taken := make([]bool, n)
	side := make([]float64, 0, r.window)
	med := func(lo, hi int) (float64, bool) {
		lo, hi = max(lo, 0), min(hi, n)
		if hi <= lo {
			return 0, false
		}
		side = append(side[:0], logx[lo:hi]...)
		return medianInPlace(side), true
	}
	// Leaving the run out matters on short series, where two spoilt
	// differences move the MAD; on long ones it changes nothing visible and
	// would cost a sort per candidate, quadratic on a noisy log-shipping
	// series of thousands of restores.
	var rest []float64
	sigmaAll := -1.0
	leaveOut := func(s, L int) float64 {
		if n > leaveOutMax {
			if sigmaAll < 0 {
				sigmaAll = noiseSigma(logx)
			}
			return sigmaAll
		}
		rest = append(append(rest[:0], logx[:s]...), logx[s+L:]...)
		return noiseSigma(rest)
	}
	for L := 1; L <= r.maxRun; L++ {
		for s := 0; s+L <= n; s++ {
			if slices.Contains(taken[s:s+L], true) {
				continue
			}
			left, okL := med(s-r.window, s)
			right, okR := med(s+L, s+L+r.window)
			if !okL && !okR {
				continue
			}
			for _, dir := range [2]float64{-1, 1} {
				thr := r.fastMin
				if dir < 0 {
					thr = r.slowMin
				}
				beyond := func(x float64) bool {
					return (!okL || dir*(x-left) > thr) && (!okR || dir*(x-right) > thr)
				}
				if !allBeyond(logx[s:s+L], beyond) || (s > 0 && beyond(logx[s-1])) || (s+L < n && beyond(logx[s+L])) {
					continue
				}
				// Material; now check it is also more than noise. Done
				// only here because it costs a sort of the whole series.
				thr = max(thr, r.k*leaveOut(s, L))
				if !allBeyond(logx[s:s+L], beyond) {
					continue
				}
				for i := s; i < s+L; i++ {
					taken[i] = true
					out = append(out, i)
				}
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// leaveOutMax is the longest series on which findOutliers re-estimates the
// noise without each candidate.
const leaveOutMax = 64

func allBeyond(xs []float64, beyond func(float64) bool) bool {
	for _, x := range xs {
		if !beyond(x) {
			return false
		}
	}
	return true
}
