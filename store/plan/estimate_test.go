package plan_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/plan"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6*math.Max(1, math.Abs(b)) }

// The expected durations against figures computed by hand: 40 GiB
// (40960 MiB) over the target's full restores from a share at 100, 200,
// 300, 400 and 500 MiB/s — median 300; in logs, median ln 300, MAD 0.4055
// (σ 0.6012), so the prediction interval's half-width is t(4) 1.533 ×
// 0.6012 × √1.2 = 1.0096, 109.32 to 823.28 MiB/s, wider than p10 140 and
// p90 460 — and 64 MiB logs at the fleet's 50 MiB/s.
func TestEstimatesByHand(t *testing.T) {
	h := newHistory(1)
	c, err := plan.Build(h.sets, "Sales", h.at(60))
	if err != nil {
		t.Fatal(err)
	}
	var rates []store.RestoreRate
	for i, v := range []float64{500, 100, 400, 200, 300} {
		rates = append(rates, store.RestoreRate{Instance: "SQL02", Kind: store.KindFull, DeviceKind: store.DeviceUNC, LogicalMiBps: v,
			BufferCount: int64(10 * (i + 1)), MaxTransferKiB: 1024 * int64(i+1), At: h.t0})
	}
	rates = append(rates,
		store.RestoreRate{Instance: "SQL01", Kind: store.KindFull, DeviceKind: store.DeviceUNC, LogicalMiBps: 5000},
		store.RestoreRate{Instance: "SQL02", Kind: store.KindFull, DeviceKind: store.DeviceLocal, LogicalMiBps: 9000, BufferCount: 99, MaxTransferKiB: 4096},
		store.RestoreRate{Instance: "SQL03", Kind: store.KindLog, DeviceKind: store.DeviceUNC, LogicalMiBps: 50},
		store.RestoreRate{Instance: "SQL04", Kind: store.KindLog, DeviceKind: store.DeviceUNC, LogicalMiBps: 50})
	p := plan.Estimates(c, "SQL01", "sql02", rates, 4*time.Hour)
	full := p.Steps[0].Estimate
	if full.N != 5 || !near(full.MiBps, 300) || math.Abs(full.P10-109.32) > 0.01 || math.Abs(full.P90-823.28) > 0.01 || full.Fleet {
		t.Fatalf("full estimate %+v", full)
	}
	if !near(full.Seconds, 40960.0/300) || !near(full.LowS, 40960.0/full.P90) || !near(full.HighS, 40960.0/full.P10) {
		t.Errorf("full seconds %v (%v..%v)", full.Seconds, full.LowS, full.HighS)
	}
	if !strings.HasPrefix(full.Basis, "measured on sql02") {
		t.Errorf("basis %q", full.Basis)
	}
	logs := p.Steps[1].Estimate
	if p.Steps[1].Kind != store.KindLog || logs.N != 2 || !logs.Fleet || !near(logs.Seconds, 64.0/50) ||
		!strings.HasPrefix(logs.Basis, "estimated from other instances") {
		t.Fatalf("log estimate %+v", logs)
	}
	want := 40960.0/300 + 4*64.0/50
	if len(p.Steps) != 5 || !near(p.TotalS, want) || p.Unestimated != 0 {
		t.Errorf("%d steps, total %v, want 5 and %v", len(p.Steps), p.TotalS, want)
	}
	if p.OverRTO || p.Dominant != "the full backup" || !near(p.DominantShare, 40960.0/300/want) {
		t.Errorf("over %v, dominant %q %v", p.OverRTO, p.Dominant, p.DominantShare)
	}
	// The fastest of the target's full restores from a share: 500 MiB/s,
	// buffers 10 and 1024 KiB; the faster local-disk restore is another device.
	b := p.Buffers[store.DeviceUNC]
	if b.BufferCount != 10 || b.MaxTransferKiB != 1024 || b.MiBps != 500 {
		t.Errorf("buffers %+v", b)
	}
	p = plan.Estimates(c, "SQL01", "SQL02", rates, time.Minute)
	if !p.OverRTO {
		t.Error("a 2-minute plan is within a 1-minute target")
	}
	p = plan.Estimates(c, "SQL01", "SQL02", nil, time.Hour)
	if p.Unestimated != 5 || p.TotalS != 0 || p.Steps[0].Estimate.Basis != "no measured full restores anywhere in the warehouse" {
		t.Errorf("no rates: %+v", p.Steps[0].Estimate)
	}
}

func TestQuantile(t *testing.T) {
	v := []float64{1, 2, 3, 4}
	for _, c := range []struct{ q, want float64 }{{0, 1}, {0.5, 2.5}, {0.1, 1.3}, {1, 4}} {
		if got := plan.Quantile(v, c.q); !near(got, c.want) {
			t.Errorf("q%v = %v, want %v", c.q, got, c.want)
		}
	}
}
