package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoopbackOnly(t *testing.T) {
	for _, base := range []string{"http://127.0.0.1:8080", "http://localhost:1", "http://[::1]:80/"} {
		if _, err := loopbackBase(base); err != nil {
			t.Errorf("%s refused: %v", base, err)
		}
	}
	for _, base := range []string{"http://10.0.0.1:8080", "http://example.com", "https://127.0.0.1", "http://0.0.0.0:80", "ftp://127.0.0.1"} {
		if _, err := loopbackBase(base); err == nil {
			t.Errorf("%s accepted", base)
		}
	}
}

func TestPattern(t *testing.T) {
	for in, want := range map[string]string{
		"/restores/123":                 "/restores/{id}",
		"/restores?sort=longest":        "/restores?sort=…",
		"/compare?a=x&b=y":              "/compare?a=…&b=…",
		"/instances/SQL01%5CPROD":       "/instances/SQL01%5CPROD",
		"/reports/regressions/7":        "/reports/regressions/{id}",
		"/api/restores?instance=A&l=10": "/api/restores?instance=…&l=…",
	} {
		if got := patternOf(in); got != want {
			t.Errorf("patternOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRunCountsErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bad" {
			http.Error(w, "no", http.StatusInternalServerError)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	urls := filepath.Join(t.TempDir(), "urls")
	os.WriteFile(urls, []byte("# comment\n/good\nbad /bad\n"), 0o644)
	var out, errb bytes.Buffer
	code := run([]string{"-base", srv.URL, "-urls", urls, "-n", "20", "-c", "3"}, &out, &errb)
	if code != 1 {
		t.Errorf("exit %d with failing requests, want 1\n%s", code, errb.String())
	}
	if !strings.Contains(out.String(), "| `/good` | 10 | 0 |") || !strings.Contains(out.String(), "| `bad` | 10 | 10 |") {
		t.Errorf("table:\n%s", out.String())
	}
	os.WriteFile(urls, []byte("/good\n"), 0o644)
	out.Reset()
	if code := run([]string{"-base", srv.URL, "-urls", urls, "-n", "5"}, &out, &errb); code != 0 {
		t.Errorf("exit %d with no failures", code)
	}
}
