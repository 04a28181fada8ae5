package alert_test

import (
	"github.com/restorewatch/restorewatch/alert"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

var _ alert.Facts = (*sqlite.DB)(nil)
var _ alert.Store = (*sqlite.DB)(nil)
