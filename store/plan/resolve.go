package plan

import (
	"context"
	"strings"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/human"
)

// resolve turns the instance and database a user typed into the names the
// backup history stores them by, compared as SQL Server compares names
// (human.NameKey: brackets, spaces at the ends, case): "[Sales ]" on
// "sql01" plans Sales of SQL01. A name matching none is left as typed
// (Make then says there is no history of it); one matching several
// databases that differ only by case is ambiguous.
func resolve(ctx context.Context, src Source, r Request) (Request, error) {
	have, err := src.BackupDatabases(ctx)
	if err != nil {
		return r, err
	}
	inst, db := human.NameKey(r.Instance), human.NameKey(r.Database)
	var exact, equal []string
	for k := range have {
		i, d, _ := strings.Cut(k, "\x00")
		if human.NameKey(i) != inst {
			continue
		}
		switch {
		case d == r.Database:
			exact = append(exact, d)
		case human.NameKey(d) == db:
			equal = append(equal, d)
		}
	}
	switch {
	case len(exact) > 0:
	case len(equal) == 1:
		r.Database = equal[0]
	case len(equal) > 1:
		return r, store.Errorf(store.EINVALID, "%q names %d databases of %s that differ only by case or spaces (%s): give the exact name",
			r.Database, len(equal), r.Instance, strings.Join(equal, ", "))
	}
	return r, nil
}
