package analysis

import (
	"math"
	"math/rand/v2"
	"slices"
)

// madScale turns a median absolute deviation into an estimate of the
// standard deviation of normally distributed data.
const madScale = 1.4826

// Median returns the median of xs, the mean of the two middle values when
// len(xs) is even, and NaN when xs is empty. xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	buf := slices.Clone(xs)
	return medianInPlace(buf)
}

// MAD returns the median absolute deviation of xs from its median, unscaled
// (multiply by 1.4826 for a normal-consistent standard deviation), and NaN
// when xs is empty. It is the robust spread the outlier rule is built on:
// one wild value moves it by at most one rank.
func MAD(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	buf := slices.Clone(xs)
	m := medianInPlace(buf)
	for i, x := range xs {
		buf[i] = math.Abs(x - m)
	}
	return medianInPlace(buf)
}

// medianInPlace reorders buf. It selects rather than sorts because the
// bootstrap calls it a thousand times per flagged series.
func medianInPlace(buf []float64) float64 {
	n := len(buf)
	if n == 0 {
		return math.NaN()
	}
	k := n / 2
	hi := selectKth(buf, k)
	if n%2 == 1 {
		return hi
	}
	// After selection every value left of k is <= buf[k]; the lower middle
	// is their maximum.
	lo := buf[0]
	for _, v := range buf[1:k] {
		lo = max(lo, v)
	}
	return (lo + hi) / 2
}

// selectKth partially orders buf so that buf[k] holds the k-th smallest
// value (0-based) with smaller-or-equal values before it, and returns it.
func selectKth(buf []float64, k int) float64 {
	lo, hi := 0, len(buf)-1
	for hi > lo {
		if hi-lo < 12 {
			insertionSort(buf[lo : hi+1])
			break
		}
		// Median of three keeps already-sorted input (a time series often
		// is nearly sorted) from going quadratic.
		mid := lo + (hi-lo)/2
		if buf[mid] < buf[lo] {
			buf[mid], buf[lo] = buf[lo], buf[mid]
		}
		if buf[hi] < buf[lo] {
			buf[hi], buf[lo] = buf[lo], buf[hi]
		}
		if buf[hi] < buf[mid] {
			buf[hi], buf[mid] = buf[mid], buf[hi]
		}
		pivot := buf[mid]
		i, j := lo, hi
		for i <= j {
			for buf[i] < pivot {
				i++
			}
			for buf[j] > pivot {
				j--
			}
			if i <= j {
				buf[i], buf[j] = buf[j], buf[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return buf[k]
		}
	}
	return buf[k]
}

func insertionSort(xs []float64) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// quantile returns the type-7 (linear interpolation, the R and numpy
// default) quantile of an ascending slice.
func quantile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := p * float64(n-1)
	i := int(math.Floor(h))
	if i >= n-1 {
		return sorted[n-1]
	}
	return sorted[i] + (h-float64(i))*(sorted[i+1]-sorted[i])
}

// MannWhitneyU returns the Mann–Whitney U statistic of a against b (the
// number of pairs with a[i] > b[j], ties counting one half) and the
// one-sided p-value for "a tends to be smaller than b": the probability,
// were both samples from one distribution, of a U this small or smaller.
//
// The p-value is exact (the full permutation distribution) when there are
// no ties and len(a)+len(b) <= 50, which covers the small before/after
// samples a regression is judged on; otherwise it is the normal
// approximation with tie and continuity corrections. Empty input gives
// u = 0, pLess = 1.
func MannWhitneyU(a, b []float64) (u, pLess float64) {
	m, n := len(a), len(b)
	if m == 0 || n == 0 {
		return 0, 1
	}
	type obs struct {
		v   float64
		inA bool
	}
	all := make([]obs, 0, m+n)
	for _, v := range a {
		all = append(all, obs{v, true})
	}
	for _, v := range b {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(x, y obs) int {
		switch {
		case x.v < y.v:
			return -1
		case x.v > y.v:
			return 1
		}
		return 0
	})
	// Midranks, and the tie term sum(t^3 - t) for the variance correction.
	var rankSumA, tieTerm float64
	ties := false
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		mid := float64(i+j+1) / 2 // ranks i+1..j averaged
		for k := i; k < j; k++ {
			if all[k].inA {
				rankSumA += mid
			}
		}
		if t := float64(j - i); t > 1 {
			ties = true
			tieTerm += t*t*t - t
		}
		i = j
	}
	u = rankSumA - float64(m*(m+1))/2
	N := m + n
	if !ties && N <= 50 {
		return u, exactULess(m, n, int(math.Round(u)))
	}
	mf, nf, Nf := float64(m), float64(n), float64(N)
	variance := mf * nf / 12 * ((Nf + 1) - tieTerm/(Nf*(Nf-1)))
	if variance <= 0 {
		return u, 1 // every value tied: no evidence either way
	}
	z := (u - mf*nf/2 + 0.5) / math.Sqrt(variance)
	return u, normalCDF(z)
}

// exactULess returns P(U <= u) for sample sizes m and n without ties. The
// counts of U are the coefficients of the Gaussian binomial [m+n choose m]
// in q, built as prod_{i=1..k} (1 - q^(l+i)) / (1 - q^i) with k the smaller
// size: O(k·m·n) integer steps instead of a three-dimensional recursion.
func exactULess(m, n, u int) float64 {
	k, l := min(m, n), max(m, n)
	if u < 0 {
		return 0
	}
	if u >= m*n {
		return 1
	}
	c := make([]int64, m*n+1)
	c[0] = 1
	for i := 1; i <= k; i++ {
		// Multiply by (1 - q^(l+i)) from the top down so each coefficient
		// reads the old value below it.
		for d := len(c) - 1; d >= l+i; d-- {
			c[d] -= c[d-(l+i)]
		}
		// Divide by (1 - q^i): a running sum with stride i.
		for d := i; d < len(c); d++ {
			c[d] += c[d-i]
		}
	}
	var below, total int64
	for d, v := range c {
		if d <= u {
			below += v
		}
		total += v
	}
	return float64(below) / float64(total)
}

func normalCDF(z float64) float64 {
	return 0.5 * math.Erfc(-z/math.Sqrt2)
}

// BootstrapRatio returns a percentile bootstrap 95 % interval for
// Median(b)/Median(a), resampling each sample with replacement n times.
// The same seed gives the same interval, so a page and its printed report
// agree. With very small samples the interval is coarse (a resampled median
// can only take observed values), which is why it is shown beside, not
// instead of, the rank test. Empty input or n < 1 gives NaN, NaN.
func BootstrapRatio(a, b []float64, n int, seed uint64) (lo, hi float64) {
	if len(a) == 0 || len(b) == 0 || n < 1 {
		return math.NaN(), math.NaN()
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	ra, rb := newResampler(a), newResampler(b)
	ratios := make([]float64, n)
	for r := range ratios {
		ratios[r] = rb.median(rng) / ra.median(rng)
	}
	slices.Sort(ratios)
	return quantile(ratios, 0.025), quantile(ratios, 0.975)
}

// resampler draws the median of a bootstrap resample without building the
// resample: on the sorted sample, a resample is a count per position, and
// its median is found by walking the counts. This is O(n) without
// comparisons, several times faster than selecting on a copy, and the
// bootstrap is most of the cost of a flagged series.
type resampler struct {
	sorted []float64
	count  []int32
}

func newResampler(xs []float64) resampler {
	return resampler{sorted: slices.Sorted(slices.Values(xs)), count: make([]int32, len(xs))}
}

func (r resampler) median(rng *rand.Rand) float64 {
	n := len(r.sorted)
	clear(r.count)
	// Two indexes per 64-bit draw by multiply-shift: the generator is
	// half the cost of a resample, and the bias, under n/2^32, is far
	// below anything a 95 % interval can show.
	un := uint64(n)
	for i := 0; i < n; i += 2 {
		x := rng.Uint64()
		r.count[((x&0xffffffff)*un)>>32]++
		if i+1 < n {
			r.count[((x>>32)*un)>>32]++
		}
	}
	// Values at 0-based ranks lo and hi of the resample (equal when n is
	// odd).
	lo, hi := (n-1)/2, n/2
	seen := 0
	var vlo float64
	for i, c := range r.count {
		if c == 0 {
			continue
		}
		if seen <= lo && lo < seen+int(c) {
			vlo = r.sorted[i]
		}
		if hi < seen+int(c) {
			return (vlo + r.sorted[i]) / 2
		}
		seen += int(c)
	}
	return vlo // not reached: the counts sum to n
}
