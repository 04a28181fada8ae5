package alert

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"

	mail "github.com/wneessen/go-mail"
)

// email sends a batch as one plain-text mail over SMTP with go-mail: to an
// anonymous relay (tls = "none", port 25), or with STARTTLS or implicit TLS
// and authentication. The Message-ID is the batch's idempotency key, so a
// resend after a crash is recognisably the same mail.
type email struct {
	cfg ChannelConfig
	tls *tls.Config
}

func (e *email) Name() string { return e.cfg.Name }

func (e *email) Send(ctx context.Context, b *Batch) error {
	m := mail.NewMsg()
	if err := m.From(e.cfg.From); err != nil {
		return fmt.Errorf("from: %w", err)
	}
	if err := m.To(e.cfg.To...); err != nil {
		return fmt.Errorf("to: %w", err)
	}
	m.Subject(b.Subject())
	m.SetMessageIDWithValue(b.Key() + "@restorewatch")
	m.SetDate()
	keys := make([]string, len(b.Alerts))
	for i := range b.Alerts {
		keys[i] = b.Alerts[i].Key
	}
	m.SetGenHeader("X-Restorewatch-Keys", strings.Join(keys, " "))
	m.SetBodyString(mail.TypeTextPlain, b.Text())

	tc := e.tls.Clone()
	tc.ServerName = e.cfg.SMTPHost
	opts := []mail.Option{mail.WithTimeout(e.cfg.Timeout), mail.WithTLSConfig(tc)}
	port := e.cfg.SMTPPort
	switch e.cfg.TLS {
	case "tls":
		opts = append(opts, mail.WithSSL())
		if port == 0 {
			port = 465
		}
	case "starttls":
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
		if port == 0 {
			port = 587
		}
	default: // "none": an anonymous relay, never a password in clear (Validate)
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
		if port == 0 {
			port = 25
		}
	}
	opts = append(opts, mail.WithPort(port))
	if e.cfg.User != "" {
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthAutoDiscover), mail.WithUsername(e.cfg.User), mail.WithPassword(e.cfg.Password))
	}
	c, err := mail.NewClient(e.cfg.SMTPHost, opts...)
	if err != nil {
		return fmt.Errorf("smtp: %s", scrub(err.Error(), e.cfg.Password))
	}
	if err := c.DialAndSendWithContext(ctx, m); err != nil {
		var se *mail.SendError
		if errors.As(err, &se) {
			return fmt.Errorf("smtp %s:%d: %s", e.cfg.SMTPHost, port, scrub(se.Error(), e.cfg.Password))
		}
		return fmt.Errorf("smtp %s:%d: %s", e.cfg.SMTPHost, port, scrub(err.Error(), e.cfg.Password))
	}
	return nil
}
