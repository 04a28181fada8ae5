package alerttest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Alertmanager is a running prometheus-alertmanager.
type Alertmanager struct {
	URL string
}

// AMAlert is an alert as Alertmanager's GET /api/v2/alerts returns it.
type AMAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
	EndsAt      time.Time         `json:"endsAt"`
	Status      struct {
		State string `json:"state"`
	} `json:"status"`
}

// alertmanagerBinary finds Debian's prometheus-alertmanager (or upstream's
// alertmanager) on PATH.
func alertmanagerBinary() string {
	for _, name := range []string{"prometheus-alertmanager", "alertmanager"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// StartAlertmanager starts prometheus-alertmanager on a loopback port with
// a temporary configuration and storage, clustering off, and waits until it
// is ready. Without the binary the test is skipped with the reason locally
// and fails under CI=true (.ci/run installs it).
func StartAlertmanager(t testing.TB) *Alertmanager {
	t.Helper()
	bin := alertmanagerBinary()
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("prometheus-alertmanager is not installed: .ci/run installs it (apt-get install prometheus-alertmanager)")
		}
		t.Skip("prometheus-alertmanager is not installed (apt-get install prometheus-alertmanager); CI runs this test")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "alertmanager.yml")
	// One receiver that sends nowhere: the test reads what Alertmanager
	// holds through its API.
	if err := os.WriteFile(cfg, []byte("route:\n  receiver: hold\n  group_wait: 1h\nreceivers:\n  - name: hold\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config.file="+cfg, "--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--cluster.listen-address=", "--log.level=warn")
	out, err := os.Create(filepath.Join(dir, "alertmanager.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		out.Close()
	})
	am := &Alertmanager{URL: "http://" + addr}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(am.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return am
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "alertmanager.log"))
			t.Fatalf("alertmanager at %s not ready after 20 s: %v\n%s", addr, err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Alerts returns the alerts Alertmanager holds (active, silenced,
// inhibited and, within its retention, resolved ones).
func (am *Alertmanager) Alerts(t testing.TB) []AMAlert {
	t.Helper()
	resp, err := http.Get(am.URL + "/api/v2/alerts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v2/alerts: %s", resp.Status)
	}
	var out []AMAlert
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(fmt.Errorf("decode alerts: %w", err))
	}
	return out
}
