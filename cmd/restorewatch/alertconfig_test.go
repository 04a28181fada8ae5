package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/alert"
)

// readmeAlerts is the README's [alerts] example, its secret files made real.
func readmeAlerts(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "## Alerts\n")
	if i < 0 {
		t.Fatal("README has no Alerts section")
	}
	s = s[i:]
	s = s[strings.Index(s, "```toml\n")+len("```toml\n"):]
	s = s[:strings.Index(s, "```")]
	dir := t.TempDir()
	for _, f := range []string{"/run/secrets/smtp", "/run/secrets/itsm-url", "/run/secrets/itsm-hmac"} {
		p := filepath.Join(dir, filepath.Base(f))
		v := "secret-" + filepath.Base(f)
		if strings.HasSuffix(f, "url") {
			v = "https://itsm.corp.example/hooks/restorewatch?key=abc"
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		s = strings.ReplaceAll(s, f, p)
	}
	return s
}

func TestParseAlertConfigREADME(t *testing.T) {
	t.Setenv("RW_SLACK_URL", "https://hooks.slack.com/services/T000/B000/XXXX")
	s, err := parseAlertConfig([]byte(readmeAlerts(t)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c := s.cfg
	if !s.configured || len(c.Channels) != 5 || len(c.Routes) != 3 || c.GroupWait != 30*time.Second || c.Location.String() != "Europe/Paris" {
		t.Fatalf("config: %+v", c)
	}
	byName := map[string]alert.ChannelConfig{}
	for _, ch := range c.Channels {
		byName[ch.Name] = ch
	}
	if m := byName["dba-mail"]; m.Password != "secret-smtp" || m.TLS != "starttls" || m.SMTPPort != 587 {
		t.Errorf("dba-mail: %+v", m)
	}
	if m := byName["managers"]; m.Digest != "weekly" || m.DigestDay != time.Monday || m.DigestAt != "07:00" {
		t.Errorf("managers: %+v", m)
	}
	if h := byName["itsm"]; h.Secret != "secret-itsm-hmac" || !strings.HasPrefix(h.URL, "https://itsm.corp.example/") {
		t.Errorf("itsm: %+v", h)
	}
	if byName["chat"].URL != "https://hooks.slack.com/services/T000/B000/XXXX" {
		t.Errorf("chat: %+v", byName["chat"])
	}
	if _, err := alert.NewSender(c, nil, nil); err != nil {
		t.Errorf("the README's channels: %v", err)
	}
}

func TestParseAlertConfigErrors(t *testing.T) {
	t.Setenv("RW_SET", "https://hooks.example/x")
	ch := func(body string) string { return "[alerts]\n[[alerts.channel]]\nname = \"c\"\n" + body + "\n" }
	for _, c := range []struct{ name, toml, want string }{
		{"webhook URL in the TOML", ch("type = \"teams\"\nurl = \"https://x.example/SECRETPART\""), "url_env or url_file, not url"},
		{"unset variable", ch("type = \"slack\"\nurl_env = \"RW_NOT_SET_ANYWHERE\""), "RW_NOT_SET_ANYWHERE is not set"},
		{"unknown type", ch("type = \"pager\"\nurl_env = \"RW_SET\""), `type "pager"`},
		{"password in clear", ch("type = \"email\"\nsmtp_host = \"h\"\nfrom = \"a@b.c\"\nto = [\"d@e.f\"]\ntls = \"none\"\nuser = \"u\"\npassword_env = \"RW_SET\""), "never sent in clear"},
		{"user without password", ch("type = \"email\"\nsmtp_host = \"h\"\nfrom = \"a@b.c\"\nto = [\"d@e.f\"]\ntls = \"starttls\"\nuser = \"u\""), "user needs password_env"},
		{"route to nowhere", ch("type = \"slack\"\nurl_env = \"RW_SET\"") + "[[alerts.route]]\nchannels = [\"other\"]\n", `channel "other"`},
		{"unknown event", ch("type = \"slack\"\nurl_env = \"RW_SET\"") + "[[alerts.route]]\nchannels = [\"c\"]\nevents = [\"regresion_confirmed\"]\n", `event "regresion_confirmed"`},
		{"bad hours", ch("type = \"slack\"\nurl_env = \"RW_SET\"") + "[[alerts.route]]\nchannels = [\"c\"]\nhours = \"8-18\"\n", "HH:MM-HH:MM"},
		{"typo", ch("type = \"slack\"\nurl_env = \"RW_SET\"\ndigest_hour = \"7\""), "unknown key(s): alerts.channel.digest_hour"},
		{"integer duration", "[alerts]\ninterval = 30\n", "under a second"},
	} {
		_, err := parseAlertConfig([]byte(c.toml), io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "SECRETPART") || strings.Contains(err.Error(), "hooks.example")) {
			t.Errorf("%s: the error shows a secret: %v", c.name, err)
		}
	}
}
