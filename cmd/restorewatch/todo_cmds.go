package main

import (
	"context"

	"github.com/restorewatch/restorewatch/store"
)

// ReportCmd writes an evidence report.
type ReportCmd struct{}

// Run implements the command.
func (c *ReportCmd) Run(ctx context.Context, m *Main) error {
	return store.Errorf(store.EUNAVAILABLE, "report: not built yet")
}

// ServeCmd serves the dashboard.
type ServeCmd struct{}

// Run implements the command.
func (c *ServeCmd) Run(ctx context.Context, m *Main) error {
	return store.Errorf(store.EUNAVAILABLE, "serve: not built yet")
}

// CollectCmd collects from live instances.
type CollectCmd struct{}

// Run implements the command.
func (c *CollectCmd) Run(ctx context.Context, m *Main) error {
	return store.Errorf(store.EUNAVAILABLE, "collect: not built yet")
}

