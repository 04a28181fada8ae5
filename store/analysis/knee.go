package analysis

import "github.com/restorewatch/restorewatch/store"

// Knee detection. Throughput is read as percent per second between
// consecutive samples; the knee is the sample after which the rate stays
// below a third of the rate before it (seed 000: a 16 TB restore at 2 GB/s
// that drops to 100 MB/s after 55 %).
const (
	kneeRatio   = 3.0
	kneeMinSide = 3 // segments on each side, so one slow sample is no knee
	// kneeMinSpan is the progress (percent) each side must cover, so that
	// a pause in the last percent before redo is no knee.
	kneeMinSpan = 5.0
)

// Knee returns the index of the point where a restore's progress curve
// slows down for good: the split that maximises the ratio of the average
// rate before it to the average rate after it, accepted when that ratio
// exceeds 3, with at least 3 segments and 5 percent of progress on each side. Points must be in time
// order. The flat start (file zeroing, percent still 0) and the flat end
// (redo and undo at 100 %) are not part of the copy and are left out.
func Knee(points []store.CurvePoint) (index int, ok bool) {
	type seg struct {
		i      int // index of the point that starts the segment
		dp, dt float64
	}
	var segs []seg
	for i := 1; i < len(points); i++ {
		a, b := points[i-1], points[i]
		dt := b.At.Sub(a.At).Seconds()
		if dt <= 0 || a.Percent >= 100 {
			continue
		}
		if len(segs) == 0 && b.Percent <= a.Percent {
			continue // not copying yet
		}
		segs = append(segs, seg{i: i - 1, dp: max(0, b.Percent-a.Percent), dt: dt})
	}
	if len(segs) < 2*kneeMinSide {
		return 0, false
	}
	var totP, totT float64
	for _, s := range segs {
		totP += s.dp
		totT += s.dt
	}
	best, bestRatio := -1, 0.0
	var p, t float64
	for k := 0; k < len(segs)-kneeMinSide; k++ {
		p += segs[k].dp
		t += segs[k].dt
		if k+1 < kneeMinSide {
			continue
		}
		before := p / t
		afterP, afterT := totP-p, totT-t
		if p < kneeMinSpan || afterP < kneeMinSpan || afterT <= 0 {
			continue
		}
		if ratio := before / (afterP / afterT); ratio > bestRatio {
			best, bestRatio = segs[k+1].i, ratio
		}
	}
	if best < 0 || bestRatio <= kneeRatio {
		return 0, false
	}
	return best, true
}

// KneeRates are the copy rates, in percent per minute, before and after the
// knee at index k, leaving out the flat start (file zeroing, percent still
// 0) and the flat end (redo and undo at 100 %) as Knee does, so every page
// that states a knee states the same numbers.
func KneeRates(points []store.CurvePoint, k int) (before, after float64) {
	first := 0
	for first < k && points[first+1].Percent <= points[first].Percent {
		first++
	}
	last := len(points) - 1
	for i := k + 1; i < len(points); i++ {
		if points[i].Percent >= 100 {
			last = i
			break
		}
	}
	rate := func(a, b store.CurvePoint) float64 {
		return (b.Percent - a.Percent) / b.At.Sub(a.At).Minutes()
	}
	return rate(points[first], points[k]), rate(points[k], points[last])
}
