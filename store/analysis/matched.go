package analysis

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/restorewatch/restorewatch/store"
)

// MatchedMin is the restores a series needs on each side to be compared.
const MatchedMin = 3

// SlowRatio is the ratio at or under which one side's restores count as
// slower than the other's, and a build's cohort as slow: the regression
// threshold's default (SPEC §5) applied to a comparison.
const SlowRatio = 0.67

// RestoreLister reads restores through one filter; the SQLite warehouse
// satisfies it.
type RestoreLister interface {
	Restores(ctx context.Context, q store.RestoreQuery) (store.RestorePage, error)
}

// Matched is a comparison of like with like: the series restored on both
// sides, each by the ratio of its own medians, and per restore kind the
// median of those ratios.
type Matched struct {
	Series []MatchedSeries // full restores first, then by ratio, slowest first
	Kinds  []MatchedKind   // in the order of Series
}

// MatchedSeries is one series (instance, database, kind) restored on both
// sides: how many measured restores each side has and their median
// logical MiB/s.
type MatchedSeries struct {
	Instance, Database string
	Kind               store.Kind
	NA, NB             int
	A, B               float64
}

// Ratio is B ÷ A.
func (m MatchedSeries) Ratio() float64 { return m.B / m.A }

// MatchedKind is the matched series of one restore kind: how many, the
// median of their ratios (a geometric median: the median of the logs),
// and how many of them are at or under SlowRatio.
type MatchedKind struct {
	Kind   store.Kind
	Series int
	Ratio  float64
	Slower int
}

// Match compares the restores a and b select (each at most its Limit,
// newest first) series by series, B ÷ A. Pooling MiB/s across different
// databases compares the databases as much as the sides.
func Match(ctx context.Context, src RestoreLister, a, b store.RestoreFilter) (Matched, error) {
	type key struct {
		instance, database string
		kind               store.Kind
	}
	side := func(f store.RestoreFilter) (map[key][]float64, error) {
		out := map[key][]float64{}
		_, err := src.Restores(ctx, store.RestoreQuery{Filter: f, Series: true, Each: func(r *store.Restore) error {
			if r.LogicalMiBps != nil && *r.LogicalMiBps > 0 {
				k := key{r.Instance, r.Database, r.Kind}
				out[k] = append(out[k], *r.LogicalMiBps)
			}
			return nil
		}})
		return out, err
	}
	ma, err := side(a)
	if err != nil {
		return Matched{}, err
	}
	mb, err := side(b)
	if err != nil {
		return Matched{}, err
	}
	var m Matched
	for k, va := range ma {
		vb := mb[k]
		if len(va) < MatchedMin || len(vb) < MatchedMin {
			continue
		}
		m.Series = append(m.Series, MatchedSeries{Instance: k.instance, Database: k.database, Kind: k.kind,
			NA: len(va), NB: len(vb), A: Median(va), B: Median(vb)})
	}
	slices.SortFunc(m.Series, func(x, y MatchedSeries) int {
		return cmp.Or(cmp.Compare(kindRank(x.Kind), kindRank(y.Kind)), cmp.Compare(x.Ratio(), y.Ratio()))
	})
	logs := map[store.Kind][]float64{}
	for _, s := range m.Series {
		if _, ok := logs[s.Kind]; !ok {
			m.Kinds = append(m.Kinds, MatchedKind{Kind: s.Kind})
		}
		logs[s.Kind] = append(logs[s.Kind], math.Log(s.Ratio()))
	}
	for i := range m.Kinds {
		l := logs[m.Kinds[i].Kind]
		m.Kinds[i].Series, m.Kinds[i].Ratio = len(l), math.Exp(Median(l))
		for _, x := range l {
			if math.Exp(x) <= SlowRatio {
				m.Kinds[i].Slower++
			}
		}
	}
	return m, nil
}

// kindOrder puts full restores first: five full-restore regressions must
// not be drowned by hourly log restores.
var kindOrder = map[store.Kind]int{store.KindFull: 0, store.KindDiff: 1, store.KindLog: 2}

func kindRank(k store.Kind) int {
	if r, ok := kindOrder[k]; ok {
		return r
	}
	return len(kindOrder)
}
