package web

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/human"
)

// suggestions is how many names a "no match" notice offers.
const suggestions = 5

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
			return notice("instance", f.Instance, m, names), nil
		}
		f.Instance = m[0]
	}
	if f.Database != "" {
		var names []string
		if f.Instance == "" {
			// The fleet's names, from the cached orders: the series of a
			// 10 M warehouse took 180 ms to list on every view.
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
			return notice("database", f.Database, m, names), nil
		}
		f.Database = m[0]
	}
	return "", nil
}

// notice says that typed matched no name or several, naming the closest
// or the matches.
func notice(what, typed string, matches, names []string) string {
	if len(matches) > 1 {
		return fmt.Sprintf("No single %s matches %q: it begins %d names (%s); type more of the one you mean.",
			what, typed, len(matches), list(matches))
	}
	if len(names) == 0 {
		return fmt.Sprintf("No %s matches %q: the warehouse has none.", what, typed)
	}
	return fmt.Sprintf("No %s matches %q. The closest: %s.", what, typed, list(human.Closest(typed, names)))
}

func list(names []string) string {
	if len(names) > suggestions {
		return strings.Join(names[:suggestions], ", ") + fmt.Sprintf(" and %d more", len(names)-suggestions)
	}
	return strings.Join(names, ", ")
}
