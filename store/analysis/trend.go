package analysis

import (
	"math"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// WeeklyMedians is the median of vs in each of the weeks weeks ending at
// end, oldest first, NaN for a week without a value: the overview's
// fleet trend.
func WeeklyMedians(vs []store.TimeValue, end time.Time, weeks int) []float64 {
	const week = 7 * 24 * time.Hour
	from := end.Add(-time.Duration(weeks) * week)
	buckets := make([][]float64, weeks)
	for _, v := range vs {
		if i := int(v.At.Sub(from) / week); !v.At.Before(from) && i < weeks {
			buckets[i] = append(buckets[i], v.Value)
		}
	}
	out := make([]float64, weeks)
	for i, b := range buckets {
		out[i] = math.NaN()
		if len(b) > 0 {
			out[i] = Median(b)
		}
	}
	return out
}

// BufferRun is a stretch of a series' restores that logged identical
// buffer settings (BUFFERCOUNT, MAXTRANSFERSIZE, I/O alignment): its
// oldest and newest restore, how many, and their median MiB/s (0: none
// measured).
type BufferRun struct {
	First, Last *store.ChartPoint
	N           int
	MiBps       float64
}

// BufferRuns groups the restores rs (newest first) that logged buffer
// settings into runs of identical settings, newest run first: the database
// page's table of when the settings changed and what the restores ran at.
func BufferRuns(rs []store.ChartPoint) []BufferRun {
	var runs []BufferRun
	var mibps [][]float64
	same := func(a, b *int64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }
	for i := len(rs) - 1; i >= 0; i-- {
		r := &rs[i]
		if r.BufferCount == nil && r.MaxTransferKiB == nil && r.IOAlignment == nil {
			continue
		}
		if n := len(runs); n == 0 || !same(runs[n-1].First.BufferCount, r.BufferCount) ||
			!same(runs[n-1].First.MaxTransferKiB, r.MaxTransferKiB) || !same(runs[n-1].First.IOAlignment, r.IOAlignment) {
			runs, mibps = append(runs, BufferRun{First: r}), append(mibps, nil)
		}
		n := len(runs) - 1
		runs[n].Last, runs[n].N = r, runs[n].N+1
		if r.MiBps != nil {
			mibps[n] = append(mibps[n], *r.MiBps)
		}
	}
	out := make([]BufferRun, 0, len(runs))
	for i := len(runs) - 1; i >= 0; i-- {
		if len(mibps[i]) > 0 {
			runs[i].MiBps = Median(mibps[i])
		}
		out = append(out, runs[i])
	}
	return out
}
