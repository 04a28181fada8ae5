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

// KneeStore is what the knee findings read; the SQLite warehouse satisfies it.
type KneeStore interface {
	InflightCurves(ctx context.Context, since time.Time) ([]store.InflightCurve, error)
	ListRestores(ctx context.Context, f store.RestoreFilter) ([]store.Restore, int, error)
	ListInstances(ctx context.Context, name string) ([]store.InstanceSummary, error)
	BackupOfDevices(ctx context.Context, devices []string) (*store.DeviceBackup, error)
}

// Knees returns the knee findings of every progress curve the warehouse
// keeps (running or finished), newest start first, with their facts read
// once per instance.
func Knees(ctx context.Context, db KneeStore, cat []KnownIssue) ([]KneeFinding, error) {
	curves, err := db.InflightCurves(ctx, time.Time{})
	if err != nil {
		return nil, err
	}
	cf := NewCurveFacts(db)
	var out []KneeFinding
	for _, c := range curves {
		if _, ok := Knee(c.Points); !ok {
			continue // most curves: no facts to read
		}
		f, err := cf.Of(ctx, c)
		if err != nil {
			return nil, err
		}
		if k, ok := FindKnee(c, f, cat); ok {
			out = append(out, k)
		}
	}
	slices.SortStableFunc(out, func(a, b KneeFinding) int { return b.Started.Compare(a.Started) })
	return out, nil
}

// instFacts is what one instance contributes to its knees.
type instFacts struct {
	build           string
	alignment       int64
	alignmentSource string
}

// CurveFacts reads what the warehouse knows about the restores behind
// progress curves, each instance's facts once.
type CurveFacts struct {
	db   KneeStore
	inst map[string]instFacts
}

// NewCurveFacts reads from db.
func NewCurveFacts(db KneeStore) *CurveFacts {
	return &CurveFacts{db: db, inst: map[string]instFacts{}}
}

// Of returns the facts of the restore behind c: the warehouse's restore it
// became, the backup history of its files, its instance's build and I/O
// alignment. /live states a curve's size from them, and FindKnee its knee.
func (k *CurveFacts) Of(ctx context.Context, c store.InflightCurve) (KneeFacts, error) {
	var f KneeFacts
	r, err := k.restoreOf(ctx, c)
	if err != nil {
		return f, err
	}
	f.Restore = r
	if f.Backup, err = k.db.BackupOfDevices(ctx, StatementDevices(c.Statement)); err != nil {
		return f, err
	}
	in, err := k.instance(ctx, c.Instance)
	if err != nil {
		return f, err
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
	return f, nil
}

// restoreOf is the warehouse's restore of the curve's database on its
// instance that started within CurveTolerance of the curve, nil when none.
func (k *CurveFacts) restoreOf(ctx context.Context, c store.InflightCurve) (*store.Restore, error) {
	rs, _, err := k.db.ListRestores(ctx, store.RestoreFilter{Instance: c.Instance, Database: c.Database,
		From: c.StartUTC, To: c.LastSeen.Add(24 * time.Hour), Limit: 20})
	if err != nil {
		return nil, fmt.Errorf("analysis: knee of %s on %s: %w", c.Database, c.Instance, err)
	}
	for i := range rs {
		r := &rs[i]
		if r.StartedAt != nil && r.StartedAt.Sub(c.StartUTC).Abs() <= CurveTolerance {
			return r, nil
		}
	}
	return nil, nil
}

// instance reads an instance's latest build and the I/O alignment its
// newest restores logged.
func (k *CurveFacts) instance(ctx context.Context, name string) (instFacts, error) {
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
	rs, _, err := k.db.ListRestores(ctx, store.RestoreFilter{Instance: name, Limit: alignmentLookback})
	if err != nil {
		return in, fmt.Errorf("analysis: knees of %s: %w", name, err)
	}
	for _, r := range rs {
		if r.IOAlignment != nil {
			in.alignment = *r.IOAlignment
			in.alignmentSource = fmt.Sprintf("the buffer report of the instance's restore of %s on %s", r.Database, r.At.Format(time.DateOnly))
			break
		}
	}
	k.inst[name] = in
	return in, nil
}

// KneeRestoreIDs are the restores that have a finding in ks.
func KneeRestoreIDs(ks []KneeFinding) []int64 {
	var ids []int64
	for _, k := range ks {
		if k.RestoreID > 0 {
			ids = append(ids, k.RestoreID)
		}
	}
	return ids
}
