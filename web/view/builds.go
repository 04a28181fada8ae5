package view

import "github.com/restorewatch/restorewatch/web/chart"

// Builds is the fleet's build cohorts: how fast restores run on each build
// relative to their own usual speed.
type Builds struct {
	Empty    bool
	Measured string // restores with a relative speed
	Sections []CohortSection
	Options  []Option // builds for the compare form's first build (A)
	OptionsB []Option // the same builds, selected for the second (B)
}

// CohortSection is one grouping (instance build or source build).
type CohortSection struct {
	ID, Title, Lede string
	Chart           chart.BoxPlot
	Rows            []CohortRow
}

// CohortRow is one build's cohort.
type CohortRow struct {
	Build, Release, RestoresURL string
	N, Median, CI, IQR          string
	Slow                        bool // the median is materially below usual speed
	Instances                   string
	Issues                      []IssueRef
	CompareURL                  string
}

// IssueRef names a known issue briefly.
type IssueRef struct {
	ID, Title, Conditions string
	Applies               bool // its conditions hold, not only its build
}
