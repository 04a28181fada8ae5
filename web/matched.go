package web

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/web/view"
)

// matchedMin is the restores a series needs on each side to be compared.
const matchedMin = 3

// kindOrder puts full restores first: five full-restore regressions must
// not be drowned by hourly log restores.
var kindOrder = map[store.Kind]int{store.KindFull: 0, store.KindDiff: 1, store.KindLog: 2}

// matched compares like with like: the series (instance, database, kind)
// restored on both sides, each by the ratio of its own medians, B ÷ A;
// then, per restore kind, the median of those ratios. Pooling MiB/s across
// different databases compares the databases as much as the sides.
func (s *Server) matched(ctx context.Context, a, b store.RestoreFilter) (view.Matched, error) {
	type key struct {
		instance, database string
		kind               store.Kind
	}
	side := func(f store.RestoreFilter) (map[key][]float64, error) {
		out := map[key][]float64{}
		f.Limit = sideLimit
		_, err := s.db.Restores(ctx, store.RestoreQuery{Filter: f, Series: true, Each: func(r *store.Restore) error {
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
		return view.Matched{}, err
	}
	mb, err := side(b)
	if err != nil {
		return view.Matched{}, err
	}
	var m view.Matched
	type row struct {
		k          key
		na, nb     int
		medA, medB float64
	}
	var rows []row
	for k, va := range ma {
		vb := mb[k]
		if len(va) < matchedMin || len(vb) < matchedMin {
			continue
		}
		rows = append(rows, row{k, len(va), len(vb), analysis.Median(va), analysis.Median(vb)})
	}
	slices.SortFunc(rows, func(x, y row) int {
		if c := cmp.Compare(kindRank(x.k.kind), kindRank(y.k.kind)); c != 0 {
			return c
		}
		return cmp.Compare(x.medB/x.medA, y.medB/y.medA)
	})
	byKind := map[store.Kind][]float64{}
	var kinds []store.Kind
	for _, r := range rows {
		ratio := r.medB / r.medA
		m.Rows = append(m.Rows, view.MatchedRow{Instance: r.k.instance, InstanceURL: view.InstanceURL(r.k.instance), Database: r.k.database,
			URL: view.DatabaseKindURL(r.k.instance, r.k.database, string(r.k.kind)), Kind: string(r.k.kind),
			NA: view.Int(int64(r.na)), NB: view.Int(int64(r.nb)), A: view.MiBps(r.medA), B: view.MiBps(r.medB),
			Ratio: view.Ratio(ratio), Slower: ratio <= slowCohort})
		if _, ok := byKind[r.k.kind]; !ok {
			kinds = append(kinds, r.k.kind)
		}
		byKind[r.k.kind] = append(byKind[r.k.kind], math.Log(ratio))
	}
	for _, k := range kinds {
		g := math.Exp(analysis.Median(byKind[k]))
		slower := 0
		for _, l := range byKind[k] {
			if math.Exp(l) <= slowCohort {
				slower++
			}
		}
		m.Kinds = append(m.Kinds, view.MatchedKind{Kind: string(k), Series: view.Int(int64(len(byKind[k]))), Ratio: view.Ratio(g),
			Slower: fmt.Sprintf("%d of %d", slower, len(byKind[k])), IsSlower: g <= slowCohort, AnySlower: slower > 0})
	}
	m.Series = len(rows)
	return m, nil
}

func kindRank(k store.Kind) int {
	if r, ok := kindOrder[k]; ok {
		return r
	}
	return len(kindOrder)
}
