package sqlite_test

import (
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/plan"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

// The packages above the warehouse declare what they read as interfaces;
// these lines hold the SQLite warehouse to each of them at compile time.
var (
	_ analysis.Warehouse     = (*sqlite.DB)(nil)
	_ analysis.KneeStore     = (*sqlite.DB)(nil)
	_ analysis.NextStepStore = (*sqlite.DB)(nil)
	_ analysis.SpeedSource   = (*sqlite.DB)(nil)
	_ analysis.RestoreLister = (*sqlite.DB)(nil)
	_ plan.Source            = (*sqlite.DB)(nil)
)
