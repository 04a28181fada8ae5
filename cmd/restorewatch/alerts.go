package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/restorewatch/restorewatch/alert"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/plan"
)

// AlertsCmd delivers, tests, lists, acknowledges and silences alerts.
type AlertsCmd struct {
	Send      AlertsSendCmd      `cmd:"" help:"Route the new alerts and deliver what is due, once (serve and collect do it every interval)."`
	Test      AlertsTestCmd      `cmd:"" help:"Send one test message to every configured channel."`
	List      AlertsListCmd      `cmd:"" help:"List alerts with each channel's delivery state."`
	Ack       AlertsAckCmd       `cmd:"" help:"Acknowledge an alert: who and why are kept; what is not yet sent is held back."`
	Silence   AlertsSilenceCmd   `cmd:"" help:"Hold back alerts of an instance (or pattern), a kind or a key until a time."`
	Silences  AlertsSilencesCmd  `cmd:"" help:"List silences in force."`
	Unsilence AlertsUnsilenceCmd `cmd:"" help:"End a silence now."`
}

// newSender builds the sender of the configuration at path over db, with
// the conditions evaluated by the same analysis options as the pages'.
func newSender(m *Main, db store.Warehouse, path string, opt analysis.Options) (*alert.Sender, alertSettings, error) {
	s, err := loadAlertConfig(path, m.Stderr)
	if err != nil {
		return nil, s, store.Errorf(store.EINVALID, "%v", err)
	}
	snd, err := alert.NewSender(s.cfg, db, m.Logger)
	if err != nil {
		return nil, s, store.Errorf(store.EINVALID, "config %s: %v", path, err)
	}
	cond := &alert.Conditions{DB: db, Analysis: opt, DefaultRTO: plan.DefaultRTO, CollectorInterval: s.collectorInterval,
		SilentPasses: s.cfg.SilentPasses, FailingPasses: s.cfg.FailingPasses}
	snd.Evaluate = cond.Evaluate
	return snd, s, nil
}

// startAlerts runs the sender in the background, when the configuration
// at path has channels, until ctx ends or the returned function, which
// waits for it, is called.
func startAlerts(ctx context.Context, m *Main, db store.Warehouse, path string, opt analysis.Options) (stop func(), err error) {
	snd, s, err := newSender(m, db, path, opt)
	if err != nil {
		return nil, err
	}
	if !s.configured {
		return func() {}, nil
	}
	m.Logger.Info("alerts: sending", "channels", strings.Join(snd.Channels(), ","))
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); snd.Run(ctx) }()
	return func() { cancel(); <-done }, nil
}

// sendOnce evaluates the conditions and runs one pass of the sender of
// the configuration at path, when it has channels (collect --once).
func sendOnce(ctx context.Context, m *Main, db store.Warehouse, path string, opt analysis.Options) error {
	snd, s, err := newSender(m, db, path, opt)
	if err != nil || !s.configured {
		return err
	}
	if err := snd.Evaluate(ctx); err != nil {
		m.Logger.Error("alert conditions", "error", err.Error())
	}
	_, err = snd.Pass(ctx)
	return err
}

// AlertsSendCmd runs one pass of the sender.
type AlertsSendCmd struct {
	Config        string `required:"" help:"Configuration (TOML) with an [alerts] table." type:"existingfile"`
	AnalysisFlags `embed:""`
}

// Run implements the command.
func (c *AlertsSendCmd) Run(ctx context.Context, m *Main) error {
	opt, err := c.options()
	if err != nil {
		return err
	}
	db, err := m.openExisting(ctx)
	if err != nil {
		return err
	}
	snd, s, err := newSender(m, db, c.Config, opt)
	if err != nil {
		return err
	}
	if !s.configured {
		return store.Errorf(store.EINVALID, "%s has no [[alerts.channel]]: nothing to send to", c.Config)
	}
	if err := snd.Evaluate(ctx); err != nil {
		return err
	}
	st, err := snd.Pass(ctx)
	fmt.Fprintf(m.Stderr, "alerts: %d routed, %d delivered in %d messages, %d to retry, %d held back by silences or acknowledgements\n",
		st.Routed, st.Sent, st.Messages, st.Failed, st.Silenced)
	return err
}

// AlertsTestCmd sends a test message to every channel.
type AlertsTestCmd struct {
	Config string `required:"" help:"Configuration (TOML) with an [alerts] table." type:"existingfile"`
}

// Run implements the command.
func (c *AlertsTestCmd) Run(ctx context.Context, m *Main) error {
	s, err := loadAlertConfig(c.Config, m.Stderr)
	if err != nil {
		return store.Errorf(store.EINVALID, "%v", err)
	}
	if !s.configured {
		return store.Errorf(store.EINVALID, "%s has no [[alerts.channel]]: nothing to test", c.Config)
	}
	snd, err := alert.NewSender(s.cfg, nil, m.Logger)
	if err != nil {
		return store.Errorf(store.EINVALID, "%v", err)
	}
	res := snd.Test(ctx)
	failed := 0
	for _, name := range snd.Channels() {
		if err := res[name]; err != nil {
			failed++
			fmt.Fprintf(m.Stdout, "%s: FAILED: %v\n", name, err)
		} else {
			fmt.Fprintf(m.Stdout, "%s: delivered\n", name)
		}
	}
	if failed > 0 {
		return store.Errorf(store.EUNAVAILABLE, "%d of %d channels did not take the test message", failed, len(res))
	}
	return nil
}

// AlertsListCmd lists alerts.
type AlertsListCmd struct {
	Kind     string `help:"Only this kind (regression_confirmed, rto_breach, inflight_knee, silent, collector_failing, watch_opened, …)."`
	Instance string `help:"Only this instance."`
	State    string `help:"Only alerts with a delivery in this state: pending, retrying, sent, silenced." enum:",pending,retrying,sent,silenced" default:""`
	Limit    int    `help:"How many, newest first." default:"50"`
	Format   string `help:"table or json." enum:"table,json" default:"table"`
}

// Run implements the command.
func (c *AlertsListCmd) Run(ctx context.Context, m *Main) error {
	db, err := m.openExisting(ctx)
	if err != nil {
		return err
	}
	as, err := db.Alerts(ctx, store.AlertFilter{Kind: c.Kind, Instance: c.Instance, State: c.State, Limit: c.Limit})
	if err != nil {
		return err
	}
	if c.Format == "json" {
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		if as == nil {
			as = []store.Alert{}
		}
		return enc.Encode(as)
	}
	if len(as) == 0 {
		fmt.Fprintln(m.Stderr, "no alerts")
		return nil
	}
	tw := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCREATED\tSEVERITY\tKIND\tTITLE\tDELIVERY")
	for _, a := range as {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Created.Format("2006-01-02 15:04"), a.Severity, a.Kind,
			printable(a.Title), deliveryWords(&a))
	}
	return tw.Flush()
}

// deliveryWords sums up an alert's deliveries: "mail sent, hook retrying (503 …)".
func deliveryWords(a *store.Alert) string {
	if a.AckedBy != "" && len(a.Deliveries) == 0 {
		return "acknowledged by " + a.AckedBy
	}
	if len(a.Deliveries) == 0 {
		if !a.Routed {
			return "waiting for the sender"
		}
		return "no route"
	}
	var parts []string
	for _, d := range a.Deliveries {
		w := d.Channel + " " + d.State
		switch {
		case d.State == store.DeliveryRetrying:
			w += " (" + d.LastError + ")"
		case d.State == store.DeliveryPending && d.Mode == store.ModeDigest:
			w += " for the digest of " + d.NextAt.Format("2006-01-02 15:04")
		case d.State == store.DeliverySilenced:
			w += " (" + d.Note + ")"
		}
		parts = append(parts, w)
	}
	return strings.Join(parts, "; ")
}

// AlertsAckCmd acknowledges an alert.
type AlertsAckCmd struct {
	Alert string `arg:"" help:"The alert's id or key."`
	By    string `help:"Who acknowledges (default: $USER)."`
	Why   string `required:"" help:"Why."`
}

// Run implements the command.
func (c *AlertsAckCmd) Run(ctx context.Context, m *Main) error {
	db, err := m.openExisting(ctx)
	if err != nil {
		return err
	}
	a, err := db.AckAlert(ctx, c.Alert, who(c.By), c.Why)
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stderr, "acknowledged alert %d (%s) as %s: %s\n", a.ID, printable(a.Title), a.AckedBy, c.Why)
	return nil
}

func who(by string) string {
	if by != "" {
		return by
	}
	return os.Getenv("USER")
}

// AlertsSilenceCmd adds a silence.
type AlertsSilenceCmd struct {
	Instance string        `help:"An instance name or pattern ('*' any run of characters, '?' one)."`
	Kind     string        `help:"An event kind."`
	Key      string        `help:"One alert's key."`
	By       string        `help:"Who silences (default: $USER)."`
	Why      string        `required:"" help:"Why."`
	Until    string        `help:"Until when (2026-12-03, 2026-12-03 08:00 in UTC, or RFC 3339)."`
	For      time.Duration `name:"for" help:"For how long (4h, 90m)."`
}

// Run implements the command.
func (c *AlertsSilenceCmd) Run(ctx context.Context, m *Main) error {
	if c.Kind != "" && !slices.Contains(store.AlertKinds, c.Kind) {
		return usageError{fmt.Errorf("--kind %q: want one of %s", c.Kind, strings.Join(store.AlertKinds, ", "))}
	}
	var until time.Time
	switch {
	case (c.Until == "") == (c.For == 0):
		return usageError{fmt.Errorf("give --until TIME or --for DURATION")}
	case c.For > 0:
		until = time.Now().Add(c.For)
	default:
		var err error
		if until, err = store.ParseTime("--until", c.Until); err != nil {
			return usageError{err}
		}
	}
	db, err := m.openDB(ctx)
	if err != nil {
		return err
	}
	id, err := db.AddSilence(ctx, store.AlertSilence{Instance: c.Instance, Kind: c.Kind, Key: c.Key, By: who(c.By), Why: c.Why, Until: until})
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stderr, "silence %d until %s\n", id, until.UTC().Format("2006-01-02 15:04 UTC"))
	return nil
}

// AlertsSilencesCmd lists silences in force.
type AlertsSilencesCmd struct{}

// Run implements the command.
func (c *AlertsSilencesCmd) Run(ctx context.Context, m *Main) error {
	db, err := m.openExisting(ctx)
	if err != nil {
		return err
	}
	ss, err := db.Silences(ctx, time.Now())
	if err != nil {
		return err
	}
	if len(ss) == 0 {
		fmt.Fprintln(m.Stderr, "no silences in force")
		return nil
	}
	tw := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUNTIL\tINSTANCE\tKIND\tKEY\tBY\tWHY")
	for _, s := range ss {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Until.Format("2006-01-02 15:04 UTC"), orAny(s.Instance), orAny(s.Kind),
			orAny(s.Key), printable(s.By), printable(s.Why))
	}
	return tw.Flush()
}

func orAny(s string) string {
	if s == "" {
		return "*"
	}
	return printable(s)
}

// AlertsUnsilenceCmd ends a silence.
type AlertsUnsilenceCmd struct {
	ID int64 `arg:"" help:"The silence's id (alerts silences lists them)."`
}

// Run implements the command.
func (c *AlertsUnsilenceCmd) Run(ctx context.Context, m *Main) error {
	db, err := m.openExisting(ctx)
	if err != nil {
		return err
	}
	if err := db.EndSilence(ctx, c.ID); err != nil {
		return err
	}
	fmt.Fprintf(m.Stderr, "silence %d ended\n", c.ID)
	return nil
}
