package store

// RegressionFilter selects regressions.
type RegressionFilter struct {
	ID        int64
	Instance  string
	Database  string
	Status    string // "" = any; "active" = open or acknowledged
	Direction string // "" = regression only; "any"
}

// SeriesFilter selects series.
type SeriesFilter struct {
	Instance string
	Database string
}
