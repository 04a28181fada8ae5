package chart_test

import (
	"math"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/web/chart"
)

func TestThin(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	type pt struct {
		i       int
		v       float64
		outlier bool
	}
	var ps []pt
	for i := range 1000 {
		v := 100 + float64(i%7) // 100..106 in every column
		ps = append(ps, pt{i: i, v: v})
	}
	ps[500].v, ps[501].v = 1, 5000 // one extreme low, one extreme high, in one column
	ps[700].outlier = true         // a middling value flagged as an outlier
	ps[900].v = math.NaN()
	at := func(p *pt) (time.Time, float64, bool) { return t0.Add(time.Duration(p.i) * time.Hour), p.v, p.outlier }

	got := chart.Thin(ps, 50, at)
	if len(got) > 2*50+1 {
		t.Errorf("kept %d points, want at most %d (two per column and the outlier)", len(got), 2*50+1)
	}
	has := map[int]bool{}
	for k, p := range got {
		has[p.i] = true
		if k > 0 && got[k-1].i >= p.i {
			t.Fatalf("order not kept: %d after %d", p.i, got[k-1].i)
		}
		if math.IsNaN(p.v) {
			t.Errorf("kept the NaN point %d", p.i)
		}
	}
	for _, want := range []int{500, 501, 700} {
		if !has[want] {
			t.Errorf("point %d (an extreme or an outlier) was dropped", want)
		}
	}
	// Every column keeps its lowest and highest value: with 20 points per
	// column cycling through 100..106, each column shows both 100 and 106.
	lo, hi := map[int]bool{}, map[int]bool{}
	for _, p := range got {
		c := min(p.i*50/999, 49)
		if p.v <= 100 {
			lo[c] = true
		}
		if p.v >= 106 {
			hi[c] = true
		}
	}
	if len(lo) != 50 || len(hi) != 50 {
		t.Errorf("columns with their minimum kept: %d, maximum: %d; want 50 each", len(lo), len(hi))
	}

	few := ps[:60]
	if got := chart.Thin(few, 50, at); len(got) != 60 {
		t.Errorf("60 points in 50 columns: kept %d, want all 60", len(got))
	}
}
