package web

import (
	"context"
	"slices"
	"strings"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/human"
)

// resolveNames turns the instance and database a user typed into the
// names they mean, as the command line does (store/human.MatchNames: the
// exact name, else the same but for case, else the names it begins), so
// that "rpt-sql01" or "RPT" finds RPT-SQL01\REPORTING. The filter keeps
// one instance and one database: store's DB.Restores compares names
// exactly, and the matching lives here and in the CLI, both through
// store/human. When a name matches none, or several, it returns the notice
// to show (with the closest names) and leaves the filter as typed, which
// then lists nothing.
func (s *Server) resolveNames(ctx context.Context, f *store.RestoreFilter) (string, error) {
	if f.Instance != "" {
		insts, err := s.instances(ctx)
		if err != nil {
			return "", err
		}
		names := make([]string, len(insts))
		for i, in := range insts {
			names[i] = in.Name
		}
		m := human.MatchNames(f.Instance, names)
		if len(m) != 1 {
			return notice("instance", "instances", f.Instance, "", m, names), nil
		}
		f.Instance = m[0]
	}
	if f.Database != "" {
		var names []string
		if f.Instance == "" {
			// The fleet's names, from the cached orders: listing a large
			// warehouse's series on every view cost more than the page.
			o, err := s.restoreOrders(ctx)
			if err != nil {
				return "", err
			}
			names = o.Databases()
		} else {
			series, err := s.db.ListSeries(ctx, store.SeriesFilter{Instance: f.Instance})
			if err != nil {
				return "", err
			}
			for _, se := range series {
				if !slices.Contains(names, se.Database) {
					names = append(names, se.Database)
				}
			}
		}
		m := human.MatchNames(f.Database, names)
		if len(m) != 1 {
			where := ""
			if f.Instance != "" {
				where = " on " + f.Instance
			}
			return notice("database", "databases", f.Database, where, m, names), nil
		}
		f.Database = m[0]
	}
	return "", nil
}

// notice is human.NoMatch, the command line's sentence, as a notice: a
// capital and a full stop.
func notice(what, plural, typed, where string, matches, names []string) string {
	m := human.NoMatch(what, plural, typed, where, matches, names)
	return strings.ToUpper(m[:1]) + m[1:] + "."
}
