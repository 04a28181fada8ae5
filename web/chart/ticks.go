package chart

import (
	"github.com/restorewatch/restorewatch/store/human"

	"math"
	"time"
)

// maxTicks bounds every tick loop so that absurd inputs (huge ranges, tiny
// steps, float precision limits) can never loop long or allocate much.
const maxTicks = 1000

// niceStep returns a 1, 2 or 5 × 10^k step near raw, as the mantissa m (1,
// 2, 5 or 10) and exponent k, so callers can build ticks from integers and
// avoid accumulating floating-point error. With round the step is the
// nearest on a log scale (thresholds √2, √10, √50, as in d3), so the tick
// count stays close to the request; otherwise it is the smallest step ≥ raw.
func niceStep(raw float64, round bool) (m float64, k int) {
	k = int(math.Floor(math.Log10(raw)))
	f := raw / math.Pow(10, float64(k))
	t1, t2, t5 := 1.0, 2.0, 5.0
	if round {
		t1, t2, t5 = math.Sqrt2, math.Sqrt(10), math.Sqrt(50)
	}
	switch {
	case f <= t1:
		m = 1
	case f <= t2:
		m = 2
	case f <= t5:
		m = 5
	default:
		m = 10
	}
	return m, k
}

// scaled returns i×m×10^k, dividing by a power of ten for negative k so that
// e.g. 3×0.1 comes out as 0.3 and not 0.30000000000000004.
func scaled(i, m float64, k int) float64 {
	if k < 0 {
		return i * m / math.Pow(10, float64(-k))
	}
	return i * m * math.Pow(10, float64(k))
}

// NiceTicks returns roughly n evenly spaced "nice" tick values (steps of 1, 2
// or 5 × 10^k) whose first value is ≤ min and last value is ≥ max, so the
// ticks can serve directly as an axis domain. min and max may be given in
// either order. When min == max the range is widened by 10% of the value
// (or ±1 around zero) so a single value still gets an axis. It returns nil
// when min or max is NaN or infinite, or when the range is too wide to tick.
func NiceTicks(min, max float64, n int) []float64 {
	if !finite(min) || !finite(max) {
		return nil
	}
	if min > max {
		min, max = max, min
	}
	if min == max {
		d := math.Abs(min) * 0.1
		if d == 0 {
			d = 1
		}
		min, max = min-d, max+d
	}
	if n < 2 {
		n = 2
	}
	span := max - min
	if !finite(span) || span <= 0 {
		return nil
	}
	m, k := niceStep(span/float64(n-1), true)
	step := scaled(1, m, k)
	// The 1e-9 slack stops 3e-9/1e-9 = 3.0000000000000004 from adding a
	// tick; the checks below re-add one if the slack trimmed too much.
	lo := math.Floor(min/step + 1e-9)
	hi := math.Ceil(max/step - 1e-9)
	// Tick indexes must be exact integers in a float64; beyond 2^52 the
	// step is below the precision of the values themselves.
	if !finite(lo) || !finite(hi) || math.Abs(lo) > 1<<52 || math.Abs(hi) > 1<<52 {
		return nil
	}
	// Guard against float rounding making the domain miss the data.
	if scaled(lo, m, k) > min {
		lo--
	}
	if scaled(hi, m, k) < max {
		hi++
	}
	count := hi - lo
	if count < 1 || count > maxTicks {
		return nil
	}
	ticks := make([]float64, 0, int(count)+1)
	for i := 0.0; i <= count; i++ {
		ticks = append(ticks, scaled(lo+i, m, k))
	}
	return ticks
}

// LogTicks returns ticks for a log10 axis covering [min, max]. The first
// tick is ≤ min and the last ≥ max, so the ticks serve as the domain. Ticks
// are whole decades; when the data spans at most two decades the 2× and 5×
// ticks are added (and for very narrow ranges 3×, 4×, 6×…9× too) and the
// domain is trimmed to the ticks nearest the data, since a mostly empty
// decade wastes half the plot. Wide ranges skip decades to keep about ten
// ticks. Non-positive, NaN or infinite bounds return nil, because a log axis
// cannot show them.
func LogTicks(min, max float64) []float64 {
	if !finite(min) || !finite(max) || min <= 0 || max <= 0 {
		return nil
	}
	if min > max {
		min, max = max, min
	}
	if min == max { // one value: show it between half and double
		min, max = min/2, max*2
	}
	lo := math.Floor(math.Log10(min))
	hi := math.Ceil(math.Log10(max))
	if lo < -300 || hi > 300 {
		return nil
	}
	if hi-lo > 2 {
		every := math.Max(1, math.Ceil((hi-lo)/10))
		lo = math.Floor(lo/every) * every
		hi = math.Ceil(hi/every) * every
		var ticks []float64
		for e := lo; e <= hi; e += every {
			ticks = append(ticks, scaled(1, 1, int(e)))
		}
		return ticks
	}
	ticks := logMantissaTicks(min, max, lo, hi, []float64{1, 2, 5})
	if len(ticks) < 4 {
		ticks = logMantissaTicks(min, max, lo, hi, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9})
	}
	return ticks
}

// logMantissaTicks returns m×10^e for each mantissa m and decade e in
// [lo, hi], trimmed to the last tick ≤ min through the first tick ≥ max.
func logMantissaTicks(min, max, lo, hi float64, ms []float64) []float64 {
	var all []float64
	for e := lo; e <= hi; e++ {
		for _, m := range ms {
			if e == hi && m > 1 {
				break
			}
			all = append(all, scaled(1, m, int(e)))
		}
	}
	first, last := 0, len(all)-1
	for i, t := range all {
		if t <= min {
			first = i
		}
	}
	for i := len(all) - 1; i >= 0; i-- {
		if all[i] >= max {
			last = i
		}
	}
	return all[first : last+1]
}

// timeUnit is the calendar unit of a time tick step.
type timeUnit int

const (
	unitSecond timeUnit = iota
	unitMinute
	unitHour
	unitDay
	unitWeek
	unitMonth
	unitYear
)

// timeStep is one candidate tick step: n units, approx seconds long.
type timeStep struct {
	unit   timeUnit
	n      int
	approx float64
}

// timeSteps are the candidate steps, smallest first; they are the ones a
// person would choose (no 7-minute or 5-day steps).
var timeSteps = func() []timeStep {
	var s []timeStep
	add := func(u timeUnit, secs float64, ns ...int) {
		for _, n := range ns {
			s = append(s, timeStep{u, n, secs * float64(n)})
		}
	}
	add(unitSecond, 1, 1, 2, 5, 10, 15, 30)
	add(unitMinute, 60, 1, 2, 5, 10, 15, 30)
	add(unitHour, 3600, 1, 2, 3, 6, 12)
	add(unitDay, 86400, 1, 2)
	add(unitWeek, 7*86400, 1, 2)
	add(unitMonth, 30.44*86400, 1, 2, 3, 6)
	add(unitYear, 365.25*86400, 1, 2, 5, 10, 20, 50, 100)
	return s
}()

// unixSeconds returns t as float seconds since the Unix epoch without the
// overflow of time.Time.Sub for times centuries apart.
func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

// TimeTicks returns at most about n tick times within [from, to] aligned to
// calendar boundaries in from's location (whole minutes, midnight, Mondays,
// first of month, 1 January), and the time.Format layout that suits the
// step: "15:04:05" for seconds, "15:04" for minutes and hours ("Jan 2 15:04"
// when the range crosses midnight), "Jan 2" for days and weeks ("Jan 2 2006"
// across a new year), "Jan 2006" for months and "2006" for years. When from
// equals to it returns that single time with layout "2006-01-02 15:04".
func TimeTicks(from, to time.Time, n int) ([]time.Time, string) {
	loc := from.Location()
	from, to = from.In(loc), to.In(loc)
	if to.Before(from) {
		from, to = to, from
	}
	span := unixSeconds(to) - unixSeconds(from)
	if span <= 0 {
		return []time.Time{from}, "2006-01-02 15:04"
	}
	if n < 2 {
		n = 2
	}
	st := timeSteps[len(timeSteps)-1]
	found := false
	for _, c := range timeSteps {
		if span/c.approx <= float64(n) {
			st, found = c, true
			break
		}
	}
	if !found { // beyond a century per tick: nice multiples of years
		m, k := niceStep(span/(365.25*86400)/float64(n), false)
		years := math.Min(scaled(1, m, k), 1e9)
		st = timeStep{unitYear, int(years), years * 365.25 * 86400}
	}
	var ticks []time.Time
	for t := alignTime(from, st); !t.After(to) && len(ticks) < maxTicks; {
		if !t.Before(from) {
			ticks = append(ticks, t)
		}
		next := stepTime(t, st)
		if !next.After(t) { // DST fold or year overflow: never loop back
			break
		}
		t = next
	}
	return ticks, timeLayout(from, to, st.unit)
}

// timeLayout picks the label layout for a tick unit and range.
func timeLayout(from, to time.Time, u timeUnit) string {
	sameDay := from.Year() == to.Year() && from.YearDay() == to.YearDay()
	switch u {
	case unitSecond:
		return "15:04:05"
	case unitMinute, unitHour:
		if sameDay {
			return "15:04"
		}
		return "Jan 2 15:04"
	case unitDay, unitWeek:
		if from.Year() == to.Year() {
			return "Jan 2"
		}
		return "Jan 2 2006"
	case unitMonth:
		return "Jan 2006"
	default:
		return "2006"
	}
}

// floorMod is the mathematical modulus (never negative), needed for years
// before 0 and negative clock fields.
func floorMod(a, n int) int {
	r := a % n
	if r < 0 {
		r += n
	}
	return r
}

// alignTime returns the last step boundary at or before t.
func alignTime(t time.Time, st timeStep) time.Time {
	loc := t.Location()
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	switch st.unit {
	case unitSecond:
		return time.Date(y, mo, d, h, mi, s-floorMod(s, st.n), 0, loc)
	case unitMinute:
		return time.Date(y, mo, d, h, mi-floorMod(mi, st.n), 0, 0, loc)
	case unitHour:
		return time.Date(y, mo, d, h-floorMod(h, st.n), 0, 0, 0, loc)
	case unitDay:
		return time.Date(y, mo, d-floorMod(d-1, st.n), 0, 0, 0, 0, loc)
	case unitWeek: // Monday, as in ISO weeks
		return time.Date(y, mo, d-floorMod(int(t.Weekday())-1, 7), 0, 0, 0, 0, loc)
	case unitMonth:
		return time.Date(y, mo-time.Month(floorMod(int(mo)-1, st.n)), 1, 0, 0, 0, 0, loc)
	default:
		return time.Date(y-floorMod(y, st.n), 1, 1, 0, 0, 0, 0, loc)
	}
}

// stepTime advances t by one step using calendar arithmetic, so month and
// year ticks stay on the 1st and day ticks stay on midnight across DST.
func stepTime(t time.Time, st timeStep) time.Time {
	switch st.unit {
	case unitSecond:
		return t.Add(time.Duration(st.n) * time.Second)
	case unitMinute:
		return t.Add(time.Duration(st.n) * time.Minute)
	case unitHour:
		return t.Add(time.Duration(st.n) * time.Hour)
	case unitDay:
		return t.AddDate(0, 0, st.n)
	case unitWeek:
		return t.AddDate(0, 0, 7*st.n)
	case unitMonth:
		return t.AddDate(0, st.n, 0)
	default:
		return t.AddDate(st.n, 0, 0)
	}
}

// durationTicks is NiceTicks for an axis of seconds: the ticks fall on the
// steps a reader counts time in (1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15,
// 30 min, 1, 2, 3, 6, 12 h, days; store/human.TickStep), so an axis never
// reads "33 min 20 s, 1 h 6 min 40 s".
func durationTicks(min, max float64, n int) []float64 {
	if !finite(min) || !finite(max) {
		return nil
	}
	if min > max {
		min, max = max, min
	}
	if n < 2 {
		n = 2
	}
	if max-min <= float64(n-1) {
		return NiceTicks(min, max, n)
	}
	step := human.TickStep(max-min, n)
	lo, hi := math.Floor(min/step), math.Ceil(max/step)
	for hi-lo+1 > float64(n) && step < math.MaxFloat64/4 {
		// Floor and ceil can add a tick at each end: widen the step.
		step = human.TickStep((hi-lo)*step*1.0001, n)
		lo, hi = math.Floor(min/step), math.Ceil(max/step)
	}
	if hi-lo > maxTicks {
		return NiceTicks(min, max, n)
	}
	var ticks []float64
	for i := lo; i <= hi; i++ {
		ticks = append(ticks, i*step)
	}
	return ticks
}
