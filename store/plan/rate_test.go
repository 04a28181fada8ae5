package plan_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/plan"
)

// series is n restores a day of one database at about mibps (±10 %),
// from t0 on, with buffers bc/mtk.
func series(rng *rand.Rand, db string, t0 time.Time, n int, mibps float64, bc, mtk int64) []store.RestoreRate {
	var out []store.RestoreRate
	for i := range n {
		v := mibps * (0.9 + 0.2*rng.Float64())
		out = append(out, store.RestoreRate{ID: int64(i + 1), Instance: "SQL02", Database: db, Kind: store.KindFull,
			DeviceKind: store.DeviceUNC, LogicalMiBps: v, Bytes: 100 << 30, DurationS: 100 * 1024 / v,
			BufferCount: bc, MaxTransferKiB: mtk, At: t0.AddDate(0, 0, i)})
	}
	return out
}

// Rate follows the present: a database whose restores fell from 400 to
// 100 MiB/s is expected at 100, from the restores since, named by the
// stored regression; another database's steady 400 on the same instance
// does not pull it up.
func TestRateFollowsTheLatestChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	rates := append(series(rng, "Sales", t0, 40, 400, 0, 0), series(rng, "Sales", t0.AddDate(0, 0, 40), 12, 100, 0, 0)...)
	rates = append(rates, series(rng, "Stock", t0, 52, 400, 0, 0)...)
	change := t0.AddDate(0, 0, 40)
	f := plan.Facts{Target: "sql02", Rates: rates, Analysis: analysis.DefaultConfig(),
		Findings: []store.Regression{{ID: 7, Instance: "SQL02", Database: "Sales", Kind: store.KindFull, ChangedAt: change}}}
	e := plan.Rate(f, plan.Query{Database: "Sales", Kind: store.KindFull, DeviceKind: store.DeviceUNC})
	if e.N != 12 || e.MiBps < 90 || e.MiBps > 110 || !e.Series || !e.Since.Equal(change) || e.RegressionID != 7 {
		t.Fatalf("estimate %+v", e)
	}
	if !strings.Contains(e.Basis, "12 full restores of Sales on sql02 since 2026-07-11, when its restores became") ||
		!strings.HasSuffix(e.Basis, "— regression 7") {
		t.Errorf("basis %q", e.Basis)
	}
	if !(e.P10 < e.MiBps && e.MiBps < e.P90) || e.P90 > 200 {
		t.Errorf("range %v – %v around %v", e.P10, e.P90, e.MiBps)
	}
	// A steady series rests on all of its restores.
	e = plan.Rate(f, plan.Query{Database: "Stock", Kind: store.KindFull, DeviceKind: store.DeviceUNC})
	if e.N != 52 || math.Abs(e.MiBps-400) > 40 || e.RegressionID != 0 || !strings.Contains(e.Basis, "with no lasting change of speed") {
		t.Errorf("steady series: %+v", e)
	}
	// A database the instance never restored: the instance's series, each
	// cut to its present: Sales' 12 since the change and Stock's 52.
	e = plan.Rate(f, plan.Query{Database: "Ledger", Kind: store.KindFull, DeviceKind: store.DeviceUNC})
	if e.N != 64 || e.Series || e.Fleet {
		t.Errorf("another database: %+v", e)
	}
}

// Where the script sets the buffers a series lost (BUFFERCOUNT 64 and
// 4 MiB transfers, then 7 and 1 MiB at half the speed), its restore will
// run as the restores that used them did.
func TestRateWithTheBuffersTheScriptSets(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	rates := append(series(rng, "Orders", t0, 30, 400, 64, 4096), series(rng, "Orders", t0.AddDate(0, 0, 30), 10, 200, 7, 1024)...)
	f := plan.Facts{Target: "SQL02", Rates: rates}
	b := plan.Buffers{DeviceKind: store.DeviceUNC, BufferCount: 64, MaxTransferKiB: 4096}
	e := plan.Rate(f, plan.Query{Database: "Orders", Kind: store.KindFull, DeviceKind: store.DeviceUNC, Buffers: &b})
	if e.N != 30 || math.Abs(e.MiBps-400) > 40 || !strings.Contains(e.Basis, "that used BUFFERCOUNT 64 and MAXTRANSFERSIZE 4096 KiB, which this script sets again") {
		t.Errorf("with the script's buffers: %+v", e)
	}
	e = plan.Rate(f, plan.Query{Database: "Orders", Kind: store.KindFull, DeviceKind: store.DeviceUNC})
	if e.N != 10 || math.Abs(e.MiBps-200) > 20 {
		t.Errorf("without: %+v", e)
	}
}

// The backtest of a series with a lasting change: once a few restores
// after the change are known, each is predicted inside its range.
func TestBacktest(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	rates := append(series(rng, "Sales", t0, 40, 400, 0, 0), series(rng, "Sales", t0.AddDate(0, 0, 40), 30, 100, 0, 0)...)
	c := plan.Backtest(rates, "SQL02", store.KindFull, 20, analysis.DefaultConfig())
	if c.Restores != 20 || c.Share() < 0.8 || c.MedianError > 0.2 {
		t.Errorf("%+v (share %.2f)", c, c.Share())
	}
	if s := c.Sentence(); !strings.HasPrefix(s, "of SQL02's last 20 full restores, ") {
		t.Errorf("sentence %q", s)
	}
}
