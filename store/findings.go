package store

import "time"

// Series is one (instance, database, kind) sequence of restores and the
// engine's verdict on it.
type Series struct {
	ID            int64     `json:"id"`
	InstanceID    int64     `json:"-"`
	Instance      string    `json:"instance"`
	Database      string    `json:"database"`
	Kind          Kind      `json:"kind"`
	Family        string    `json:"family"`
	N             int       `json:"n"`
	NMeasured     int       `json:"n_measured"`
	Verdict       string    `json:"verdict"`
	BaselineMiBps *float64  `json:"baseline_mibps"`
	CurrentMiBps  *float64  `json:"current_mibps"`
	LastAt        time.Time `json:"last_at"`
	LastBytes     *int64    `json:"last_bytes"`
	Outliers      []int64   `json:"outliers"`
	ChangePoints  []int64   `json:"change_points"`
	Note          string    `json:"note"`
	// Watch is the series' open watch: its newest restore lies beyond its
	// usual (nil when it does not).
	Watch *Watch `json:"watch,omitempty"`
}

// Watch is a series watched from a restore beyond its usual (issue 37):
// open until the next restore confirms a regression (two in a row) or
// closes it (back to usual); closed and confirmed ones are history.
type Watch struct {
	ID         int64     `json:"id"`
	InstanceID int64     `json:"-"`
	Instance   string    `json:"instance"`
	Database   string    `json:"database"`
	Kind       Kind      `json:"kind"`
	Direction  string    `json:"direction"` // regression (slower) | improvement (faster)
	RestoreID  int64     `json:"restore_id"`
	OpenedAt   time.Time `json:"opened_at"`
	// Ratio is the restore's throughput over the usual (median of the
	// series' recent restores); DurationRatio its duration over theirs.
	Ratio         float64    `json:"ratio"`
	DurationRatio float64    `json:"duration_ratio"`
	UsualMiBps    float64    `json:"usual_mibps"`
	UsualN        int        `json:"usual_n"`
	State         string     `json:"state"` // open | closed | confirmed
	ClosedAt      *time.Time `json:"closed_at,omitempty"`
	ClosedNote    string     `json:"closed_note,omitempty"`
	FirstSeen     time.Time  `json:"first_seen"`
}

// Watch states.
const (
	WatchOpen      = "open"
	WatchClosed    = "closed"
	WatchConfirmed = "confirmed"
)

// WatchFilter selects watches.
type WatchFilter struct {
	Instance, Database string
	State              string // "" = any
}

// FactorChange is one factor whose usual value differs across a change point.
type FactorChange struct {
	Factor string  `json:"factor"`
	Before string  `json:"before"`
	After  string  `json:"after"`
	Score  float64 `json:"score"`
}

// Regression is a located, tested change in a series' throughput: a
// slowdown, or (Direction "improvement") a speed-up.
type Regression struct {
	ID                int64          `json:"id"`
	InstanceID        int64          `json:"-"`
	Instance          string         `json:"instance"`
	Database          string         `json:"database"`
	Kind              Kind           `json:"kind"`
	Direction         string         `json:"direction"`
	ChangedAt         time.Time      `json:"changed_at"`
	ChangeRestoreID   int64          `json:"change_restore_id"`
	BaselineMiBps     float64        `json:"baseline_mibps"`
	CurrentMiBps      float64        `json:"current_mibps"`
	Ratio             float64        `json:"ratio"`
	RatioLow          float64        `json:"ratio_low"`
	RatioHigh         float64        `json:"ratio_high"`
	BaselineN         int            `json:"baseline_n"`
	CurrentN          int            `json:"current_n"`
	PValue            float64        `json:"p_value"`
	SizeGrowth        float64        `json:"size_growth"`
	DurationRatio     float64        `json:"duration_ratio"`
	BaselineDurationS float64        `json:"baseline_duration_s"`
	CurrentDurationS  float64        `json:"current_duration_s"`
	RestoresPerYear   float64        `json:"restores_per_year"`
	ChangedFactors    []FactorChange `json:"changed_factors"`
	KnownIssues       []string       `json:"known_issues"`
	Note              string         `json:"note"`
	// State is "regression" for a located change ("watch" for an open
	// watch listed beside the regressions, issue 37).
	State      string     `json:"state"`
	Status     string     `json:"status"`
	StatusNote string     `json:"status_note"`
	StatusAt   *time.Time `json:"status_at"`
	FirstSeen  time.Time  `json:"first_seen"`
	LastSeen   time.Time  `json:"last_seen"`
}

// HoursLostPerRestore is the extra wall time one restore now takes.
func (r *Regression) HoursLostPerRestore() float64 {
	if r.CurrentDurationS <= r.BaselineDurationS {
		return 0
	}
	return (r.CurrentDurationS - r.BaselineDurationS) / 3600
}

// HoursLostPerYear is HoursLostPerRestore over the restores of a year at
// the series' recent pace: what pages, report, CLI and API rank and show.
func (r *Regression) HoursLostPerYear() float64 {
	return r.HoursLostPerRestore() * r.RestoresPerYear
}

// Exposure is an instance whose build and restores meet a known issue's
// conditions, with or without a regression.
type Exposure struct {
	InstanceID int64  `json:"-"`
	Instance   string `json:"instance"`
	IssueID    string `json:"issue_id"`
	Build      string `json:"build"`
	Conditions string `json:"conditions"`
}

// Regression statuses.
const (
	StatusOpen         = "open"
	StatusAcknowledged = "acknowledged"
	StatusResolved     = "resolved"
)

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
