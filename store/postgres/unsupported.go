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

func (db *DB) UpdateOrders(ctx context.Context, old store.FleetOrders) (store.FleetOrders, error) {
	return nil, errUnsupported("UpdateOrders")
}

func (db *DB) LoadOrders(ctx context.Context) (store.FleetOrders, error) {
	return nil, errUnsupported("LoadOrders")
}

func (db *DB) SaveOrders(ctx context.Context, o store.FleetOrders) error {
	return errUnsupported("SaveOrders")
}

func (db *DB) Aggregates(ctx context.Context) ([]store.Aggregate, error) {
	return nil, errUnsupported("Aggregates")
}

func (db *DB) SaveAggregate(ctx context.Context, a store.Aggregate) error {
	return errUnsupported("SaveAggregate")
}
