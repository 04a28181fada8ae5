package alert

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Channel delivers batches to one receiver. Send returns nil only once the
// receiver acknowledged the whole batch (a 2xx answer, SMTP's 250 after
// DATA): the sender marks nothing sent before that.
type Channel interface {
	Name() string
	Send(ctx context.Context, b *Batch) error
}

// Channel types.
const (
	TypeWebhook      = "webhook"
	TypeSlack        = "slack"
	TypeTeams        = "teams"
	TypeEmail        = "email"
	TypeAlertmanager = "alertmanager"
)

// ChannelConfig is one configured channel, its secrets already read from
// their files or environment variables (never from the TOML itself).
type ChannelConfig struct {
	Name string
	Type string
	// URL is the webhook's, Slack's or Teams' incoming-webhook address, or
	// Alertmanager's base address (http://am:9093). A secret for the
	// webhooks: never logged or shown.
	URL string
	// Secret signs the generic webhook's body (HMAC-SHA256).
	Secret string
	// E-mail.
	SMTPHost string
	SMTPPort int
	TLS      string // "none" (a relay on port 25), "starttls" or "tls" (implicit)
	User     string
	Password string
	From     string
	To       []string
	// CAFile is a PEM file of the CA the receiver's certificate chains to
	// (a private CA), for HTTPS and SMTP alike; empty: the system's.
	CAFile string
	// Digest is the channel's digest: "daily" (the default) or "weekly",
	// sent at DigestAt ("07:00", the configured time zone) and, weekly, on
	// DigestDay.
	Digest    string
	DigestAt  string
	DigestDay time.Weekday
	// Timeout bounds one delivery (10 s when zero).
	Timeout time.Duration
}

// Validate reports what is missing from the channel's configuration.
func (c *ChannelConfig) Validate() error {
	if c.Name == "" {
		return errors.New("alerts: a channel has no name")
	}
	switch c.Type {
	case TypeWebhook, TypeSlack, TypeTeams, TypeAlertmanager:
		if c.URL == "" {
			return fmt.Errorf("alerts: channel %s: no url (url_env or url_file)", c.Name)
		}
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("alerts: channel %s: the url is not an http(s) address", c.Name) // never the URL: it is a secret
		}
	case TypeEmail:
		if c.SMTPHost == "" || c.From == "" || len(c.To) == 0 {
			return fmt.Errorf("alerts: channel %s: e-mail needs smtp_host, from and to", c.Name)
		}
		switch c.TLS {
		case "", "none", "starttls", "tls":
		default:
			return fmt.Errorf("alerts: channel %s: tls %q: want none, starttls or tls", c.Name, c.TLS)
		}
		if c.User != "" && c.TLS == "none" {
			return fmt.Errorf("alerts: channel %s: a password is never sent in clear: use tls = \"starttls\" or \"tls\" with user", c.Name)
		}
	default:
		return fmt.Errorf("alerts: channel %s: type %q: want webhook, slack, teams, email or alertmanager", c.Name, c.Type)
	}
	switch c.Digest {
	case "", "daily", "weekly":
	default:
		return fmt.Errorf("alerts: channel %s: digest %q: want daily or weekly", c.Name, c.Digest)
	}
	if c.DigestAt != "" {
		if _, err := time.Parse("15:04", c.DigestAt); err != nil {
			return fmt.Errorf("alerts: channel %s: digest_at %q: want HH:MM", c.Name, c.DigestAt)
		}
	}
	return nil
}

// NewChannel makes the channel c describes.
func NewChannel(c ChannelConfig) (Channel, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	tc, err := tlsConfig(c.CAFile)
	if err != nil {
		return nil, fmt.Errorf("alerts: channel %s: %w", c.Name, err)
	}
	hc := &http.Client{Timeout: c.Timeout, Transport: &http.Transport{TLSClientConfig: tc, Proxy: http.ProxyFromEnvironment}}
	switch c.Type {
	case TypeWebhook:
		return &webhook{cfg: c, http: hc}, nil
	case TypeSlack:
		return &slack{cfg: c, http: hc}, nil
	case TypeTeams:
		return &teams{cfg: c, http: hc}, nil
	case TypeAlertmanager:
		return &alertmanager{cfg: c, http: hc}, nil
	case TypeEmail:
		return &email{cfg: c, tls: tc}, nil
	}
	return nil, fmt.Errorf("alerts: channel %s: unknown type", c.Name)
}

func tlsConfig(caFile string) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile == "" {
		return tc, nil
	}
	b, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("ca_file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("ca_file %s holds no PEM certificate", caFile)
	}
	tc.RootCAs = pool
	return tc, nil
}

// post sends body to address and succeeds on a 2xx answer. Its errors never
// carry the address (a webhook's URL is its credential) nor the answer's
// body beyond a short excerpt.
func post(ctx context.Context, hc *http.Client, address, contentType string, body []byte, header http.Header) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, address, bytes.NewReader(body))
	if err != nil {
		return errors.New("cannot build the request")
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", "restorewatch-alerts")
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL stays out of the message
		}
		return fmt.Errorf("post: %s", scrub(err.Error(), address))
	}
	defer resp.Body.Close()
	excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("receiver answered %s: %s", resp.Status, scrub(strings.TrimSpace(string(excerpt)), address))
	}
	return nil
}

// scrub removes secrets from a text that goes to logs and pages.
func scrub(s string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[secret]")
		}
	}
	return s
}
