package web

import (
	"context"
	"fmt"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/human"
	"github.com/restorewatch/restorewatch/web/view"
)

// matched words the like-with-like comparison (analysis.Match) of the
// newest sideLimit restores of each side.
func (s *Server) matched(ctx context.Context, a, b store.RestoreFilter) (view.Matched, error) {
	a.Limit, b.Limit = sideLimit, sideLimit
	mt, err := analysis.Match(ctx, s.db, a, b)
	if err != nil {
		return view.Matched{}, err
	}
	var m view.Matched
	for _, r := range mt.Series {
		m.Rows = append(m.Rows, view.MatchedRow{Instance: r.Instance, InstanceURL: view.InstanceURL(r.Instance), Database: r.Database,
			URL: view.DatabaseKindURL(r.Instance, r.Database, string(r.Kind)), Kind: string(r.Kind),
			NA: view.Int(int64(r.NA)), NB: view.Int(int64(r.NB)), A: view.MiBps(r.A), B: view.MiBps(r.B),
			Ratio: human.Change(r.Ratio()), Slower: r.Ratio() <= analysis.SlowRatio})
	}
	for _, k := range mt.Kinds {
		m.Kinds = append(m.Kinds, view.MatchedKind{Kind: string(k.Kind), Series: view.Int(int64(k.Series)), Ratio: human.Change(k.Ratio),
			Slower: fmt.Sprintf("%d of %d", k.Slower, k.Series), IsSlower: k.Ratio <= analysis.SlowRatio, AnySlower: k.Slower > 0})
	}
	m.Series = len(mt.Series)
	return m, nil
}
