package analysis_test

import (
	"context"
	"math"
	"testing"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
)

// sides is a RestoreLister whose two sides are told apart by the filter's
// build.
type sides map[string][]store.Restore

func (s sides) Restores(_ context.Context, q store.RestoreQuery) (store.RestorePage, error) {
	for i := range s[q.Filter.Build] {
		if err := q.Each(&s[q.Filter.Build][i]); err != nil {
			return store.RestorePage{}, err
		}
	}
	return store.RestorePage{Total: len(s[q.Filter.Build])}, nil
}

// TestMatchLikeWithLike: each series restored on both sides is compared
// with itself (B ÷ A of its own medians), a series with too few restores
// on a side is left out, full restores come first, and each kind's ratio
// is the median of its series' ratios.
func TestMatchLikeWithLike(t *testing.T) {
	restores := func(inst, db string, k store.Kind, mibps ...float64) []store.Restore {
		var out []store.Restore
		for _, v := range mibps {
			out = append(out, store.Restore{Instance: inst, Database: db, Kind: k, LogicalMiBps: &v})
		}
		return out
	}
	var a, b []store.Restore
	// A big fast database on A only would make pooled MiB/s say B is slow.
	a = append(a, restores("S1", "Big", store.KindFull, 900, 900, 900)...)
	a = append(a, restores("S1", "Billing", store.KindFull, 300, 310, 290)...)
	b = append(b, restores("S1", "Billing", store.KindFull, 100, 90, 110)...)
	a = append(a, restores("S2", "Sales", store.KindFull, 200, 200, 200)...)
	b = append(b, restores("S2", "Sales", store.KindFull, 210, 200, 190, 0)...) // 0: unmeasured, not counted
	a = append(a, restores("S1", "Billing", store.KindLog, 50, 50, 50)...)
	b = append(b, restores("S1", "Billing", store.KindLog, 50, 50, 50)...)
	a = append(a, restores("S3", "Few", store.KindFull, 10, 10)...)
	b = append(b, restores("S3", "Few", store.KindFull, 10, 10, 10)...)
	m, err := analysis.Match(t.Context(), sides{"A": a, "B": b}, store.RestoreFilter{Build: "A"}, store.RestoreFilter{Build: "B"})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Series) != 3 {
		t.Fatalf("matched %d series, want Billing full and log and Sales: %+v", len(m.Series), m.Series)
	}
	first := m.Series[0]
	if first.Database != "Billing" || first.Kind != store.KindFull || first.NA != 3 || first.NB != 3 || first.A != 300 || first.B != 100 {
		t.Errorf("first = %+v, want Billing's full restores (the slowest full), 300 → 100", first)
	}
	if m.Series[1].Database != "Sales" || m.Series[1].NB != 3 || m.Series[2].Kind != store.KindLog {
		t.Errorf("order = %+v, want full restores by ratio, then log", m.Series)
	}
	if len(m.Kinds) != 2 || m.Kinds[0].Kind != store.KindFull || m.Kinds[0].Series != 2 || m.Kinds[0].Slower != 1 {
		t.Fatalf("kinds = %+v, want full (2 series, 1 slower) then log", m.Kinds)
	}
	// The median of the logs of 1/3 and 1.
	if want := math.Sqrt(1.0 / 3); math.Abs(m.Kinds[0].Ratio-want) > 1e-9 {
		t.Errorf("full ratio = %v, want %v", m.Kinds[0].Ratio, want)
	}
	if m.Kinds[1].Ratio != 1 || m.Kinds[1].Slower != 0 {
		t.Errorf("log = %+v, want 1×, none slower", m.Kinds[1])
	}
}
