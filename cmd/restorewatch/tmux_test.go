package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestCLIFitsAnEightyColumnTerminal runs the CLI's human output in a real
// 80×50 terminal (tmux) and reads the screen back with every wrapped line
// joined (capture-pane -J): no line of `regressions`, `restores` or `plan`
// is wider than the terminal, so none wraps (issue 38 item 8).
func TestCLIFitsAnEightyColumnTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and runs it in tmux: the full suite runs it")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but tmux is missing (.ci/run installs it)")
		}
		t.Skip("tmux not installed")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "restorewatch")
	if out, err := exec.Command(goCmd, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	db := newDB(t, "w.db")
	if _, stderr, code := runMain(t, "demo", "--db", db); code != 0 {
		t.Fatalf("demo: %s", stderr)
	}
	sock := filepath.Join(dir, "tmux.sock")
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })
	for i, args := range [][]string{
		{"regressions"},
		{"restores", "--limit", "30"},
		{"plan", "--instance", "LNX-SQL05", "--database", "Orders"},
		{"plan", "--instance", "DWH-SQL02", "--database", "DW_Sales"},
	} {
		done := filepath.Join(dir, fmt.Sprintf("done%d", i))
		name := fmt.Sprintf("w%d", i)
		cmd := bin + " " + strings.Join(args, " ") + " --db '" + db + "'; touch " + done + "; sleep 60"
		tmux("new-session", "-d", "-x", "80", "-y", "50", "-s", name, "sh", "-c", cmd)
		deadline := time.Now().Add(time.Minute)
		for {
			if _, err := os.Stat(done); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%v did not finish", args)
			}
			time.Sleep(50 * time.Millisecond)
		}
		screen := tmux("capture-pane", "-p", "-J", "-S", "-", "-t", name)
		lines := 0
		for l := range strings.SplitSeq(screen, "\n") {
			l = strings.TrimRight(l, " ")
			if l != "" {
				lines++
			}
			if n := utf8.RuneCountInString(l); n > 80 {
				t.Errorf("rw %s: a line of %d columns wraps in 80:\n%s", strings.Join(args, " "), n, l)
			}
		}
		if lines < 5 {
			t.Errorf("rw %s printed %d lines:\n%s", strings.Join(args, " "), lines, screen)
		}
	}
}
