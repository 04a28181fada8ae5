package main

import (
	"context"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/web"
)

// uploads runs the dashboard's uploads through the one import pipeline, as
// `restorewatch import` does: the kind given or told from the content, the
// records stored, the touched instances derived and analysed with serve's
// analysis options.
type uploads struct {
	db  store.Warehouse
	opt analysis.Options
}

// Import implements web.Importer.
func (u uploads) Import(ctx context.Context, up web.Upload) (web.Imported, error) {
	sum, err := ingest.Import(ctx, u.db, ingest.FileKind(up.Kind), up.Name, up.R, -1,
		ingest.Options{Instance: up.Instance, Database: up.Database, Analysis: u.opt})
	return web.Imported{Kind: sum.Source, ImportSummary: sum}, err
}
