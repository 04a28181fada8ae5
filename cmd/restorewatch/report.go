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

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web"
)

// ReportCmd writes the printable evidence report of a regression or a build
// comparison as HTML, or as PDF through headless Chromium.
type ReportCmd struct {
	Regression int64  `help:"The regression's id; or give --builds." xor:"what" required:"" placeholder:"ID"`
	Builds     string `help:"Two builds to compare, A,B (e.g. 13.0.4474.0,13.0.5149.0); or give --regression." xor:"what" required:"" placeholder:"A,B"`
	Out        string `short:"o" required:"" help:"FILE.html or FILE.pdf." type:"path" placeholder:"FILE"`
	Paper      string `help:"PDF paper: A4 or Letter; default: the locale's (LC_ALL, LC_PAPER, LANG: Letter in the US, Canada, Mexico…, else A4)." placeholder:"SIZE"`
	// The report states the method the regression was found with: give it
	// the --ratio, --min-each and --alpha that analyze was given.
	AnalysisFlags `embed:""`
}

// Run implements the command.
func (c *ReportCmd) Run(ctx context.Context, m *Main) error {
	ext := strings.ToLower(filepath.Ext(c.Out))
	if ext != ".html" && ext != ".pdf" {
		return usageError{fmt.Errorf("-o %s: want a .html or .pdf file", c.Out)}
	}
	sheet, ok := paperOf(c.Paper)
	if !ok {
		return usageError{fmt.Errorf("--paper %q: want A4 or Letter", c.Paper)}
	}
	opt, err := c.options()
	if err != nil {
		return err
	}
	db, err := m.openExisting(ctx)
	if err != nil {
		return err
	}
	ref, err := m.reference()
	if err != nil {
		return err
	}
	srv := web.New(web.Config{DB: db, Reference: ref, Namer: ref.Namer(), Version: Version, Analysis: opt})
	var html bytes.Buffer
	if c.Regression != 0 {
		err = srv.RenderRegressionReport(ctx, c.Regression, &html)
	} else {
		a, b, ok := strings.Cut(c.Builds, ",")
		if !ok || a == "" || b == "" {
			return usageError{fmt.Errorf("--builds %q: want two builds, A,B", c.Builds)}
		}
		err = srv.RenderBuildReport(ctx, strings.TrimSpace(a), strings.TrimSpace(b), &html)
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
	return writePDF(ctx, m, html.Bytes(), c.Out, sheet)
}

// writePDF prints the self-contained HTML report to PDF with headless
// Chromium, when it is installed, with JavaScript off (printReport).
func writePDF(ctx context.Context, m *Main, html []byte, out string, sheet paper) error {
	bin, err := chromium()
	if err != nil {
		return err
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
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	// Chromium now and then fails to start on a loaded machine (its
	// launcher gives up before the DevTools port opens): a fresh process
	// with a fresh profile gets two more tries.
	var pdf []byte
	for try := 1; ; try++ {
		pdf, err = printReport(ctx, bin, filepath.Join(dir, fmt.Sprintf("profile-%d", try)), "file://"+src, sheet)
		if err == nil || try == 3 || ctx.Err() != nil || !strings.Contains(err.Error(), "chrome failed to start") {
			break
		}
	}
	if err != nil {
		return store.Errorf(store.EINTERNAL, "report: Chromium could not print the PDF: %v", err)
	}
	if len(pdf) == 0 {
		return store.Errorf(store.EINTERNAL, "report: Chromium wrote no PDF")
	}
	if err := os.WriteFile(out, pdf, 0o644); err != nil {
		return store.Errorf(store.EINVALID, "report: %v", err)
	}
	fmt.Fprintf(m.Stdout, "wrote %s (%s)\n", out, sheet.name)
	return nil
}

// chromium finds the browser that prints PDFs.
func chromium() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", store.Errorf(store.EUNAVAILABLE, "report: writing PDF needs Chromium, which is not installed (on Debian: apt-get install chromium); write FILE.html instead and print it from a browser")
}

// printReport prints the page at url to PDF through the DevTools protocol,
// with script execution disabled in the page before it loads: the report
// needs no script (its charts are SVG) and its text comes from servers, so
// nothing in it may run even if escaping ever failed. (Chromium's
// --print-to-pdf writes nothing once --blink-settings=scriptEnabled=false
// is given, so the command line cannot do this.) The report's own CSP
// forbids script too; this holds for any HTML printed here.
func printReport(ctx context.Context, bin, profile, url string, sheet paper) ([]byte, error) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], // --headless, --no-first-run, --disable-background-networking, --disable-sync …
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(profile),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-extensions", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	noScript := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	})
	if err := chromedp.Do(bctx, noScript, chromedp.Navigate(url)); err != nil {
		return nil, err
	}
	return chromedp.Run(bctx, chromedp.PrintToPDF(func(p *page.PrintToPDFParams) {
		p.PaperWidth, p.PaperHeight = sheet.width, sheet.height
	}))
}
