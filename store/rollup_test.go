package store_test

import (
	"testing"

	"github.com/restorewatch/restorewatch/store"
)

func TestRollUpAndMerge(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	n := func(v int64) *int64 { return &v }
	k := store.RollupKey{InstanceID: 1, Database: "Shipped", Day: 20000, InstanceBuild: "16.0.4135.4"}
	var rs []store.RollupRestore
	for i := range 20 {
		rs = append(rs, store.RollupRestore{RollupKey: k, AtUTC: int64(1000 - i), DurationS: f(float64(i + 1)), MiBps: f(float64(100 - i)),
			Bytes: n(10), FirstLSN: string(rune('a' + i)), LastLSN: string(rune('A' + i))})
	}
	rs = append(rs, store.RollupRestore{RollupKey: k, AtUTC: 2000}) // unmeasured
	other := k
	other.Day++
	rs = append(rs, store.RollupRestore{RollupKey: other, AtUTC: 5000, DurationS: f(7)})
	us := store.RollUp(rs)
	if len(us) != 2 || us[0].Day != 20000 {
		t.Fatalf("RollUp = %+v: want two days in order", us)
	}
	u := us[0]
	if u.Restores != 21 || u.Measured != 20 || u.TotalDurationS != 210 || u.TotalBytes != 200 || *u.MaxDurationS != 20 {
		t.Errorf("counts and totals %+v", u)
	}
	if *u.P50DurationS != 10 || *u.P95DurationS != 19 || *u.P50MiBps != 90 || *u.P95MiBps != 99 {
		t.Errorf("percentiles: duration %v/%v, rate %v/%v; want 10/19 and 90/99 (nearest rank)", *u.P50DurationS, *u.P95DurationS, *u.P50MiBps, *u.P95MiBps)
	}
	if u.FirstUTC != 981 || u.LastUTC != 2000 || u.FirstLSN != "t" {
		t.Errorf("range %d–%d from LSN %q: want 981–2000, the earliest restore's LSN", u.FirstUTC, u.LastUTC, u.FirstLSN)
	}
	m := u.Merge(store.Rollup{RollupKey: k, Restores: 20, Measured: 20, TotalDurationS: 100, MaxDurationS: f(50),
		P50DurationS: f(20), P95DurationS: f(40), FirstUTC: 10, LastUTC: 20, FirstLSN: "0"})
	if !m.Merged || m.Restores != 41 || m.Measured != 40 || *m.MaxDurationS != 50 || *m.P50DurationS != 15 || m.FirstUTC != 10 || m.FirstLSN != "0" || m.LastUTC != 2000 {
		t.Errorf("Merge = %+v", m)
	}
}
