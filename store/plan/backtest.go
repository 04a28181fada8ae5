package plan

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
)

// Calibration is how Rate did on one instance's restores of one kind,
// each predicted from the restores the instance had finished before it,
// as a plan made just before that restore would have predicted it.
type Calibration struct {
	Instance string     `json:"instance"`
	Kind     store.Kind `json:"kind"`
	// Restores counts the restores predicted (those with no measured
	// restore before them are not); Inside, those whose duration fell
	// inside the stated range.
	Restores int `json:"restores"`
	Inside   int `json:"inside"`
	// MedianError is the median of |predicted − actual| / actual duration.
	MedianError float64 `json:"median_error"`
	// Errors are each prediction's |predicted − actual| / actual, for a
	// fleet's median.
	Errors []float64 `json:"-"`
	// Path names the restores replayed when the estimate is not the
	// present's ("with BUFFERCOUNT 64 and MAXTRANSFERSIZE 4096 KiB, as
	// this script sets"); empty: the instance's restores as they ran.
	Path string `json:"path,omitempty"`
	// Fleet: the plan's step rests on other instances' restores, so the
	// replay of this instance's own says how the estimator does here, not
	// how that step's figure will.
	Fleet bool `json:"fleet,omitempty"`
}

// Share is the fraction of restores inside the range (0 with none).
func (c Calibration) Share() float64 {
	if c.Restores == 0 {
		return 0
	}
	return float64(c.Inside) / float64(c.Restores)
}

// CalibrationRestores is how many of an instance's newest restores of a
// kind a plan's calibration replays.
const CalibrationRestores = 20

// Backtest replays the newest last restores of kind on instance (all of
// them when last <= 0) in rates: each is predicted by Rate from the
// instance's own restores that finished before it (the fleet's are left
// out: rates holds only the fleet's newest, which a past plan could not
// have seen) and compared with what it took.
func Backtest(rates []store.RestoreRate, instance string, kind store.Kind, last int, cfg analysis.Config) Calibration {
	var own []store.RestoreRate
	for _, r := range rates {
		if strings.EqualFold(r.Instance, instance) && r.LogicalMiBps > 0 && !math.IsInf(r.LogicalMiBps, 0) {
			own = append(own, r)
		}
	}
	sort.SliceStable(own, func(i, j int) bool { return own[i].At.Before(own[j].At) })
	var idx []int
	for i, r := range own {
		if r.Kind == kind {
			idx = append(idx, i)
		}
	}
	if last > 0 && len(idx) > last {
		idx = idx[len(idx)-last:]
	}
	c := Calibration{Instance: instance, Kind: kind}
	for _, i := range idx {
		r := own[i]
		before := own[:i]
		for len(before) > 0 && !before[len(before)-1].At.Before(r.At) {
			before = before[:len(before)-1] // finished at the same instant: not yet known
		}
		e := Rate(Facts{Target: instance, Rates: before, Analysis: cfg}, Query{Database: r.Database, Kind: kind, DeviceKind: r.DeviceKind})
		c.add(e, r.LogicalMiBps)
	}
	c.finish()
	return c
}

// add scores one prediction of a restore that ran at mibps.
func (c *Calibration) add(e Estimate, mibps float64) {
	if e.N == 0 {
		return
	}
	c.Restores++
	// Durations are size over throughput: the range of durations holds
	// the actual one exactly when the range of throughputs holds its rate.
	if mibps >= e.P10 && mibps <= e.P90 {
		c.Inside++
	}
	c.Errors = append(c.Errors, math.Abs(mibps/e.MiBps-1))
}

func (c *Calibration) finish() {
	if len(c.Errors) > 0 {
		c.MedianError = analysis.Median(c.Errors)
	}
}

// Sentence is the calibration in words, as the plan page and the CLI say
// it: "of DWH-SQL02's last 20 full restores, 17 took within the range this
// estimate would have given (median error 8 %)".
func (c Calibration) Sentence() string {
	what := kindWord(c.Kind) + " restores"
	if c.Path != "" {
		what += " " + c.Path
	}
	if c.Fleet {
		return fmt.Sprintf("this step rests on other instances' restores; replayed on %s's own last %d %s, the estimator put %d within its range (median error %.0f %%)",
			c.Instance, c.Restores, what, c.Inside, 100*c.MedianError)
	}
	return fmt.Sprintf("of %s's last %d %s, %d took within the range this estimate would have given before each (median error %.0f %%)",
		c.Instance, c.Restores, what, c.Inside, 100*c.MedianError)
}
