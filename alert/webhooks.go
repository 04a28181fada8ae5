package alert

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// webhook posts a batch as JSON, its body signed with HMAC-SHA256 under
// the channel's secret (X-Restorewatch-Signature: sha256=HEX) and carrying
// an idempotency key (the Idempotency-Key header and each alert's key) by
// which the receiver drops a resend.
type webhook struct {
	cfg  ChannelConfig
	http *http.Client
}

// WebhookBody is the generic webhook's JSON.
type WebhookBody struct {
	IdempotencyKey string         `json:"idempotency_key"`
	Digest         bool           `json:"digest"`
	Subject        string         `json:"subject"`
	Alerts         []WebhookAlert `json:"alerts"`
}

// WebhookAlert is one alert of a WebhookBody.
type WebhookAlert struct {
	store.AlertEvent
	ID   int64  `json:"id,omitempty"`
	URL  string `json:"url"`
	Text string `json:"text"`
}

// SignatureHeader carries the HMAC of the generic webhook's body.
const SignatureHeader = "X-Restorewatch-Signature"

// Sign returns the signature header's value for body under secret.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func (w *webhook) Name() string { return w.cfg.Name }

func (w *webhook) Send(ctx context.Context, b *Batch) error {
	body := WebhookBody{IdempotencyKey: b.Key(), Digest: b.Digest, Subject: b.Subject()}
	for i := range b.Alerts {
		a := &b.Alerts[i]
		one := Batch{Alerts: []store.Alert{*a}, BaseURL: b.BaseURL}
		body.Alerts = append(body.Alerts, WebhookAlert{AlertEvent: a.AlertEvent, ID: a.ID, URL: b.Link(a), Text: one.Text()})
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	h := http.Header{}
	h.Set("Idempotency-Key", body.IdempotencyKey)
	h.Set("X-Restorewatch-Timestamp", time.Now().UTC().Format(time.RFC3339))
	if w.cfg.Secret != "" {
		h.Set(SignatureHeader, Sign(w.cfg.Secret, raw))
	}
	return post(ctx, w.http, w.cfg.URL, "application/json", raw, h)
}

// slack posts to a Slack incoming webhook: the text with the subject in
// bold (Slack's mrkdwn).
type slack struct {
	cfg  ChannelConfig
	http *http.Client
}

func (s *slack) Name() string { return s.cfg.Name }

func (s *slack) Send(ctx context.Context, b *Batch) error {
	text := b.Text()
	if len(b.Alerts) == 1 && !b.Digest {
		text = "*" + slackEscape(b.Subject()) + "*\n" + slackEscape(text)
	} else {
		text = slackEscape(text)
	}
	raw, err := json.Marshal(map[string]any{"text": text, "unfurl_links": false})
	if err != nil {
		return err
	}
	return post(ctx, s.http, s.cfg.URL, "application/json", raw, nil)
}

// slackEscape escapes the three characters Slack's mrkdwn reserves, so a
// database named <!channel> does not ping anyone.
func slackEscape(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '&':
			out = append(out, "&amp;"...)
		case '<':
			out = append(out, "&lt;"...)
		case '>':
			out = append(out, "&gt;"...)
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}

// teams posts an Adaptive Card, which both Teams' Workflows webhooks and the
// older Office 365 connectors accept.
type teams struct {
	cfg  ChannelConfig
	http *http.Client
}

func (t *teams) Name() string { return t.cfg.Name }

func (t *teams) Send(ctx context.Context, b *Batch) error {
	body := []map[string]any{{"type": "TextBlock", "text": b.Subject(), "weight": "Bolder", "size": "Medium", "wrap": true}}
	for i := range b.Alerts {
		if i == maxListed {
			body = append(body, map[string]any{"type": "TextBlock", "wrap": true,
				"text": "… and more on the alerts page"})
			break
		}
		a := &b.Alerts[i]
		body = append(body, map[string]any{"type": "TextBlock", "wrap": true, "separator": true,
			"text": a.Title + "\n\n" + a.Summary + "\n\nSince " + a.Since.UTC().Format("2006-01-02 15:04 UTC") +
				"\n\nNext step: " + a.NextStep + "\n\n[Evidence](" + b.Link(a) + ")"})
	}
	card := map[string]any{"type": "message", "attachments": []map[string]any{{
		"contentType": "application/vnd.microsoft.card.adaptive",
		"content": map[string]any{"$schema": "http://adaptivecards.io/schemas/adaptive-card.json", "type": "AdaptiveCard",
			"version": "1.4", "body": body},
	}}}
	raw, err := json.Marshal(card)
	if err != nil {
		return err
	}
	return post(ctx, t.http, t.cfg.URL, "application/json", raw, nil)
}
