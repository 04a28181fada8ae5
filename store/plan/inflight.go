package plan

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store/human"
)

// InFlight is a restore of the plan's database running now on the target,
// and what its own pace says of its whole duration (issue 38): an estimate
// from history should not ignore the restore of that database a DBA is
// watching.
type InFlight struct {
	Started  time.Time `json:"started"` // UTC
	Percent  float64   `json:"percent"`
	Expected float64   `json:"expected_s"` // its whole duration at its recent pace
	Sentence string    `json:"sentence"`
}

// inflightPace is the span of samples the recent pace is read from.
const inflightPace = 30 * time.Minute

// inFlight finds a running full restore of database on target among the
// curves seen in the day before now, and words its pace against the
// plan's estimate of its full step (est seconds; 0: none).
func inFlight(ctx context.Context, src Source, target, database string, now time.Time, est float64) (*InFlight, error) {
	cs, err := src.InflightCurves(ctx, now.Add(-24*time.Hour))
	if err != nil {
		return nil, err
	}
	for _, c := range cs {
		if c.Ended || !strings.EqualFold(c.Instance, target) || !strings.EqualFold(c.Database, database) ||
			!strings.Contains(strings.ToUpper(c.Command), "RESTORE DATABASE") || len(c.Points) < 2 {
			continue
		}
		last := c.Points[len(c.Points)-1]
		first := c.Points[0]
		for _, p := range c.Points {
			if last.At.Sub(p.At) <= inflightPace {
				first = p
				break
			}
		}
		mins := last.At.Sub(first.At).Minutes()
		if mins <= 0 || last.Percent <= first.Percent || last.Percent >= 100 {
			continue
		}
		pace := (last.Percent - first.Percent) / mins // %/min lately
		elapsed := c.LastSeen.Sub(c.StartUTC).Seconds()
		total := elapsed + (100-last.Percent)/pace*60
		f := &InFlight{Started: c.StartUTC, Percent: last.Percent, Expected: total}
		f.Sentence = fmt.Sprintf("a restore of %s on %s is in flight (started %s, %s done): at its pace of the last %s it takes about %s in all",
			database, target, human.Stamp(c.StartUTC), human.Progress(last.Percent), human.Duration(mins*60), human.Duration(total))
		if est > 0 {
			f.Sentence += fmt.Sprintf(", against the %s the full step's estimate expects from history", human.Duration(est))
		}
		return f, nil
	}
	return nil, nil
}
