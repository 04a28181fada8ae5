package store

import (
	"strings"
	"time"
)

// CollectorRun is one collection pass over one instance: when it ran, what
// each source read and why a source failed. Error texts are written by the
// collector with secrets already removed.
type CollectorRun struct {
	ID       int64             `json:"id"`
	Instance string            `json:"instance"`
	Started  time.Time         `json:"started"`
	Finished *time.Time        `json:"finished"`
	Status   string            `json:"status"`
	Rows     map[string]int64  `json:"rows"`
	Errors   map[string]string `json:"errors"`
	Notes    []string          `json:"notes"`
}

// Validate reports whether a run record can be kept: an instance and
// times in the range CheckInstant keeps. StartRun and FinishRun check it,
// so a pushed record passes the same check as a local collector's.
func (r *CollectorRun) Validate() error {
	if strings.TrimSpace(r.Instance) == "" {
		return Errorf(EINVALID, "run record: instance is empty")
	}
	if err := firstError(CheckInstant("started", r.Started), CheckInstantPtr("finished", r.Finished)); err != nil {
		return Errorf(EINVALID, "run record: %s", ErrorMessage(err))
	}
	return nil
}

// Run statuses.
const (
	RunRunning  = "running"
	RunOK       = "ok"
	RunPartial  = "partial"  // some sources degraded, the rest collected
	RunFailed   = "failed"   // no source collected (unreachable, login failed)
	RunTimeout  = "timeout"  // the pass hit its deadline
	RunCanceled = "canceled" // the collector stopped during the pass
)

// NoteInsecureLogin starts the run-record note of an instance whose login
// can be read or altered on the way (encryption off, any certificate
// trusted): the collector writes it, the collector page turns it into a
// warning.
const NoteInsecureLogin = "insecure login: "

// DefaultCollectorInterval is the time between a collector's passes when
// its configuration does not say.
const DefaultCollectorInterval = 15 * time.Minute

// InflightSample is one sample of a restore running on an instance
// (sys.dm_exec_requests). Times are the instance's wall clock.
type InflightSample struct {
	Instance       string
	Database       string
	SessionID      int64
	Command        string // RESTORE DATABASE, RESTORE LOG
	Statement      string // backup passwords redacted by the collector
	Start          time.Time
	SampledAt      time.Time
	UTCOffset      int // minutes, at SampledAt
	Percent        float64
	EstRemainingMs int64
	WaitType       string
}

// CurvePoint is one point of a progress curve.
type CurvePoint struct {
	At             time.Time `json:"at"` // the instance's wall clock
	Percent        float64   `json:"percent"`
	EstRemainingMs int64     `json:"est_remaining_ms"`
	WaitType       string    `json:"wait_type"`
}

// InflightCurve is the progress curve of one restore seen in flight; it
// stays after the restore ends (Ended) so the restore's page can show it.
type InflightCurve struct {
	Instance  string       `json:"instance"`
	Database  string       `json:"database"`
	SessionID int64        `json:"session_id"`
	Command   string       `json:"command"`
	Statement string       `json:"statement"`
	Start     time.Time    `json:"start"`     // wall clock
	StartUTC  time.Time    `json:"start_utc"` // instant
	UTCOffset int          `json:"utc_offset"`
	LastSeen  time.Time    `json:"last_seen"` // instant of the last sample
	Ended     bool         `json:"ended"`
	Points    []CurvePoint `json:"points"`
}

// PushMark is a collector's push batch as the import that applies it
// records it (Import.MarkPush): the batch's id and its collector run
// records.
type PushMark struct {
	Collector, Batch string
	Runs             []CollectorRun
}
