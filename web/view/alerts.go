package view

// Alerts is the alerts page: each alert with its deliveries' states, the
// silences in force, and the forms to acknowledge and silence.
type Alerts struct {
	Summary  string // "12 alerts: 9 sent, 2 retrying, 1 silenced"
	Rows     []AlertRow
	Silences []SilenceRow
	Kinds    []KindOption // for the filter's and the silence form's choice
	Kind     string       // the filter
	State    string
	Empty    bool
}

// AlertRow is one alert.
type AlertRow struct {
	ID       int64
	Key      string
	Created  string
	Severity string // critical, warning, info
	Kind     string // in words
	Title    string
	Summary  string
	NextStep string
	URL      string // the evidence page
	Since    string
	Acked    string // "acknowledged by ana: why" or ""
	// Deliveries are the channels' states: sent, retrying with the
	// error, silenced with by whom, waiting for the digest.
	Deliveries []DeliveryCell
	AckAction  string
}

// DeliveryCell is one channel's delivery of an alert.
type DeliveryCell struct {
	Channel string
	State   string // pending, retrying, sent, silenced
	Detail  string
}

// SilenceRow is one silence in force.
type SilenceRow struct {
	ID        int64
	Matches   string // "instance SQL-B-*, kind rto_breach"
	By, Why   string
	Until     string
	EndAction string
}

// KindOption is an event kind and its words.
type KindOption struct{ Value, Label string }
