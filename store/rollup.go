package store

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"
)

// RollupKey names one day's roll-up of an instance's log restores of one
// database, restored on one build from one source server.
type RollupKey struct {
	InstanceID    int64
	Database      string
	Day           int64 // UTC day: Unix ms / 86,400,000
	InstanceBuild string
	SourceServer  string
}

// Rollup is what retention keeps of a day's old log restores (issue 41):
// counts, totals, the largest, the median and 95th percentile of duration
// and throughput, the LSN range and the time range.
type Rollup struct {
	RollupKey
	Restores, Measured int64
	TotalDurationS     float64
	MaxDurationS       *float64
	TotalBytes         int64
	P50DurationS       *float64
	P95DurationS       *float64
	P50MiBps           *float64
	P95MiBps           *float64
	FirstLSN, LastLSN  string
	FirstUTC, LastUTC  int64
	// Merged says a later prune added restores to the day: the percentiles
	// are then count-weighted means of each prune's, approximate.
	Merged bool
}

// RollupRestore is one old log restore on its way into a roll-up.
type RollupRestore struct {
	RollupKey
	AtUTC             int64
	DurationS, MiBps  *float64
	Bytes             *int64
	FirstLSN, LastLSN string
}

// RollUp folds restores into one Rollup per key, in key order.
func RollUp(rs []RollupRestore) []Rollup {
	by := map[RollupKey][]RollupRestore{}
	for _, r := range rs {
		by[r.RollupKey] = append(by[r.RollupKey], r)
	}
	out := make([]Rollup, 0, len(by))
	for k, g := range by {
		sort.Slice(g, func(i, j int) bool { return g[i].AtUTC < g[j].AtUTC })
		u := Rollup{RollupKey: k, Restores: int64(len(g)), FirstUTC: g[0].AtUTC, LastUTC: g[len(g)-1].AtUTC,
			FirstLSN: g[0].FirstLSN, LastLSN: g[len(g)-1].LastLSN}
		var durs, rates []float64
		for _, r := range g {
			if r.DurationS != nil {
				durs = append(durs, *r.DurationS)
				u.TotalDurationS += *r.DurationS
			}
			if r.MiBps != nil {
				rates = append(rates, *r.MiBps)
			}
			if r.Bytes != nil {
				u.TotalBytes += *r.Bytes
			}
		}
		u.Measured = int64(len(durs))
		if len(durs) > 0 {
			sort.Float64s(durs)
			u.MaxDurationS = &durs[len(durs)-1]
			u.P50DurationS, u.P95DurationS = rank(durs, 0.50), rank(durs, 0.95)
		}
		if len(rates) > 0 {
			sort.Float64s(rates)
			u.P50MiBps, u.P95MiBps = rank(rates, 0.50), rank(rates, 0.95)
		}
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return lessKey(out[i].RollupKey, out[j].RollupKey) })
	return out
}

// rank is the nearest-rank percentile p of sorted values.
func rank(sorted []float64, p float64) *float64 {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	v := sorted[max(0, min(i, len(sorted)-1))]
	return &v
}

func lessKey(a, b RollupKey) bool {
	switch {
	case a.InstanceID != b.InstanceID:
		return a.InstanceID < b.InstanceID
	case a.Database != b.Database:
		return a.Database < b.Database
	case a.Day != b.Day:
		return a.Day < b.Day
	case a.InstanceBuild != b.InstanceBuild:
		return a.InstanceBuild < b.InstanceBuild
	}
	return a.SourceServer < b.SourceServer
}

// Merge adds a later prune's roll-up of the same day to u: counts and
// totals add up, the largest stays the largest, the percentiles become
// means weighted by the restores behind each (marked Merged).
func (u Rollup) Merge(v Rollup) Rollup {
	out := u
	out.Merged = true
	out.Restores += v.Restores
	out.Measured += v.Measured
	out.TotalDurationS += v.TotalDurationS
	out.TotalBytes += v.TotalBytes
	if v.MaxDurationS != nil && (u.MaxDurationS == nil || *v.MaxDurationS > *u.MaxDurationS) {
		out.MaxDurationS = v.MaxDurationS
	}
	w := func(a, b *float64, na, nb int64) *float64 {
		switch {
		case a == nil:
			return b
		case b == nil:
			return a
		}
		m := (*a*float64(na) + *b*float64(nb)) / float64(na+nb)
		return &m
	}
	out.P50DurationS = w(u.P50DurationS, v.P50DurationS, u.Measured, v.Measured)
	out.P95DurationS = w(u.P95DurationS, v.P95DurationS, u.Measured, v.Measured)
	out.P50MiBps = w(u.P50MiBps, v.P50MiBps, u.Restores, v.Restores)
	out.P95MiBps = w(u.P95MiBps, v.P95MiBps, u.Restores, v.Restores)
	if v.FirstUTC < u.FirstUTC {
		out.FirstUTC, out.FirstLSN = v.FirstUTC, v.FirstLSN
	}
	if v.LastUTC > u.LastUTC {
		out.LastUTC, out.LastLSN = v.LastUTC, v.LastLSN
	}
	return out
}

// Pruner is one engine's steps of a prune (Admin.Prune), which ApplyRetention
// runs in order.
type Pruner interface {
	// Reconcile derives what is dirty: a roll-up reads restores, which
	// must stand for the facts that remain.
	Reconcile(ctx context.Context) error
	// OldLogInstances are the instances with a log restore before cut
	// (UTC ms).
	OldLogInstances(ctx context.Context, cut int64) ([]int64, error)
	// RollUpInstance rolls up one instance's log restores before cut but
	// its evidence (see Retention) and its series' keep newest ones,
	// deletes their facts and marks the instance for derivation, in one
	// transaction, counting into st.
	RollUpInstance(ctx context.Context, id, cut int64, keep int, st *PruneStats) error
	// DeleteRuns and DeleteInflight delete collector runs started, and
	// in-flight curves last seen, before before.
	DeleteRuns(ctx context.Context, before time.Time) (int64, error)
	DeleteInflight(ctx context.Context, before time.Time) (int64, error)
}

// RetentionCut is the time (UTC ms) before which r rolls log restores up
// at now. A restore's at_utc is a real instant; a day of margin keeps the
// rule "nothing younger than the retention goes" whatever the instance's
// offset.
func RetentionCut(r Retention, now time.Time) int64 {
	return now.Add(-r.Restores).Add(-24 * time.Hour).UnixMilli()
}

// MonthPruner is a Pruner that can drop whole months of raw facts at once
// (PostgreSQL's monthly partitions). RollUpMonths rolls up every instance
// with log restores before cut, as RollUpInstance does one (the same
// evidence kept, the same roll-ups), in one transaction that drops the
// months wholly before cut instead of deleting their rows; handled false
// says no month was old enough and nothing was done.
type MonthPruner interface {
	RollUpMonths(ctx context.Context, cut int64, keep int, st *PruneStats) (handled bool, err error)
}

// ApplyRetention applies r at now with p's steps: log restores older than
// r.Restores are rolled up per day and their raw facts deleted, instance by
// instance, except the evidence, which stays raw; then the instances are
// derived again (restores keep their ids: a pinned restore's facts are all
// kept). Collector runs and in-flight curves past theirs are deleted.
func ApplyRetention(ctx context.Context, p Pruner, r Retention, now time.Time) (PruneStats, error) {
	var st PruneStats
	if r.Restores > 0 {
		if err := p.Reconcile(ctx); err != nil {
			return st, err
		}
		cut := RetentionCut(r, now)
		keep := r.KeepLast
		if keep <= 0 {
			keep = DefaultKeepLast
		}
		var ids []int64
		handled := false
		if mp, ok := p.(MonthPruner); ok {
			var err error
			if handled, err = mp.RollUpMonths(ctx, cut, keep, &st); err != nil {
				return st, fmt.Errorf("store: prune: %w", err)
			}
		}
		if !handled {
			var err error
			if ids, err = p.OldLogInstances(ctx, cut); err != nil {
				return st, fmt.Errorf("store: prune: %w", err)
			}
		}
		for _, id := range ids {
			if err := p.RollUpInstance(ctx, id, cut, keep, &st); err != nil {
				return st, fmt.Errorf("store: prune: %w", err)
			}
		}
		if len(ids) > 0 || handled {
			if err := p.Reconcile(ctx); err != nil {
				return st, err
			}
		}
	}
	var err error
	if r.Runs > 0 {
		if st.Runs, err = p.DeleteRuns(ctx, now.Add(-r.Runs)); err != nil {
			return st, fmt.Errorf("store: prune: %w", err)
		}
	}
	if r.Inflight > 0 {
		if st.Inflight, err = p.DeleteInflight(ctx, now.Add(-r.Inflight)); err != nil {
			return st, fmt.Errorf("store: prune: %w", err)
		}
	}
	return st, nil
}
