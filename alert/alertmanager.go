package alert

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// alertmanager posts alerts to Prometheus Alertmanager's API v2
// (POST /api/v2/alerts), which groups, silences and routes them further.
// Each alert carries its key as a label, so a resend is the same alert to
// Alertmanager (it dedupes by label set); a resolved regression is posted
// with the labels of its confirmation and endsAt, which ends that alert.
type alertmanager struct {
	cfg  ChannelConfig
	http *http.Client
}

// amAlert is one alert of Alertmanager's postableAlerts.
type amAlert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       *time.Time        `json:"endsAt,omitempty"`
	GeneratorURL string            `json:"generatorURL,omitempty"`
}

func (m *alertmanager) Name() string { return m.cfg.Name }

func (m *alertmanager) Send(ctx context.Context, b *Batch) error {
	out := make([]amAlert, 0, len(b.Alerts))
	for i := range b.Alerts {
		a := &b.Alerts[i]
		l := map[string]string{"alertname": alertName(a.Kind), "severity": a.Severity, "key": a.Key, "event": a.Kind,
			"source": "restorewatch"}
		if ck := a.Fields["confirmed_key"]; a.Kind == store.AlertRegressionResolved && ck != "" {
			// The labels of the confirmation's alert, which this ends
			// (Alertmanager knows an alert by its label set).
			l["alertname"], l["event"], l["key"] = alertName(store.AlertRegressionConfirmed), store.AlertRegressionConfirmed, ck
			if sev := a.Fields["confirmed_severity"]; sev != "" {
				l["severity"] = sev
			}
		}
		if a.Instance != "" {
			l["instance"] = a.Instance
		}
		if a.Database != "" {
			l["database"] = a.Database
		}
		if a.RestoreKind != "" {
			l["restore_kind"] = a.RestoreKind
		}
		x := amAlert{Labels: l, StartsAt: a.Since.UTC(),
			Annotations: map[string]string{"summary": a.Title, "description": a.Summary, "next_step": a.NextStep, "evidence": b.Link(a)}}
		if u, err := url.Parse(b.Link(a)); err == nil && u.IsAbs() {
			x.GeneratorURL = u.String() // Alertmanager takes only an absolute URI (no base_url: none)
		}
		if a.Kind == store.AlertRegressionResolved || a.Kind == store.AlertWatchClosed || a.Kind == store.AlertTest {
			// An event that ends something is shown resolved at once.
			end := b.Now
			if end.IsZero() {
				end = time.Now()
			}
			end = end.UTC()
			x.EndsAt = &end
		}
		out = append(out, x)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return post(ctx, m.http, strings.TrimRight(m.cfg.URL, "/")+"/api/v2/alerts", "application/json", raw, nil)
}

// alertName is the Alertmanager alertname of an event kind.
func alertName(kind string) string {
	var sb strings.Builder
	sb.WriteString("Restorewatch")
	for _, w := range strings.Split(kind, "_") {
		if w != "" {
			sb.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return sb.String()
}
