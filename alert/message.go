// Package alert delivers the warehouse's alert outbox (store.AlertEvent) to
// the configured channels — a signed JSON webhook, Slack and Microsoft Teams
// incoming webhooks, e-mail over SMTP and Prometheus Alertmanager — under
// the configured routes, at least once per channel and key, and evaluates
// the conditions no analysis saves (an RTO breach, a knee in flight, a
// silent instance or zone, a failing collector) into that outbox.
package alert

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// Batch is what one message to one channel carries: one alert, a group of
// them (an import that confirmed many regressions is one message, not
// many), or a digest.
type Batch struct {
	Alerts []store.Alert
	// Digest is set for a digest: the period it covers.
	Digest bool
	// BaseURL makes the alerts' links absolute.
	BaseURL string
	Now     time.Time
}

// Key is the batch's idempotency key: the same alerts give the same key
// whatever their order, so a receiver that saw a batch can drop its resend.
func (b *Batch) Key() string {
	keys := make([]string, len(b.Alerts))
	for i := range b.Alerts {
		keys[i] = b.Alerts[i].Key
	}
	slices.Sort(keys)
	h := sha256.Sum256([]byte(strings.Join(keys, "\n")))
	return hex.EncodeToString(h[:16])
}

// Link returns the absolute address of an alert's evidence page ("" when
// neither the alert nor the base URL gives one).
func (b *Batch) Link(a *store.Alert) string {
	if a.Link == "" {
		return strings.TrimRight(b.BaseURL, "/") + "/alerts"
	}
	if u, err := url.Parse(a.Link); err == nil && u.IsAbs() {
		return a.Link
	}
	if b.BaseURL == "" {
		return a.Link
	}
	return strings.TrimRight(b.BaseURL, "/") + a.Link
}

// Subject is the batch's one-line heading.
func (b *Batch) Subject() string {
	switch {
	case b.Digest:
		return fmt.Sprintf("restorewatch digest: %s", countByKind(b.Alerts))
	case len(b.Alerts) == 1:
		a := &b.Alerts[0]
		return fmt.Sprintf("[%s] %s", a.Severity, a.Title)
	}
	return fmt.Sprintf("[%s] restorewatch: %s", worst(b.Alerts), countByKind(b.Alerts))
}

// maxListed is how many alerts a chat message or e-mail lists in full; the
// rest are counted and linked.
const maxListed = 20

// Text is the batch as plain text: each alert's what, where, how much,
// since when, next step and evidence link.
func (b *Batch) Text() string {
	var sb strings.Builder
	if b.Digest || len(b.Alerts) > 1 {
		fmt.Fprintf(&sb, "%s\n\n", b.Subject())
	}
	for i := range b.Alerts {
		if i == maxListed {
			fmt.Fprintf(&sb, "… and %d more: %s\n", len(b.Alerts)-maxListed, strings.TrimRight(b.BaseURL, "/")+"/alerts")
			break
		}
		a := &b.Alerts[i]
		fmt.Fprintf(&sb, "%s\n%s\n", a.Title, a.Summary)
		fmt.Fprintf(&sb, "Since: %s\n", a.Since.UTC().Format("2006-01-02 15:04 UTC"))
		if a.NextStep != "" {
			fmt.Fprintf(&sb, "Next step: %s\n", a.NextStep)
		}
		fmt.Fprintf(&sb, "Evidence: %s\n", b.Link(a))
		fmt.Fprintf(&sb, "Key: %s\n\n", a.Key)
	}
	return strings.TrimRight(sb.String(), "\n") + "\n"
}

// kindNames words the event kinds in counts.
var kindNames = map[string][2]string{
	store.AlertRegressionConfirmed: {"regression confirmed", "regressions confirmed"},
	store.AlertRegressionResolved:  {"regression resolved", "regressions resolved"},
	store.AlertWatchOpened:         {"series watched", "series watched"},
	store.AlertWatchClosed:         {"watch closed", "watches closed"},
	store.AlertRTOBreach:           {"RTO breach", "RTO breaches"},
	store.AlertKnee:                {"restore slowing in flight", "restores slowing in flight"},
	store.AlertSilent:              {"silent source", "silent sources"},
	store.AlertCollectorFailing:    {"collector failing", "collectors failing"},
	store.AlertTest:                {"test message", "test messages"},
}

func countByKind(as []store.Alert) string {
	n := map[string]int{}
	for i := range as {
		n[as[i].Kind]++
	}
	var parts []string
	for _, k := range append(slices.Clone(store.AlertKinds), store.AlertTest) {
		if c := n[k]; c > 0 {
			w := kindNames[k]
			name := w[0]
			if c > 1 {
				name = w[1]
			}
			parts = append(parts, fmt.Sprintf("%d %s", c, name))
			delete(n, k)
		}
	}
	for k, c := range n {
		parts = append(parts, fmt.Sprintf("%d %s", c, k))
	}
	if len(parts) == 0 {
		return "nothing new"
	}
	return strings.Join(parts, ", ")
}

func worst(as []store.Alert) string {
	w := store.SeverityInfo
	for i := range as {
		if store.SeverityRank(as[i].Severity) > store.SeverityRank(w) {
			w = as[i].Severity
		}
	}
	return w
}

// TestAlert is the message `restorewatch alerts test` sends to a channel.
func TestAlert(channel string, now time.Time) store.Alert {
	return store.Alert{AlertEvent: store.AlertEvent{
		Key: fmt.Sprintf("test/%s/%d", channel, now.UnixMilli()), Kind: store.AlertTest, Severity: store.SeverityInfo,
		Title:    "restorewatch test message to " + channel,
		Summary:  "If you read this, channel " + channel + " delivers restorewatch's alerts.",
		NextStep: "Nothing to do.", Link: "/alerts", Since: now,
	}, Created: now}
}
