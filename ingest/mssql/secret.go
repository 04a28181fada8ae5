package mssql

import (
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
)

const redacted = "[redacted]"

// secret holds a password or token between reading it and handing it to the
// driver. Every way Go has of printing it prints "[redacted]", so a secret
// that strays into a log call, an error or a JSON document shows nothing.
type secret string

// String implements fmt.Stringer.
func (secret) String() string { return redacted }

// GoString implements fmt.GoStringer (%#v).
func (secret) GoString() string { return redacted }

// Format covers every verb, including %q and %x, which bypass String.
func (secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// MarshalText implements encoding.TextMarshaler (JSON, TOML, slog's JSON).
func (secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// LogValue implements slog.LogValuer.
func (secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// readSecret reads the instance's password or token now, at connect time,
// so that a rotated secret is picked up by the next pass and an unset
// variable fails only this instance.
func readSecret(in *Instance) (secret, error) {
	switch {
	case in.PasswordEnv != "":
		v, ok := os.LookupEnv(in.PasswordEnv)
		if !ok || v == "" {
			return "", fmt.Errorf("password_env %s is not set", in.PasswordEnv)
		}
		return secret(v), nil
	case in.PasswordFile != "":
		b, err := os.ReadFile(in.PasswordFile)
		if err != nil {
			// The path is configuration, not a secret; the error text of
			// os.ReadFile holds only the path and the reason.
			return "", fmt.Errorf("password_file: %w", err)
		}
		v := strings.TrimRight(string(b), "\r\n")
		if v == "" {
			return "", fmt.Errorf("password_file %s is empty", in.PasswordFile)
		}
		return secret(v), nil
	}
	return "", nil
}

// scrub removes every spelling of s that a driver or URL error could hold
// (raw, URL-escaped in a path or a query) from text.
func scrub(text string, s secret) string {
	raw := string(s)
	if raw == "" {
		return text
	}
	for _, form := range []string{raw, url.PathEscape(raw), url.QueryEscape(raw), url.UserPassword("u", raw).String()[2:]} {
		if form != "" {
			text = strings.ReplaceAll(text, form, redacted)
		}
	}
	return text
}
