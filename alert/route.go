package alert

import (
	"fmt"
	"slices"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// Route sends the events it matches to its channels. Every field left
// empty matches anything; every route that matches an event adds its
// channels (an event matching none goes nowhere but the alerts page).
type Route struct {
	Channels []string
	// Events are event kinds (store.Alert…).
	Events []string
	// Instances are names or patterns ('*', '?'), case ignored.
	Instances []string
	// Tags must all be the instance's (env = "prod").
	Tags map[string]string
	// MinSeverity: "info", "warning" or "critical".
	MinSeverity string
	// Hours is a time of day in the configured zone, "08:00-18:00" (one
	// that ends before it starts spans midnight).
	Hours string
	// Mode is "now", "digest", or "" for the default: at once for the
	// immediate kinds at warning or above, in the digest otherwise.
	Mode string
}

// DefaultImmediate are the kinds that notify at once by default: on an
// estate of 20,000 series, ~55 watches open a day against ~3 confirmed
// regressions, so watches and everything else go to the digest.
var DefaultImmediate = []string{store.AlertRegressionConfirmed, store.AlertRTOBreach, store.AlertKnee}

// Validate checks the route against the configured channels.
func (r *Route) Validate(channels map[string]bool) error {
	if len(r.Channels) == 0 {
		return fmt.Errorf("alerts: a route names no channel")
	}
	for _, c := range r.Channels {
		if !channels[c] {
			return fmt.Errorf("alerts: a route names channel %q, which is not configured", c)
		}
	}
	for _, k := range r.Events {
		if !slices.Contains(store.AlertKinds, k) {
			return fmt.Errorf("alerts: a route names event %q: want one of %v", k, store.AlertKinds)
		}
	}
	if r.MinSeverity != "" && store.SeverityRank(r.MinSeverity) == 0 {
		return fmt.Errorf("alerts: min_severity %q: want info, warning or critical", r.MinSeverity)
	}
	if r.Hours != "" {
		if _, _, err := parseHours(r.Hours); err != nil {
			return err
		}
	}
	switch r.Mode {
	case "", store.ModeNow, store.ModeDigest:
	default:
		return fmt.Errorf("alerts: route mode %q: want now or digest", r.Mode)
	}
	return nil
}

// matches says whether the route takes event a (with its instance's tags)
// at instant now in zone loc.
func (r *Route) matches(a *store.Alert, tags map[string]string, now time.Time, loc *time.Location) bool {
	if len(r.Events) > 0 && !slices.Contains(r.Events, a.Kind) {
		return false
	}
	if len(r.Instances) > 0 && !slices.ContainsFunc(r.Instances, func(p string) bool { return store.MatchName(p, a.Instance) }) {
		return false
	}
	for k, v := range r.Tags {
		if tags[k] != v {
			return false
		}
	}
	if r.MinSeverity != "" && store.SeverityRank(a.Severity) < store.SeverityRank(r.MinSeverity) {
		return false
	}
	if r.Hours != "" {
		from, to, _ := parseHours(r.Hours)
		t := now.In(loc)
		m := t.Hour()*60 + t.Minute()
		if from <= to && (m < from || m >= to) || from > to && m < from && m >= to {
			return false
		}
	}
	return true
}

func parseHours(s string) (from, to int, err error) {
	var a, b time.Time
	var fs, ts string
	if n, _ := fmt.Sscanf(s, "%5s-%5s", &fs, &ts); n == 2 {
		a, err = time.Parse("15:04", fs)
		if err == nil {
			b, err = time.Parse("15:04", ts)
		}
		if err == nil {
			return a.Hour()*60 + a.Minute(), b.Hour()*60 + b.Minute(), nil
		}
	}
	return 0, 0, fmt.Errorf("alerts: hours %q: want HH:MM-HH:MM", s)
}

// deliveries routes one event: the channels it goes to, each at once
// (after the group wait, so one import's alerts go out together) or in the
// channel's next digest.
func (c *Config) deliveries(a *store.Alert, tags map[string]string, now time.Time) []store.AlertDelivery {
	mode := map[string]string{}
	add := func(ch, m string) {
		if m == "" {
			m = store.ModeDigest
			if slices.Contains(c.immediate(), a.Kind) && store.SeverityRank(a.Severity) >= store.SeverityRank(store.SeverityWarning) {
				m = store.ModeNow
			}
		}
		if mode[ch] != store.ModeNow {
			mode[ch] = m
		}
	}
	if len(c.Routes) == 0 {
		for _, ch := range c.Channels {
			add(ch.Name, "")
		}
	}
	for i := range c.Routes {
		r := &c.Routes[i]
		if r.matches(a, tags, now, c.location()) {
			for _, ch := range r.Channels {
				add(ch, r.Mode)
			}
		}
	}
	var out []store.AlertDelivery
	for i := range c.Channels {
		ch := &c.Channels[i]
		m, ok := mode[ch.Name]
		if !ok {
			continue
		}
		// The group wait counts from the event's creation: an import's
		// alerts, queued over its analysis, go out together, and an event
		// routed late (the sender was down) goes at once.
		d := store.AlertDelivery{Channel: ch.Name, Mode: m, State: store.DeliveryPending, NextAt: a.Created.Add(c.GroupWait)}
		if m == store.ModeDigest {
			d.NextAt = nextDigest(ch, now, c.location())
		}
		out = append(out, d)
	}
	return out
}

// nextDigest is the first digest time of the channel after now.
func nextDigest(ch *ChannelConfig, now time.Time, loc *time.Location) time.Time {
	at := ch.DigestAt
	if at == "" {
		at = "07:00"
	}
	hm, _ := time.Parse("15:04", at)
	t := now.In(loc)
	d := time.Date(t.Year(), t.Month(), t.Day(), hm.Hour(), hm.Minute(), 0, 0, loc)
	for !d.After(t) || (ch.Digest == "weekly" && d.Weekday() != ch.DigestDay) {
		d = d.AddDate(0, 0, 1)
	}
	return d
}

func (c *Config) immediate() []string {
	if c.Immediate != nil {
		return c.Immediate
	}
	return DefaultImmediate
}

func (c *Config) location() *time.Location {
	if c.Location != nil {
		return c.Location
	}
	return time.Local
}
