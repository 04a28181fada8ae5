package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/alert/alerttest"
	"github.com/restorewatch/restorewatch/store"
)

// queueAlerts writes n confirmed-regression events to a new warehouse.
func queueAlerts(t *testing.T, path string, n int) []string {
	t.Helper()
	db, err := openWarehouse(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var evs []store.AlertEvent
	var keys []string
	for i := range n {
		e := store.AlertEvent{Key: fmt.Sprintf("regression_confirmed/SQL%02d/DB%d/full/regression/%d", i%5, i, 1760000000+i),
			Kind: store.AlertRegressionConfirmed, Severity: store.SeverityWarning, Instance: fmt.Sprintf("SQL%02d", i%5),
			Database: fmt.Sprintf("DB%d", i), Title: fmt.Sprintf("Full restores of DB%d slowed 2×", i), Summary: "Median halved.",
			NextStep: "Look.", Link: fmt.Sprintf("/regressions/%d", i+1), Since: time.Now().Add(-time.Hour)}
		evs, keys = append(evs, e), append(keys, e.Key)
	}
	if err := db.EnqueueAlerts(context.Background(), evs...); err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestAlertsSurviveSIGKILL kills a real `restorewatch alerts send` while the
// receiver holds its second message (received, not yet acknowledged), then
// runs it again: every alert reaches the receiver, the first message's ten
// exactly once (acknowledged, marked sent, not sent again), the held ten
// twice (never acknowledged, so sent again; the receiver dedupes by key),
// the rest once, and the warehouse shows every delivery sent.
func TestAlertsSurviveSIGKILL(t *testing.T) {
	dir := t.TempDir()
	dbPath := newDB(t, "w.db")
	keys := queueAlerts(t, dbPath, 30)
	hook := alerttest.StartWebhook(t, "kill-test-secret")
	held, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	hook.SetHold(func() {
		if calls.Add(1) == 2 {
			close(held)
			<-release
		}
	})
	t.Setenv("RW_TEST_HOOK_URL", hook.URL)
	t.Setenv("RW_TEST_HOOK_SECRET", "kill-test-secret")
	cfg := filepath.Join(dir, "alerts.toml")
	if err := os.WriteFile(cfg, []byte(`
[alerts]
base_url = "http://127.0.0.1:8080"
group_wait = "1s"
lease = "1s"
batch_size = 10

[[alerts.channel]]
name = "hook"
type = "webhook"
url_env = "RW_TEST_HOOK_URL"
secret_env = "RW_TEST_HOOK_SECRET"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	send := func() *exec.Cmd {
		c := exec.Command(os.Args[0], "--db", dbPath, "alerts", "send", "--config", cfg)
		c.Env = append(os.Environ(), "RW_AS_MAIN=1")
		return c
	}
	time.Sleep(1100 * time.Millisecond) // the group wait
	c := send()
	var out strings.Builder
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		c.Process.Kill()
		c.Wait()
		t.Fatalf("the sender never sent a second message:\n%s", out.String())
	}
	_ = c.Process.Signal(syscall.SIGKILL)
	_ = c.Wait()
	close(release)
	if got := len(hook.Keys()); got != 20 {
		t.Fatalf("before the restart the receiver holds %d keys, want 20 (two messages of 10)", got)
	}
	time.Sleep(1100 * time.Millisecond) // the killed sender's lease ends
	if b, err := send().CombinedOutput(); err != nil {
		t.Fatalf("restart: %v\n%s", err, b)
	}
	got := hook.Keys()
	once, twice := 0, 0
	for _, k := range keys {
		switch got[k] {
		case 1:
			once++
		case 2:
			twice++
		default:
			t.Errorf("key %s arrived %d times", k, got[k])
		}
	}
	if len(got) != len(keys) || once != 20 || twice != 10 {
		t.Errorf("%d distinct keys (want %d); %d arrived once (want 20), %d twice (want the 10 never acknowledged)",
			len(got), len(keys), once, twice)
	}
	out2, stderr, code := runMain(t, "--db", dbPath, "alerts", "list", "--state", "sent", "--limit", "100", "--format", "json")
	if code != 0 || strings.Count(out2, `"state": "sent"`) != 30 {
		t.Errorf("alerts list --state sent: exit %d, %d sent; %s", code, strings.Count(out2, `"state": "sent"`), stderr)
	}
	if strings.Contains(out2, hook.URL) || strings.Contains(out2, "kill-test-secret") {
		t.Error("alerts list shows the webhook's URL or secret")
	}
}

// TestAlertsCLI: test reaches every channel; ack and silence keep who, why
// and until when; a secret's value is never printed.
func TestAlertsCLI(t *testing.T) {
	dir := t.TempDir()
	dbPath := newDB(t, "w.db")
	keys := queueAlerts(t, dbPath, 3)
	hook := alerttest.StartWebhook(t, "")
	relay := alerttest.StartSMTP(t, false, "", "")
	urlFile := filepath.Join(dir, "hook.url")
	if err := os.WriteFile(urlFile, []byte(hook.URL+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "alerts.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`
[alerts]
group_wait = "1s"

[[alerts.channel]]
name = "hook"
type = "webhook"
url_file = %q

[[alerts.channel]]
name = "relay"
type = "email"
smtp_host = "127.0.0.1"
smtp_port = %d
tls = "none"
from = "rw@example.com"
to = ["dba@example.com"]

[[alerts.route]]
channels = ["hook", "relay"]
`, urlFile, relay.Port)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runMain(t, "alerts", "test", "--config", cfg)
	if code != 0 || !strings.Contains(out, "hook: delivered") || !strings.Contains(out, "relay: delivered") {
		t.Fatalf("alerts test: exit %d\n%s%s", code, out, stderr)
	}
	if _, stderr, code := runMain(t, "--db", dbPath, "alerts", "ack", keys[0], "--by", "ana", "--why", "known: share maintenance"); code != 0 {
		t.Fatalf("ack: %d %s", code, stderr)
	}
	if _, stderr, code := runMain(t, "--db", dbPath, "alerts", "silence", "--instance", "SQL01", "--by", "bo", "--why", "patching", "--for", "4h"); code != 0 {
		t.Fatalf("silence: %d %s", code, stderr)
	}
	out, _, _ = runMain(t, "--db", dbPath, "alerts", "silences")
	if !strings.Contains(out, "SQL01") || !strings.Contains(out, "patching") || !strings.Contains(out, "bo") {
		t.Errorf("silences:\n%s", out)
	}
	time.Sleep(1100 * time.Millisecond)
	_, stderr, code = runMain(t, "--db", dbPath, "alerts", "send", "--config", cfg)
	if code != 0 || !strings.Contains(stderr, "2 delivered in 2 messages") {
		t.Fatalf("send: exit %d: %s", code, stderr)
	}
	if got := hook.Keys(); got[keys[0]] != 0 || got[keys[1]] != 0 || got[keys[2]] != 1 {
		t.Errorf("webhook got %v, want only %s (one acknowledged, one silenced)", got, keys[2])
	}
	out, _, _ = runMain(t, "--db", dbPath, "alerts", "list")
	for _, want := range []string{"acknowledged by ana", "silenced by bo", "hook sent", "relay sent"} {
		if !strings.Contains(out, want) {
			t.Errorf("alerts list lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, hook.URL) {
		t.Error("alerts list shows the webhook's URL")
	}
	if _, stderr, code := runMain(t, "alerts", "test", "--config", writeAlertFile(t, dir, "bad.toml", "[alerts]\n[[alerts.channel]]\nname = \"x\"\ntype = \"slack\"\nurl = \"https://hooks.slack.com/services/SECRET\"\n")); code != 1 || strings.Contains(stderr, "SECRET") || !strings.Contains(stderr, "url_env or url_file") {
		t.Errorf("a webhook URL written in the TOML: exit %d, %s", code, stderr)
	}
}

func writeAlertFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestServeSendsAlerts: serve runs the sender in the background: the
// alerts queued before it started reach the webhook, and /alerts says so.
func TestServeSendsAlerts(t *testing.T) {
	dir := t.TempDir()
	dbPath := newDB(t, "w.db")
	keys := queueAlerts(t, dbPath, 4)
	hook := alerttest.StartWebhook(t, "")
	t.Setenv("RW_TEST_HOOK_URL", hook.URL)
	cfg := writeAlertFile(t, dir, "alerts.toml", "[alerts]\ninterval = \"1s\"\ngroup_wait = \"1s\"\n\n[[alerts.channel]]\nname = \"hook\"\ntype = \"webhook\"\nurl_env = \"RW_TEST_HOOK_URL\"\n")
	addr := serveWarehouse(t, dbPath, "--addr", "127.0.0.1:0", "--alerts", cfg)
	deadline := time.Now().Add(20 * time.Second)
	for len(hook.Keys()) < len(keys) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	got := hook.Keys()
	for _, k := range keys {
		if got[k] != 1 {
			t.Errorf("key %s reached the webhook %d times, want once", k, got[k])
		}
	}
	resp, err := http.Get("http://" + addr + "/alerts")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	deadline = time.Now().Add(10 * time.Second)
	for strings.Count(string(b), "hook</strong> sent") < len(keys) && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		resp, err = http.Get("http://" + addr + "/alerts")
		if err != nil {
			t.Fatal(err)
		}
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if n := strings.Count(string(b), "hook</strong> sent"); n != len(keys) {
		t.Errorf("/alerts shows %d sent deliveries, want %d", n, len(keys))
	}
	if strings.Contains(string(b), hook.URL) {
		t.Error("/alerts shows the webhook's URL")
	}
}
