//go:build !windows

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// docs/deploy/restorewatch.service is what service install writes for the
// defaults: the documented unit and the installed one cannot drift.
func TestServiceUnitIsTheDocumentedOne(t *testing.T) {
	dir := t.TempDir()
	if out, stderr, code := runMain(t, "service", "install", "--unit-dir", dir, "--exe", "/usr/local/bin/restorewatch"); code != 0 {
		t.Fatalf("install: exit %d: %s %s", code, out, stderr)
	}
	got, err := os.ReadFile(filepath.Join(dir, "restorewatch.service"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../docs/deploy/restorewatch.service")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("service install writes a unit other than docs/deploy/restorewatch.service:\n%s", got)
	}
	for _, k := range []string{"User=restorewatch", "ProtectSystem=strict", "StateDirectory=restorewatch", "NoNewPrivileges=yes",
		"ExecStart=/usr/local/bin/restorewatch collect --config /etc/restorewatch/restorewatch.toml --db /var/lib/restorewatch/restorewatch.db"} {
		if !strings.Contains(string(got), k+"\n") {
			t.Errorf("the unit lacks %s", k)
		}
	}
	if out, _, code := runMain(t, "service", "uninstall", "--unit-dir", dir); code != 0 || !strings.Contains(out, "removed") {
		t.Errorf("uninstall: exit %d %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "restorewatch.service")); err == nil {
		t.Error("uninstall left the unit")
	}
}

// systemd itself accepts both units (collect, and serve with the
// dashboard). verify checks that ExecStart is executable, so the units
// name this test binary.
func TestServiceUnitVerifies(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("systemd is Linux's")
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("systemd-analyze is missing: .ci/run installs systemd")
		}
		t.Skip("systemd-analyze not installed: apt-get install systemd runs this test")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, extra := range [][]string{nil, {"--serve", "--name", "restorewatch-web", "--account", "rwweb"}} {
		dir := t.TempDir()
		args := append([]string{"service", "install", "--unit-dir", dir, "--exe", exe}, extra...)
		if out, stderr, code := runMain(t, args...); code != 0 {
			t.Fatalf("%q: exit %d: %s %s", extra, code, out, stderr)
		}
		units, _ := filepath.Glob(filepath.Join(dir, "*.service"))
		if len(units) != 1 {
			t.Fatalf("units %v", units)
		}
		out, err := exec.Command(analyze, "verify", units[0]).CombinedOutput()
		if err != nil || len(strings.TrimSpace(string(out))) > 0 {
			t.Errorf("systemd-analyze verify %s: %v\n%s", units[0], err, out)
		}
	}
}

func TestVersionNamesTheCommit(t *testing.T) {
	out, _, code := runMain(t, "version")
	if code != 0 || !strings.HasPrefix(out, "restorewatch ") || !strings.Contains(out, "commit ") || !strings.Contains(out, runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("version: exit %d %q", code, out)
	}
}
