package analysis

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// CurveTolerance is how far apart the start of a curve (the statement's
// start_time) and the start of a restore (from msdb and the error log) may
// be for the two to be the same restore: the other sources know it only to
// a few seconds.
const CurveTolerance = 2 * time.Minute

// alignmentLookback is how many of an instance's newest restores are read
// for the destination's I/O alignment when the restore itself did not log
// it (trace flag 3213 logs it with every restore where it is on).
const alignmentLookback = 50

// Knees returns the knee findings of every progress curve the warehouse
// keeps (running or finished), newest start first, with their facts read
// once per instance.
func Knees(ctx context.Context, db *store.DB, cat []KnownIssue) ([]KneeFinding, error) {
	curves, err := db.InflightCurves(ctx, time.Time{})
	if err != nil {
		return nil, err
	}
	kf := kneeFacts{db: db, inst: map[string]instFacts{}}
	var out []KneeFinding
	for _, c := range curves {
		if _, ok := Knee(c.Points); !ok {
			continue // most curves: no facts to read
		}
		f, ok, err := kf.find(ctx, c, cat)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b KneeFinding) int { return b.Started.Compare(a.Started) })
	return out, nil
}

// KneeOf is the knee finding of one curve (the restore page's and /live's
// way to the same value Knees lists).
func KneeOf(ctx context.Context, db *store.DB, c store.InflightCurve, cat []KnownIssue) (KneeFinding, bool, error) {
	kf := kneeFacts{db: db, inst: map[string]instFacts{}}
	return kf.find(ctx, c, cat)
}

// instFacts is what one instance contributes to its knees.
type instFacts struct {
	build           string
	alignment       int64
	alignmentSource string
}

type kneeFacts struct {
	db   *store.DB
	inst map[string]instFacts
}

func (k *kneeFacts) find(ctx context.Context, c store.InflightCurve, cat []KnownIssue) (KneeFinding, bool, error) {
	if _, ok := Knee(c.Points); !ok {
		return KneeFinding{}, false, nil
	}
	var f KneeFacts
	r, err := k.restoreOf(ctx, c)
	if err != nil {
		return KneeFinding{}, false, err
	}
	f.Restore = r
	if f.Backup, err = k.db.BackupOfDevices(ctx, StatementDevices(c.Statement)); err != nil {
		return KneeFinding{}, false, err
	}
	in, err := k.instance(ctx, c.Instance)
	if err != nil {
		return KneeFinding{}, false, err
	}
	f.Build, f.Alignment, f.AlignmentSource = in.build, in.alignment, in.alignmentSource
	if r != nil {
		if r.InstanceBuild != "" {
			f.Build = r.InstanceBuild
		}
		if r.IOAlignment != nil {
			f.Alignment, f.AlignmentSource = *r.IOAlignment, "the restore's own trace flag 3213 buffer report"
		}
	}
	kf, ok := FindKnee(c, f, cat)
	return kf, ok, nil
}

// restoreOf is the warehouse's restore of the curve's database on its
// instance that started within CurveTolerance of the curve, nil when none.
func (k *kneeFacts) restoreOf(ctx context.Context, c store.InflightCurve) (*store.Restore, error) {
	p, err := k.db.Restores(ctx, store.RestoreQuery{Filter: store.RestoreFilter{Instance: c.Instance, Database: c.Database,
		From: c.StartUTC, To: c.LastSeen.Add(24 * time.Hour), Limit: 20}})
	if err != nil {
		return nil, fmt.Errorf("analysis: knee of %s on %s: %w", c.Database, c.Instance, err)
	}
	for i := range p.Restores {
		r := &p.Restores[i]
		if r.StartedAt != nil && r.StartedAt.Sub(c.StartUTC).Abs() <= CurveTolerance {
			return r, nil
		}
	}
	return nil, nil
}

// instance reads an instance's latest build and the I/O alignment its
// newest restores logged.
func (k *kneeFacts) instance(ctx context.Context, name string) (instFacts, error) {
	if in, ok := k.inst[name]; ok {
		return in, nil
	}
	var in instFacts
	is, err := k.db.ListInstances(ctx, name)
	if err != nil {
		return in, err
	}
	if len(is) > 0 {
		in.build = is[0].Build
	}
	p, err := k.db.Restores(ctx, store.RestoreQuery{Filter: store.RestoreFilter{Instance: name, Limit: alignmentLookback}})
	if err != nil {
		return in, fmt.Errorf("analysis: knees of %s: %w", name, err)
	}
	for _, r := range p.Restores {
		if r.IOAlignment != nil {
			in.alignment = *r.IOAlignment
			in.alignmentSource = fmt.Sprintf("the buffer report of the instance's restore of %s on %s", r.Database, r.At.Format(time.DateOnly))
			break
		}
	}
	k.inst[name] = in
	return in, nil
}
