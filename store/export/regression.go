package export

import (
	"math"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/human"
)

// RegressionRow is the SPEC §6.1 JSON shape of a regression, shared by
// `restorewatch regressions --format json` and GET /api/regressions.
type RegressionRow struct {
	ID                  int64          `json:"id"`
	Instance            string         `json:"instance"`
	Database            string         `json:"database"`
	Kind                string         `json:"kind"`
	Direction           string         `json:"direction"`
	ChangedAt           string         `json:"changed_at"`
	BaselineMiBps       float64        `json:"baseline_mibps"`
	CurrentMiBps        float64        `json:"current_mibps"`
	Ratio               float64        `json:"ratio"`
	RatioLow            float64        `json:"ratio_low"`
	RatioHigh           float64        `json:"ratio_high"`
	BaselineN           int            `json:"baseline_n"`
	CurrentN            int            `json:"current_n"`
	PValue              float64        `json:"p_value"`
	ChangedFactors      []FactorChange `json:"changed_factors"`
	KnownIssues         []string       `json:"known_issues"`
	HoursLostPerRestore float64        `json:"hours_lost_per_restore"`
	HoursLostPerYear    float64        `json:"hours_lost_per_year"`
	// State is "regression" for a located change (Direction says slower
	// or faster) and "watch" for a series watched since its newest restore
	// lay beyond its usual (issue 37): RestoreID is that restore,
	// ChangedAt its time, Ratio its throughput over the usual
	// (BaselineMiBps, of BaselineN restores), DurationRatio its duration
	// over theirs.
	State         string  `json:"state"`
	RestoreID     int64   `json:"restore_id,omitempty"`
	DurationRatio float64 `json:"duration_ratio"`
	Status        string  `json:"status"`
	Note          string  `json:"note"`
	// NextSteps say what would explain a regression no recorded factor
	// explains, and how to gather it (analysis.RegressionNextSteps);
	// absent when a factor changed.
	NextSteps []analysis.NextStep `json:"next_steps,omitempty"`
}

// FactorChange is one changed factor of a regression. Factor is the
// machine key ("source_build"), stable for scripts; FactorLabel is its
// words ("Source build (of the backup)") for people.
type FactorChange struct {
	Factor      string  `json:"factor"`
	FactorLabel string  `json:"factor_label"`
	Before      string  `json:"before"`
	After       string  `json:"after"`
	Score       float64 `json:"score"`
}

// Regression converts a regression to its exported shape.
func Regression(r *store.Regression) RegressionRow {
	out := RegressionRow{ID: r.ID, Instance: r.Instance, Database: r.Database, Kind: string(r.Kind),
		Direction: r.Direction, ChangedAt: Time(r.ChangedAt),
		BaselineMiBps: Round(r.BaselineMiBps, 3), CurrentMiBps: Round(r.CurrentMiBps, 3), Ratio: Round(r.Ratio, 4),
		RatioLow: Round(r.RatioLow, 4), RatioHigh: Round(r.RatioHigh, 4), BaselineN: r.BaselineN,
		CurrentN: r.CurrentN, PValue: r.PValue, ChangedFactors: []FactorChange{}, KnownIssues: r.KnownIssues,
		HoursLostPerRestore: Round(r.HoursLostPerRestore(), 2), HoursLostPerYear: Round(r.HoursLostPerYear(), 1),
		Status: r.Status, Note: r.Note, State: "regression", DurationRatio: Round(r.DurationRatio, 4)}
	for _, f := range r.ChangedFactors {
		out.ChangedFactors = append(out.ChangedFactors, FactorChange{Factor: f.Factor, FactorLabel: human.FactorLabel(f.Factor), Before: f.Before, After: f.After, Score: Round(f.Score, 3)})
	}
	if out.KnownIssues == nil {
		out.KnownIssues = []string{}
	}
	return out
}

// Round rounds v to digits decimals; NaN and infinities become 0, which JSON
// cannot carry.
func Round(v float64, digits int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// Watch converts an open watch to the exported shape of a regression,
// State "watch", so that the CLI's and API's lists carry both.
func Watch(w *store.Watch) RegressionRow {
	return RegressionRow{ID: w.ID, Instance: w.Instance, Database: w.Database, Kind: string(w.Kind), Direction: w.Direction,
		ChangedAt: Time(w.OpenedAt), BaselineMiBps: Round(w.UsualMiBps, 3), CurrentMiBps: Round(w.UsualMiBps*w.Ratio, 3),
		Ratio: Round(w.Ratio, 4), BaselineN: w.UsualN, CurrentN: 1, ChangedFactors: []FactorChange{}, KnownIssues: []string{},
		State: "watch", RestoreID: w.RestoreID, DurationRatio: Round(w.DurationRatio, 4), Status: w.State, Note: human.WatchLine(w)}
}
