package view

import (
	"strings"

	"github.com/restorewatch/restorewatch/web/chart"
)

// Regressions is one page of the regressions list with its status tabs
// and filters.
type Regressions struct {
	Status string // the current tab
	Tabs   []Tab
	Query  string // the name filter as typed
	Kinds  []Option
	// Filtered says a name or kind narrows the list (the tabs count what
	// it matches).
	Filtered bool
	// Total counts the status's regressions the filters match, and the
	// hours they lose a year, over every page.
	Total  string
	Rows   []RegressionRow
	Paging Paging
	Empty  bool // the warehouse holds no restores at all
	// Method says what makes a regression, from the analysis configuration.
	Method string
}

// Tab is one tab of a tabbed list.
type Tab struct {
	Label, Href string
	Current     bool
}

// Evidence is the case for one regression, shared by its page and its
// printable report (SPEC §5): what changed, before and after with
// intervals, the chart, the known issue, hours lost and the method.
type Evidence struct {
	ID int64
	// NextSteps say what would explain a change no recorded factor
	// explains (analysis.RegressionNextSteps); empty when one does.
	NextSteps                   []NextStep
	Headline                    string // one sentence a manager can repeat
	Instance, InstanceURL       string
	Database, DatabaseURL, Kind string
	SeriesURL                   string
	ReportURL, PageURL          string
	Direction, Status           string
	StatusNote, StatusAt        string
	ChangedAt                   string
	ChangeRestoreURL            string

	Baseline, Current       string // median MiB/s
	BaselineN, CurrentN     string
	Ratio, Interval, PValue string
	PText                   string // "p < 0.0001", for sentences
	BaselineDur, CurrentDur string
	HoursPerRestore         string
	RestoresPerYear         string
	HoursPerYear            string
	SizeNote                string // duration against size
	Note                    string // the engine's sentence

	// ChartNote explains the charts; ChartCounts says what they hold
	// (charted, not measured).
	ChartNote, ChartCounts string
	Throughput             chart.TimeScatter
	Duration               chart.TimeScatter
	Factors                []FactorRow
	Issues                 []IssueRow
	Upgrade                UpgradeCase
	// Now is what restoring the database takes today, by its restore
	// plan: the same estimate as the plan page, the API and the CLI.
	Now       RestoreNow
	Method    []MethodItem
	Generated string
	Version   string
}

// RestoreNow is a regression's consequence today: what its restore plan
// expects of the regression's step and of the whole plan, against the
// database's RTO. Text is empty when there is no plan.
type RestoreNow struct {
	Text    string // "A full restore … would take about 9 h 54 min now (…)."
	RTO     string // "The whole plan … takes 10 h 31 min against an RTO of 4 h: over it by 6 h 31 min."
	Over    bool
	Basis   string // what the estimate rests on
	PlanURL string
}

// FactorRow is one factor whose value differs across the change.
type FactorRow struct{ Factor, Before, After, Score string }

// IssueRow is a catalogued known issue that matches: the issue, its
// conditions in words and the builds that fix it. Explains names the
// changed factor that made it apply; empty, it was present before and
// after the change and does not explain it.
type IssueRow struct {
	ID, Title, Description, Conditions, FixBuilds string
	Fixes                                         []FixBuild
	Explains                                      string
	// Why says which condition changed at the change point.
	Why string
}

// FixBuild is a build that contains a fix, with its release and KB
// article (URL empty when the build list names none).
type FixBuild struct {
	Build, Release, KB, URL string
}

// String is "14.0.3026.27 (2017 CU7, KB4229789)".
func (f FixBuild) String() string {
	var in []string
	if f.Release != "" {
		in = append(in, f.Release)
	}
	if f.KB != "" {
		in = append(in, f.KB)
	}
	if len(in) == 0 {
		return f.Build
	}
	return f.Build + " (" + strings.Join(in, ", ") + ")"
}

// MethodItem is one line of "how this was measured".
type MethodItem struct{ Term, Text string }

// StatusForm is the acknowledge/resolve form of a regression.
type StatusForm struct {
	Action  string
	Current string
	Note    string
}

// UpgradeCase is the business case for applying a fix: AS-IS, TO-BE, the
// hours a year it saves and the KB to apply. Ready is false when no known
// fix applies; Text then says why.
type UpgradeCase struct {
	Ready                   bool
	Text                    string
	AsIsBuild, AsIsRelease  string
	AsIsDuration, AsIsMiBps string
	ToBeBuild, ToBeRelease  string
	// ToBeDuration and ToBeMiBps are this series' medians before the
	// change, ToBeBasis their n and period; empty when the issue does not
	// explain the change.
	ToBeDuration, ToBeMiBps, ToBeBasis string
	IssueID, IssueTitle                string
	// AsIsCondition names the builds the restores since the change ran
	// with (the restoring instance's, and the backups' source where that
	// is what changed); Patch names the server the fix goes on.
	AsIsCondition, Patch string
	// Rollback: the instance's own upgrade brought the slowdown and no
	// catalogued issue names a fix; TO-BE is the build it ran before.
	Rollback     bool
	KB, KBURL    string
	HoursPerYear string
	Explains     bool // the issue explains the change (not only present)
	Fleet        FleetFix
}

// FleetFix is what restores on builds holding the fix measure in the
// fleet, relative to their own series' usual speed (other databases' MiB/s
// would say nothing of this one's); Restores is empty when there are none.
type FleetFix struct {
	Builds             []string
	Restores, Relative string
}
