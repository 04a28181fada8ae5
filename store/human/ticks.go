package human

import "math"

// tickSteps are the steps a reader counts time in, in seconds: seconds,
// minutes, hours and days on the clock's own divisions.
var tickSteps = []float64{
	1, 2, 5, 10, 15, 30, // s
	60, 2 * 60, 5 * 60, 10 * 60, 15 * 60, 30 * 60, // min
	3600, 2 * 3600, 3 * 3600, 6 * 3600, 12 * 3600, // h
	86400, 2 * 86400, 7 * 86400, 14 * 86400, 28 * 86400, // d
}

// TickStep returns the step, in seconds, between the ticks of a duration
// axis spanning spanSeconds with at most maxTicks ticks: the smallest of
// 1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15, 30 min, 1, 2, 3, 6, 12 h,
// 1, 2, 7, 14, 28 d for which span/step <= maxTicks-1, so ticks at the
// multiples of the step number at most maxTicks wherever the span starts.
// Below a second the steps are 1, 2 and 5 times a power of ten (0.5, 0.2,
// 0.1, 0.05 s …); beyond 28 days, 1, 2 and 5 times a power of ten days
// (50, 100, 200 d …); never below a nanosecond. A maxTicks below 2 counts as 2; a span that is zero,
// negative or not finite has no ticks to space and returns 1.
func TickStep(spanSeconds float64, maxTicks int) float64 {
	span := spanSeconds
	if math.IsNaN(span) || math.IsInf(span, 0) || span <= 0 {
		return 1
	}
	intervals := float64(max(maxTicks, 2) - 1)
	raw := span / intervals // the smallest step that fits
	if raw <= 1 {
		return niceAtLeast(max(raw, 1e-9)) // no axis needs steps below a nanosecond
	}
	for _, s := range tickSteps {
		if s >= raw {
			return s
		}
	}
	return niceAtLeast(raw/86400) * 86400
}

// niceAtLeast returns the smallest 1, 2 or 5 × 10^k that is >= v > 0.
func niceAtLeast(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		// A relative tolerance keeps 0.3/3 (0.09999…) from stepping up.
		if m*p >= v*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}
