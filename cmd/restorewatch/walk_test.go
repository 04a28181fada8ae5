package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/web/walk"
)

// walkSource is every surface of the warehouse at db: the dashboard
// serving it, the CLI on it, and (when Chromium and poppler are here)
// each regression's report printed to PDF and read back as text.
func walkSource(t *testing.T, db string, pdf bool) walk.Source {
	addr := serveWarehouse(t, db)
	c := &http.Client{}
	src := walk.Source{
		Get: func(ctx context.Context, path string) (string, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
			if err != nil {
				return "", err
			}
			resp, err := c.Do(req)
			if err != nil {
				return "", err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("%s", resp.Status)
			}
			return string(b), err
		},
		CLI: func(_ context.Context, args ...string) (string, error) {
			out, stderr, code := runMain(t, append(args, "--db", db)...)
			if code != 0 {
				return out, fmt.Errorf("exit %d: %s", code, stderr)
			}
			return out, nil
		},
	}
	if pdf {
		dir := t.TempDir()
		src.PDFText = func(_ context.Context, id int64) (string, error) {
			file := filepath.Join(dir, fmt.Sprintf("r%d.pdf", id))
			if _, stderr, code := runMain(t, "report", "--db", db, "--regression", fmt.Sprint(id), "-o", file); code != 0 {
				return "", fmt.Errorf("report: %s", stderr)
			}
			out, err := exec.Command("pdftotext", "-raw", file, "-").Output()
			return string(out), err
		}
	}
	return src
}

// canPrint reports whether the report can be printed and read back here;
// under CI it must.
func canPrint(t *testing.T) bool {
	for _, bin := range []string{"chromium", "pdftotext"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI=true but %s is missing", bin)
			}
			t.Logf("%s not installed: the walk leaves the printed report out", bin)
			return false
		}
	}
	return !testing.Short()
}

// TestWalkerOnTheDemo: every surface of the demo states each regression's,
// watch's, RTO's and knee's figures as the API does (issue 38).
func TestWalkerOnTheDemo(t *testing.T) {
	db := newDB(t, "w.db")
	if _, stderr, code := runMain(t, "demo", "--db", db); code != 0 {
		t.Fatalf("demo: %s", stderr)
	}
	res, err := walk.Walk(t.Context(), walkSource(t, db, canPrint(t)))
	if err != nil {
		t.Fatal(err)
	}
	report(t, res)
	if res.Entities < 8 || res.Checks < 200 {
		t.Errorf("the walk compared %d figures of %d entities: too few to prove anything", res.Checks, res.Entities)
	}
}

// TestWalkerOnAGeneratedFleet: the same on a generated fleet (40
// instances, another seed, three months) with two watches opened by a
// first slow restore each.
func TestWalkerOnAGeneratedFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 40-instance fleet: the full suite runs it")
	}
	dir := t.TempDir()
	db := newDB(t, "w.db")
	if _, stderr, code := runMain(t, "demo", "--db", db, "--instances", "40", "--seed", "7", "--months", "3", "--dir", filepath.Join(dir, "files")); code != 0 {
		t.Fatalf("demo: %s", stderr)
	}
	usual := make([]float64, 40)
	for i := range usual {
		usual[i] = 51.2 * (1 + 0.04*float64(i%5-2))
	}
	for i, s := range []map[string][]float64{{"Billing": usual, "HR": usual}, {"Billing": {160}, "HR": {41}}} {
		f := filepath.Join(dir, fmt.Sprintf("ERRORLOG.%d", i))
		watchLog(t, f, 40*i, s)
		if _, stderr, code := runMain(t, "import", "--db", db, f); code != 0 {
			t.Fatalf("import: %s", stderr)
		}
	}
	res, err := walk.Walk(t.Context(), walkSource(t, db, false))
	if err != nil {
		t.Fatal(err)
	}
	report(t, res)
	if res.Watches < 1 || res.Entities < 10 {
		t.Errorf("the walk met %d watches among %d entities: the fleet lacks what it should prove", res.Watches, res.Entities)
	}
}

func report(t *testing.T, res *walk.Result) {
	t.Helper()
	t.Logf("walked %d entities, %d figures, surfaces %v", res.Entities, res.Checks, res.Surfaces)
	for _, d := range res.Sorted() {
		t.Error(d)
	}
}

// TestWalkerCatchesASurfaceReadingElsewhere: the walk fails when one
// surface states a figure from another source — the report's speed now
// taken from somewhere else, the overview's change as a bare ratio.
func TestWalkerCatchesASurfaceReadingElsewhere(t *testing.T) {
	db := newDB(t, "w.db")
	if _, stderr, code := runMain(t, "demo", "--db", db); code != 0 {
		t.Fatalf("demo: %s", stderr)
	}
	src := walkSource(t, db, false)
	get := src.Get
	// /live's progress of the restore in flight, to the whole percent.
	whole := regexp.MustCompile(`(\d+)\.\d %`)
	for _, tc := range []struct {
		name, path, from, to, quantity string
		edit                           func(string) string
	}{
		{"report's speed now", "/reports/regressions/1", "263 MiB/s", "262 MiB/s", "now", nil},
		{"overview's change", "/", "3.4× slower", "0.29×", "change", nil},
		{"report's change from the durations", "/reports/regressions/1", "3.4× slower", "3.5× slower", "change", nil},
		{"report's count of restores since", "/reports/regressions/1", "59 restores", "58 restores", "restores since", nil},
		{"report's upgrade case on another build", "/reports/regressions/1", "13.0.4474.0", "13.0.4474.1", "upgrade case (AS-IS/TO-BE)", nil},
		{"/live's progress rounded otherwise", "/live", "", "", "in flight", func(s string) string { return whole.ReplaceAllString(s, "$1 %") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src.Get = func(ctx context.Context, path string) (string, error) {
				body, err := get(ctx, path)
				switch {
				case path != tc.path:
				case tc.edit != nil:
					body = tc.edit(body)
				default:
					body = strings.ReplaceAll(body, tc.from, tc.to)
				}
				return body, err
			}
			res, err := walk.Walk(t.Context(), src)
			if err != nil {
				t.Fatal(err)
			}
			var hit bool
			for _, d := range res.Disagreements {
				hit = hit || (d.Surface == tc.path && d.Quantity == tc.quantity)
			}
			if !hit {
				t.Errorf("changing %s went unnoticed: %v", tc.path, res.Sorted())
			}
		})
	}
}
