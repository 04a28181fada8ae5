package store

import (
	"strings"
	"time"
)

// AlertEvent is one thing worth telling someone (SPEC §6.5): written to
// the warehouse's outbox in the same transaction as the finding it is
// about, then routed and delivered by the sender. Key is stable: deriving
// the same finding again yields the same key, and the outbox keeps one
// event per key, so a re-analysis or a restart never makes a second alert.
type AlertEvent struct {
	Key         string `json:"key"`
	Kind        string `json:"kind"`     // one of the Alert… constants
	Severity    string `json:"severity"` // critical, warning or info
	Instance    string `json:"instance,omitempty"`
	Database    string `json:"database,omitempty"`
	RestoreKind string `json:"restore_kind,omitempty"` // full, diff, log…
	// Title says what and where in one line; Summary how much and since
	// when; NextStep what to do; Link the evidence page (a path such as
	// /regressions/7, made absolute with the sender's base URL).
	Title    string            `json:"title"`
	Summary  string            `json:"summary"`
	NextStep string            `json:"next_step"`
	Link     string            `json:"link,omitempty"`
	Since    time.Time         `json:"since"`
	Ratio    float64           `json:"ratio,omitempty"`
	Fields   map[string]string `json:"fields,omitempty"`
}

// Alert event kinds.
const (
	AlertWatchOpened         = "watch_opened"
	AlertWatchClosed         = "watch_closed"
	AlertRegressionConfirmed = "regression_confirmed"
	AlertRegressionResolved  = "regression_resolved"
	AlertRTOBreach           = "rto_breach"
	AlertKnee                = "inflight_knee"
	AlertSilent              = "silent"
	AlertCollectorFailing    = "collector_failing"
	// AlertTest is what `restorewatch alerts test` sends; never stored.
	AlertTest = "test"
)

// AlertKinds lists the event kinds, in the order pages and help show them.
var AlertKinds = []string{AlertRegressionConfirmed, AlertRTOBreach, AlertKnee, AlertCollectorFailing, AlertSilent,
	AlertWatchOpened, AlertWatchClosed, AlertRegressionResolved}

// AlertKindLabel words an event kind for pages and messages.
func AlertKindLabel(kind string) string {
	switch kind {
	case AlertWatchOpened:
		return "series watched"
	case AlertWatchClosed:
		return "watch closed"
	case AlertRegressionConfirmed:
		return "regression confirmed"
	case AlertRegressionResolved:
		return "regression resolved"
	case AlertRTOBreach:
		return "RTO breach"
	case AlertKnee:
		return "restore slowing in flight"
	case AlertSilent:
		return "silent source"
	case AlertCollectorFailing:
		return "collector failing"
	case AlertTest:
		return "test message"
	}
	return kind
}

// Alert severities, most severe first.
const (
	SeverityCritical = "critical"
	SeverityWarning  = "warning"
	SeverityInfo     = "info"
)

// SeverityRank orders severities: critical 3, warning 2, info 1, else 0.
func SeverityRank(s string) int {
	switch s {
	case SeverityCritical:
		return 3
	case SeverityWarning:
		return 2
	case SeverityInfo:
		return 1
	}
	return 0
}

// Validate reports whether the event can be queued.
func (e *AlertEvent) Validate() error {
	switch {
	case strings.TrimSpace(e.Key) == "":
		return Errorf(EINVALID, "alert: key is empty")
	case strings.TrimSpace(e.Kind) == "":
		return Errorf(EINVALID, "alert %s: kind is empty", e.Key)
	case SeverityRank(e.Severity) == 0:
		return Errorf(EINVALID, "alert %s: severity %q is not critical, warning or info", e.Key, e.Severity)
	case strings.TrimSpace(e.Title) == "":
		return Errorf(EINVALID, "alert %s: title is empty", e.Key)
	}
	return nil
}

// Delivery states of one alert on one channel.
const (
	DeliveryPending  = "pending"  // waiting for its first attempt (or its digest)
	DeliveryRetrying = "retrying" // an attempt failed; LastError says why
	DeliverySent     = "sent"     // the receiver acknowledged it
	DeliverySilenced = "silenced" // a silence or an acknowledgement held it back
)

// Delivery modes: at once, or in the channel's next digest.
const (
	ModeNow    = "now"
	ModeDigest = "digest"
)

// AlertDelivery is one alert's delivery to one channel.
type AlertDelivery struct {
	Channel   string     `json:"channel"`
	Mode      string     `json:"mode"`
	State     string     `json:"state"`
	Attempts  int        `json:"attempts"`
	NextAt    time.Time  `json:"next_at"`
	LastError string     `json:"last_error,omitempty"`
	SentAt    *time.Time `json:"sent_at,omitempty"`
	Note      string     `json:"note,omitempty"`
}

// DeliveryResult is the outcome of one attempt to deliver an alert to a
// channel: sent, silenced (Note says by what), or to retry at NextAt
// after Error.
type DeliveryResult struct {
	AlertID int64
	State   string // DeliverySent, DeliverySilenced or DeliveryRetrying
	NextAt  time.Time
	Error   string
	Note    string
}

// Alert is an event as the outbox holds it, with its deliveries.
type Alert struct {
	ID int64 `json:"id"`
	AlertEvent
	Created    time.Time       `json:"created"`
	Routed     bool            `json:"routed"`
	AckedBy    string          `json:"acked_by,omitempty"`
	AckNote    string          `json:"ack_note,omitempty"`
	AckedAt    *time.Time      `json:"acked_at,omitempty"`
	Deliveries []AlertDelivery `json:"deliveries"`
}

// AlertFilter selects alerts for the page and the CLI.
type AlertFilter struct {
	Kind     string
	Instance string
	State    string // a delivery state: alerts with a delivery in it
	Limit    int    // 0: 200
}

// AlertSilence holds back the alerts it matches until Until: Instance is
// a name or pattern ('*', '?'), Kind an event kind, Key one alert's key;
// an empty field matches anything. Who set it and why are kept.
type AlertSilence struct {
	ID       int64     `json:"id"`
	Instance string    `json:"instance,omitempty"`
	Kind     string    `json:"kind,omitempty"`
	Key      string    `json:"key,omitempty"`
	By       string    `json:"by"`
	Why      string    `json:"why"`
	Until    time.Time `json:"until"`
	Created  time.Time `json:"created"`
}

// Validate reports whether the silence can be kept.
func (s *AlertSilence) Validate() error {
	switch {
	case strings.TrimSpace(s.By) == "":
		return Errorf(EINVALID, "silence: say who sets it")
	case strings.TrimSpace(s.Why) == "":
		return Errorf(EINVALID, "silence: say why")
	case s.Until.IsZero():
		return Errorf(EINVALID, "silence: say until when")
	case s.Instance == "" && s.Kind == "" && s.Key == "":
		return Errorf(EINVALID, "silence: name an instance (or pattern), a kind or an alert's key; a silence of everything is not kept")
	}
	return nil
}

// Matches says whether the silence holds back e at instant at.
func (s *AlertSilence) Matches(e *AlertEvent, at time.Time) bool {
	if !at.Before(s.Until) {
		return false
	}
	if s.Key != "" && s.Key != e.Key {
		return false
	}
	if s.Kind != "" && s.Kind != e.Kind {
		return false
	}
	if s.Instance != "" && !MatchName(s.Instance, e.Instance) {
		return false
	}
	return true
}

// MatchName matches an instance name against a name or a pattern ('*' any
// run of characters, '?' one), case ignored. Nothing else is special: a
// named instance's backslash (SQL01\REPORTING) is a plain character, which
// path.Match would take for an escape.
func MatchName(pattern, name string) bool {
	p, n := []rune(strings.ToLower(pattern)), []rune(strings.ToLower(name))
	// The classic two-pointer glob: remember the last star and retry from
	// one character further on a mismatch.
	pi, ni, star, mark := 0, 0, -1, 0
	for ni < len(n) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == n[ni]):
			pi++
			ni++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ni
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			ni = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
