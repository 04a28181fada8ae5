package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/restorewatch/restorewatch/alert"
)

// The [alerts] part of the TOML file (README "Alerts"): channels, routes
// and the sender's settings. Secrets — webhook URLs, the HMAC key, the
// SMTP password — come from a file or an environment variable, never from
// the TOML itself.

type alertsFile struct {
	BaseURL       string        `toml:"base_url"`
	Interval      time.Duration `toml:"interval"`
	GroupWait     time.Duration `toml:"group_wait"`
	GroupInterval time.Duration `toml:"group_interval"`
	Lease         time.Duration `toml:"lease"`
	BatchSize     int           `toml:"batch_size"`
	KeepDays      *int          `toml:"keep_days"`
	Conditions    time.Duration `toml:"conditions_interval"`
	Timezone      string        `toml:"timezone"`
	Immediate     []string      `toml:"immediate"`
	SilentPasses  int           `toml:"silent_passes"`
	FailingPasses int           `toml:"failing_passes"`
	Channels      []channelFile `toml:"channel"`
	Routes        []routeFile   `toml:"route"`
}

type channelFile struct {
	Name         string        `toml:"name"`
	Type         string        `toml:"type"`
	URL          string        `toml:"url"` // Alertmanager's address only: a webhook's URL is a secret
	URLEnv       string        `toml:"url_env"`
	URLFile      string        `toml:"url_file"`
	SecretEnv    string        `toml:"secret_env"`
	SecretFile   string        `toml:"secret_file"`
	SMTPHost     string        `toml:"smtp_host"`
	SMTPPort     int           `toml:"smtp_port"`
	TLS          string        `toml:"tls"`
	User         string        `toml:"user"`
	PasswordEnv  string        `toml:"password_env"`
	PasswordFile string        `toml:"password_file"`
	From         string        `toml:"from"`
	To           []string      `toml:"to"`
	CAFile       string        `toml:"ca_file"`
	Digest       string        `toml:"digest"`
	DigestAt     string        `toml:"digest_at"`
	DigestDay    string        `toml:"digest_day"`
	Timeout      time.Duration `toml:"timeout"`
}

type routeFile struct {
	Channels    []string          `toml:"channels"`
	Events      []string          `toml:"events"`
	Instances   []string          `toml:"instances"`
	Tags        map[string]string `toml:"tags"`
	MinSeverity string            `toml:"min_severity"`
	Hours       string            `toml:"hours"`
	Mode        string            `toml:"mode"`
}

// alertSettings is what the alert commands and loops need from the file:
// the alert configuration and the collector's interval (silence is counted
// in passes).
type alertSettings struct {
	cfg               alert.Config
	collectorInterval time.Duration
	configured        bool // the file has an [alerts] table with a channel
}

// loadAlertConfig reads the [alerts] table of the TOML file at path,
// reading each secret from its file or variable; warn receives a warning
// for each secret file others can read.
func loadAlertConfig(path string, warn io.Writer) (alertSettings, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return alertSettings{}, fmt.Errorf("config: %w", err)
	}
	s, err := parseAlertConfig(b, warn)
	if err != nil {
		return alertSettings{}, fmt.Errorf("config %s: %w", path, err)
	}
	return s, nil
}

func parseAlertConfig(b []byte, warn io.Writer) (alertSettings, error) {
	var f configFile
	md, err := toml.NewDecoder(bytes.NewReader(b)).Decode(&f)
	if err != nil {
		return alertSettings{}, err
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return alertSettings{}, fmt.Errorf("unknown key(s): %s", strings.Join(keys, ", "))
	}
	s := alertSettings{collectorInterval: f.Collector.Interval}
	if f.Alerts == nil {
		return s, nil
	}
	a := f.Alerts
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"interval", a.Interval}, {"group_wait", a.GroupWait}, {"group_interval", a.GroupInterval}, {"lease", a.Lease}, {"conditions_interval", a.Conditions}} {
		if d.v != 0 && d.v < time.Second {
			return s, fmt.Errorf("[alerts] %s = %v is under a second: write durations as strings such as \"30s\"", d.key, d.v)
		}
	}
	loc := time.Local
	if a.Timezone != "" {
		if loc, err = time.LoadLocation(a.Timezone); err != nil {
			return s, fmt.Errorf("[alerts] timezone %q: %v", a.Timezone, err)
		}
	}
	if a.GroupWait == 0 {
		a.GroupWait = 30 * time.Second
	}
	keep := 365
	if a.KeepDays != nil {
		keep = *a.KeepDays
	}
	if keep < 0 {
		return s, fmt.Errorf("[alerts] keep_days cannot be negative")
	}
	if a.GroupInterval == 0 {
		a.GroupInterval = 5 * time.Minute
	}
	s.cfg = alert.Config{BaseURL: a.BaseURL, Interval: a.Interval, GroupWait: a.GroupWait, GroupInterval: a.GroupInterval, Lease: a.Lease, BatchSize: a.BatchSize, KeepDays: keep, Location: loc,
		Immediate: a.Immediate, Conditions: a.Conditions, SilentPasses: a.SilentPasses, FailingPasses: a.FailingPasses}
	for _, c := range a.Channels {
		cc, err := c.channel(warn)
		if err != nil {
			return s, err
		}
		s.cfg.Channels = append(s.cfg.Channels, cc)
	}
	for _, r := range a.Routes {
		s.cfg.Routes = append(s.cfg.Routes, alert.Route{Channels: r.Channels, Events: r.Events, Instances: r.Instances,
			Tags: r.Tags, MinSeverity: r.MinSeverity, Hours: r.Hours, Mode: r.Mode})
	}
	if err := s.cfg.Validate(); err != nil {
		return s, err
	}
	s.configured = len(s.cfg.Channels) > 0
	return s, nil
}

// channel turns the file's channel into the sender's, reading its secrets.
func (c channelFile) channel(warn io.Writer) (alert.ChannelConfig, error) {
	cc := alert.ChannelConfig{Name: c.Name, Type: c.Type, SMTPHost: c.SMTPHost, SMTPPort: c.SMTPPort, TLS: c.TLS, User: c.User,
		From: c.From, To: c.To, CAFile: c.CAFile, Digest: c.Digest, DigestAt: c.DigestAt, Timeout: c.Timeout}
	what := "[[alerts.channel]] " + c.Name
	var err error
	if c.URL != "" && c.Type != alert.TypeAlertmanager {
		return cc, fmt.Errorf("%s: a webhook's URL is its credential: give url_env or url_file, not url", what)
	}
	cc.URL = c.URL
	if cc.URL == "" {
		if cc.URL, err = secret(what, "url", c.URLEnv, c.URLFile, warn); err != nil {
			return cc, err
		}
	}
	if cc.Secret, err = secret(what, "secret", c.SecretEnv, c.SecretFile, warn); err != nil {
		return cc, err
	}
	if cc.Password, err = secret(what, "password", c.PasswordEnv, c.PasswordFile, warn); err != nil {
		return cc, err
	}
	if c.User != "" && cc.Password == "" {
		return cc, fmt.Errorf("%s: user needs password_env or password_file", what)
	}
	if c.DigestDay != "" {
		d, ok := weekdays[strings.ToLower(c.DigestDay)]
		if !ok {
			return cc, fmt.Errorf("%s: digest_day %q: want a day such as \"monday\"", what, c.DigestDay)
		}
		cc.DigestDay = d
	} else {
		cc.DigestDay = time.Monday
	}
	return cc, nil
}

var weekdays = map[string]time.Weekday{"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday,
	"wednesday": time.Wednesday, "thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday}

// secret reads a secret from the environment variable env or the file
// path (one of them, or neither: ""). The error names the variable or file,
// never the value.
func secret(what, key, env, path string, warn io.Writer) (string, error) {
	switch {
	case env != "" && path != "":
		return "", fmt.Errorf("%s: give %s_env or %s_file, not both", what, key, key)
	case env != "":
		v, ok := os.LookupEnv(env)
		if !ok || v == "" {
			return "", fmt.Errorf("%s: %s_env: the environment variable %s is not set", what, key, env)
		}
		return strings.TrimSpace(v), nil
	case path != "":
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("%s: %s_file: %v", what, key, errors.Unwrap(err))
		}
		if warn != nil {
			warnReadable(warn, what+" "+key+"_file", path)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return "", nil
}
