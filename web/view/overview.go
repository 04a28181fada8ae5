package view

import "github.com/restorewatch/restorewatch/web/chart"

// Overview is the manager's page: is anything slower, what would miss its
// RTO, which builds carry a known issue, is the data fresh.
type Overview struct {
	Empty        bool
	Period       string // "30 days to 2026-03-01"
	Restores     string // count in the period
	RestoresPrev string // "+12 % vs the 30 days before (1,234)"
	Instances    string
	TotalRestore string

	TrendLatest string // median full-restore throughput of the latest week
	TrendNote   string // "weekly median of full restores, last 26 weeks"
	Trend       chart.Sparkline
	HasTrend    bool

	OpenCount      string
	HoursPerYear   string // hours lost per year over all open regressions
	Regressions    []RegressionRow
	MoreRegression bool
	// Watches are the series watched since their newest restore lay beyond
	// their usual (issue 37), newest first, one line each.
	Watches     []Link
	MoreWatches int

	RTOChecked string // databases with a projection
	RTOAtRisk  string
	RTOUnknown string // databases without a known throughput
	Unmeasured []Link // those databases, each a link to its page
	AtRisk     []RTORow
	MoreAtRisk bool

	Exposures []ExposureRow
	// Knees are the restores that slowed sharply part-way, newest first;
	// read on every view, like Collector.
	Knees     []KneeRow
	MoreKnees int // how many more the restores page lists
	Collector CollectorStatus
	Imported  string // last import
}

// RegressionRow is one regression in a list, worst first.
type RegressionRow struct {
	ID                          int64
	URL, ReportURL              string
	Instance, InstanceURL       string
	Database, DatabaseURL, Kind string
	ChangedAt                   string
	Ratio, Interval             string
	Baseline, Current           string // MiB/s
	BaselineN, CurrentN         string
	PValue                      string
	HoursPerRestore             string
	HoursPerYear                string
	KnownIssues                 []string
	Status                      string
	// SeriesURL lists the series' restores (the counts link there).
	SeriesURL string
	// Why says what explains it, in words: a known issue the change made
	// apply, the top changed factor, or "No recorded factor changed".
	Why string
}

// RTORow is one database whose projected restore time exceeds its target.
type RTORow struct {
	Instance, InstanceURL, Database, DatabaseURL string
	Size, Throughput, Expected, Target, Over     string
}

// ExposureRow is one known issue that applies to one build in the fleet.
type ExposureRow struct {
	IssueID, Title, Build, BuildName string
	Instances                        string // count
	Names                            []Link // first few instances
	FixBuilds                        string
}

// Link is a text with an address.
type Link struct{ Text, Href string }

// CollectorStatus says how fresh live collection is.
type CollectorStatus struct {
	Configured bool
	Failed     bool // an instance's latest run failed
	Text       string
}
