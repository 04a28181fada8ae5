package plan

import (
	"context"
	"errors"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
)

// Projection is one database's projected restore time against its RTO
// target (SPEC §5, "RTO projection").
type Projection struct {
	store.RTOCandidate
	Target   time.Duration
	Expected time.Duration
	FromPlan bool // the restore plan's total, not size over speed
	Broken   bool // the log chain is broken: the latest backup cannot be reached
}

// Over is Expected ÷ Target, +Inf for a broken chain.
func (p Projection) Over() float64 {
	if p.Broken {
		return math.Inf(1)
	}
	return float64(p.Expected) / float64(p.Target)
}

// RTO is the fleet's projection: the databases at risk (over their target
// or with a broken chain, furthest first), how many were checked, and
// those that could not be (no plan and no measured speed), which are
// unknown, not safe.
type RTO struct {
	AtRisk  []Projection
	Checked int
	Unknown []store.RTOCandidate
}

// ProjectRTO projects every candidate's restore time: from its restore
// plan where it has a backup history (the full, the differential and every
// log after it, each at the speed Rate gives its kind and device), else
// from the size of its last full restore and the differentials and logs
// since over the throughput of its full restores' present regime
// (RTOCandidate.MiBps, the series' median since its latest change point,
// as analysis.Detect finds it: the rule Rate's present() applies, read in
// one row per database rather than from every restore of the instance).
// def is the target of instances without an "rto" tag (RTOTarget).
func ProjectRTO(ctx context.Context, src Source, cs []store.RTOCandidate, def time.Duration, cfg analysis.Config) (RTO, error) {
	var out RTO
	have, err := src.BackupDatabases(ctx)
	if err != nil {
		return out, err
	}
	for _, c := range cs {
		p := Projection{RTOCandidate: c, Target: RTOTarget(c.Tags, def)}
		if have[strings.ToLower(c.Instance)+"\x00"+c.Database] {
			ok, err := fromPlan(ctx, src, &p, cfg)
			if err != nil {
				return RTO{}, err
			}
			if ok {
				out.Checked++
				if p.Broken || p.Expected > p.Target {
					out.AtRisk = append(out.AtRisk, p)
				}
				continue
			}
		}
		exp, risk := analysis.ProjectRTO(analysis.RTOInput{FullBytes: c.FullBytes, DiffBytes: c.DiffBytes,
			LogBytes: c.LogBytes, MiBps: c.MiBps, Target: p.Target})
		if exp == 0 {
			out.Unknown = append(out.Unknown, c)
			continue
		}
		out.Checked++
		if risk {
			p.Expected = exp
			out.AtRisk = append(out.AtRisk, p)
		}
	}
	sort.SliceStable(out.AtRisk, func(i, j int) bool { return out.AtRisk[i].Over() > out.AtRisk[j].Over() })
	return out, nil
}

// fromPlan projects p from its database's restore plan; ok is false when
// the plan cannot say (no usable history, a step without an estimate).
func fromPlan(ctx context.Context, src Source, p *Projection, cfg analysis.Config) (ok bool, err error) {
	pl, _, err := Make(ctx, src, Request{Instance: p.Instance, Database: p.Database, Analysis: cfg})
	var gap *GapError
	switch {
	case errors.As(err, &gap):
		p.FromPlan, p.Broken = true, true
		return true, nil
	case err != nil:
		if store.ErrorCode(err) == store.EINTERNAL {
			return false, err
		}
	case pl.Unestimated == 0 && pl.TotalS > 0:
		p.FromPlan, p.Expected = true, time.Duration(pl.TotalS*float64(time.Second))
		return true, nil
	}
	return false, nil
}
