package postgres

import (
	"context"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// The methods of the contract not built on PostgreSQL yet: each says so
// (errUnsupported: store.EUNAVAILABLE wrapping errors.ErrUnsupported) and
// the contract suite lists it as missing. Built methods move out of this
// file into one named after their group.

func (db *DB) Prune(ctx context.Context, r store.Retention, now time.Time) (store.PruneStats, error) {
	return store.PruneStats{}, errUnsupported("Prune")
}
