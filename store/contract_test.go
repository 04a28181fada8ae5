package store_test

import (
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/plan"
)

// The packages above the warehouse declare what they read as interfaces;
// these lines hold the SQLite warehouse to each of them at compile time.
var (
	_ analysis.Warehouse     = (*store.DB)(nil)
	_ analysis.KneeStore     = (*store.DB)(nil)
	_ analysis.NextStepStore = (*store.DB)(nil)
	_ analysis.SpeedSource   = (*store.DB)(nil)
	_ analysis.RestoreLister = (*store.DB)(nil)
	_ plan.Source            = (*store.DB)(nil)
)
