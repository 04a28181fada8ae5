package analysis_test

import (
	"math"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
)

// TestWeeklyMedians: each week's median, oldest week first, NaN for a
// week without restores, nothing from before the first week or after end.
func TestWeeklyMedians(t *testing.T) {
	end := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	at := func(weeksAgo float64) time.Time { return end.Add(-time.Duration(weeksAgo * float64(7*24*time.Hour))) }
	vs := []store.TimeValue{{At: at(3.5), Value: 999}, {At: at(2.5), Value: 100}, {At: at(2.4), Value: 300}, {At: at(2.3), Value: 200},
		{At: at(0.5), Value: 50}, {At: end.Add(time.Hour), Value: 999}}
	got := analysis.WeeklyMedians(vs, end, 3)
	if len(got) != 3 || got[0] != 200 || !math.IsNaN(got[1]) || got[2] != 50 {
		t.Errorf("weekly medians = %v, want [200 NaN 50]", got)
	}
}

// TestBufferRuns: restores (newest first) are grouped into runs of the
// same settings, newest run first, a setting that comes back starting a
// run of its own; restores that logged none are skipped.
func TestBufferRuns(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	f := func(v float64) *float64 { return &v }
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var rs []store.ChartPoint // oldest first, reversed below
	for i, bc := range []int64{64, 64, 64, 7, 7, 0, 64} {
		p := store.ChartPoint{ID: int64(i + 1), At: t0.AddDate(0, 0, i), MiBps: f(float64(100 * (i + 1)))}
		if bc > 0 {
			p.BufferCount, p.MaxTransferKiB = n(bc), n(4096)
		}
		rs = append([]store.ChartPoint{p}, rs...)
	}
	runs := analysis.BufferRuns(rs)
	if len(runs) != 3 {
		t.Fatalf("%d runs, want 3: %+v", len(runs), runs)
	}
	for i, want := range []struct {
		first, last int64
		n           int
		mibps       float64
	}{{7, 7, 1, 700}, {4, 5, 2, 450}, {1, 3, 3, 200}} {
		r := runs[i]
		if r.First.ID != want.first || r.Last.ID != want.last || r.N != want.n || r.MiBps != want.mibps {
			t.Errorf("run %d: %d..%d, n %d, %v MiB/s; want %+v", i, r.First.ID, r.Last.ID, r.N, r.MiBps, want)
		}
	}
}
