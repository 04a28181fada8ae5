package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web"
)

// ReportCmd writes the printable evidence report of a regression or a build
// comparison as HTML, or as PDF through headless Chromium.
type ReportCmd struct {
	Regression int64  `help:"The regression's id." xor:"what" required:""`
	Builds     string `help:"Two builds to compare, A,B (e.g. 13.0.4474.0,13.0.5149.0)." xor:"what" required:""`
	Out        string `short:"o" required:"" help:"FILE.html or FILE.pdf." type:"path"`
}

// Run implements the command.
func (c *ReportCmd) Run(ctx context.Context, m *Main) error {
	ext := strings.ToLower(filepath.Ext(c.Out))
	if ext != ".html" && ext != ".pdf" {
		return usageError{fmt.Errorf("-o %s: want a .html or .pdf file", c.Out)}
	}
	db, err := m.openDB(ctx)
	if err != nil {
		return err
	}
	var html bytes.Buffer
	if c.Regression != 0 {
		err = web.RenderRegressionReport(ctx, db, c.Regression, &html)
	} else {
		a, b, ok := strings.Cut(c.Builds, ",")
		if !ok || a == "" || b == "" {
			return usageError{fmt.Errorf("--builds %q: want two builds, A,B", c.Builds)}
		}
		err = web.RenderBuildReport(ctx, db, strings.TrimSpace(a), strings.TrimSpace(b), &html)
	}
	if err != nil {
		return err
	}
	if ext == ".html" {
		if err := os.WriteFile(c.Out, html.Bytes(), 0o644); err != nil {
			return store.Errorf(store.EINVALID, "report: %v", err)
		}
		fmt.Fprintf(m.Stdout, "wrote %s\n", c.Out)
		return nil
	}
	return writePDF(ctx, m, html.Bytes(), c.Out)
}

// writePDF prints the self-contained HTML report to PDF with headless
// Chromium, when it is installed.
func writePDF(ctx context.Context, m *Main, html []byte, out string) error {
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		return store.Errorf(store.EUNAVAILABLE, "report: writing PDF needs Chromium, which is not installed (on Debian: apt-get install chromium); write FILE.html instead and print it from a browser")
	}
	dir, err := os.MkdirTemp("", "restorewatch-report-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "report.html")
	if err := os.WriteFile(src, html, 0o600); err != nil {
		return err
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--no-pdf-header-footer", "--print-to-pdf="+abs, "file://"+src)
	if outb, err := cmd.CombinedOutput(); err != nil {
		return store.Errorf(store.EINTERNAL, "report: Chromium could not print the PDF: %v: %s", err, lastLine(outb))
	}
	if st, err := os.Stat(abs); err != nil || st.Size() == 0 {
		return store.Errorf(store.EINTERNAL, "report: Chromium wrote no PDF")
	}
	fmt.Fprintf(m.Stdout, "wrote %s\n", out)
	return nil
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
