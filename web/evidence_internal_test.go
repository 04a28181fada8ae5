package web

import (
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// The evidence charts start at the first measured restore, not at months
// of older restores whose speed is unknown (on a phone the visible part was
// that empty stretch), and the dashed "median before" spans the restores
// the baseline counts, not the axis from its edge.
func TestEvidenceChartsStartAtTheData(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var rs []store.ChartPoint // newest first, as ChartPoints returns them
	for d := 99; d >= 0; d-- {
		p := store.ChartPoint{ID: int64(d + 1), At: t0.AddDate(0, 0, d), Kind: store.KindFull}
		if d >= 60 { // the first 60 days: restores whose size was never known
			v, dur := 100.0, 600.0
			if d >= 90 {
				v, dur = 40, 1500
			}
			p.MiBps, p.DurationS = &v, &dur
		}
		rs = append(rs, p)
	}
	r := &store.Regression{ChangedAt: t0.AddDate(0, 0, 90), BaselineN: 20, BaselineMiBps: 100, CurrentMiBps: 40,
		BaselineDurationS: 600, CurrentDurationS: 1500}
	tput, dur, _ := evidenceCharts(r, rs, nil)
	first := t0.AddDate(0, 0, 60)
	if !tput.From.Equal(first) || !dur.From.Equal(first) {
		t.Errorf("axes from %v and %v, want the first measured restore %v", tput.From, dur.From, first)
	}
	base := t0.AddDate(0, 0, 70) // the 20 restores before the change: days 70-89
	if got := tput.RefLines[0].From; !got.Equal(base) {
		t.Errorf("median before from %v, want %v", got, base)
	}
	if got := dur.RefLines[0].From; !got.Equal(base) {
		t.Errorf("duration's median before from %v, want %v", got, base)
	}
}
