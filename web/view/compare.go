package view

import "github.com/restorewatch/restorewatch/web/chart"

// Compare sets two instances, builds or periods side by side.
type Compare struct {
	A, B      string // the operands as typed
	Ready     bool   // both operands given and understood
	Problem   string // why the comparison could not be made
	Headline  string
	SideA     CompareSide
	SideB     CompareSide
	Measures  []CompareMeasure
	RelChart  chart.BoxPlot
	RawChart  chart.BoxPlot
	ReportURL string // the printable build report, for two builds
	Examples  []Link
	HoursNote string
	Issues    []BuildIssues // catalogued issues of either side's build
	// Matched compares the same series on both sides, per restore kind.
	Matched   Matched
	Method    []MethodItem
	Generated string
	Version   string
}

// CompareSide is one side of a comparison.
type CompareSide struct {
	Label, What, Href       string
	N, MedianRaw, MedianRel string
	Span                    string // first and last restore
}

// CompareMeasure is one measure compared across the sides.
type CompareMeasure struct {
	Measure, A, B, Ratio, Interval, PValue string
	Slower                                 bool // B is materially slower than A
}

// BuildIssues are the catalogued issues whose affected ranges hold a build.
type BuildIssues struct {
	Build  string
	Issues []IssueRef
}

// Matched is the like-for-like comparison: the series restored on both
// sides, each by its own medians, summarised per restore kind.
type Matched struct {
	Series int
	Kinds  []MatchedKind
	Rows   []MatchedRow
}

// MatchedKind summarises one restore kind: the median of its series'
// ratios and how many of them are materially slower.
type MatchedKind struct {
	Kind, Series, Ratio, Slower string
	IsSlower                    bool // the kind's median ratio is materially slower
	AnySlower                   bool // some of its series are
}

// MatchedRow is one series restored on both sides.
type MatchedRow struct {
	Instance, InstanceURL, Database, URL, Kind string
	NA, NB, A, B, Ratio                        string
	Slower                                     bool
}
