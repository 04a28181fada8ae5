package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/store"
)

// ImportCmd imports offline files (SPEC §3.2).
type ImportCmd struct {
	Kind      string    `arg:"" enum:"errorlog,history,messages" help:"errorlog, history or messages."`
	Files     []string  `arg:"" help:"Files to import." type:"path"`
	Instance  string    `help:"Instance name, when the file does not say it (or to override it)."`
	Database  string    `help:"Database (messages), when the text does not say it."`
	At        time.Time `help:"Completion time (RFC 3339) for messages that lack one." format:"2006-01-02T15:04:05Z07:00"`
	UTCOffset string    `name:"utc-offset" help:"The instance's UTC offset (e.g. -05:00) when no error log states it."`
	Strict    bool      `help:"Any rejected line makes the import fail."`
}

// Run implements the command.
func (c *ImportCmd) Run(ctx context.Context, m *Main) error {
	kind, err := ingest.ParseKind(c.Kind)
	if err != nil {
		return usageError{err}
	}
	db, err := m.openDB(ctx)
	if err != nil {
		return err
	}
	if c.UTCOffset != "" {
		if c.Instance == "" {
			return usageError{fmt.Errorf("--utc-offset needs --instance")}
		}
		off, err := parseOffset(c.UTCOffset)
		if err != nil {
			return usageError{err}
		}
		if err := db.SetDefaultOffset(ctx, c.Instance, off); err != nil {
			return err
		}
	}
	var failed, rejected int
	for _, path := range c.Files {
		opt := ingest.Options{Instance: c.Instance, Database: c.Database, At: c.At}
		var bar *progressbar.ProgressBar
		var phases *phaseBars
		endBar := func() {
			if bar != nil {
				_ = bar.Finish()
				fmt.Fprintln(m.Stderr)
				bar = nil
			}
		}
		if m.IsTerminal {
			if st, err := os.Stat(path); err == nil && st.Size() > 8<<20 {
				bar = progressbar.DefaultBytes(st.Size(), "importing "+path)
				opt.Progress = func(done, _ int64) { _ = bar.Set64(done) }
				// What follows the file's last byte gets bars of its own.
				phases = &phaseBars{w: m.Stderr, before: endBar}
				db.SetProgress(phases.report)
			}
		}
		start := time.Now()
		sum, err := ingest.ImportFile(ctx, db, kind, path, opt)
		if phases != nil {
			db.SetProgress(nil)
			phases.finish()
		}
		endBar()
		printSummary(m, path, sum, time.Since(start))
		rejected += len(sum.Rejects)
		if err != nil {
			failed++
			fmt.Fprintf(m.Stderr, "%s: not imported: %s\n", path, store.ErrorMessage(errOrInternal(err)))
		}
	}
	switch {
	case failed > 0:
		return store.Errorf(store.EINVALID, "%d of %d files could not be imported", failed, len(c.Files))
	case c.Strict && rejected > 0:
		return store.Errorf(store.EINVALID, "%d lines rejected (--strict)", rejected)
	}
	return nil
}

func printSummary(m *Main, path string, s store.ImportSummary, took time.Duration) {
	fmt.Fprintf(m.Stdout, "%s: read %d, added %d, duplicates %d, rejected %d (%.1f s)\n",
		path, s.Read, s.Added, s.Duplicates, len(s.Rejects), took.Seconds())
	const show = 50
	for i, r := range s.Rejects {
		if i == show {
			fmt.Fprintf(m.Stdout, "  … and %d more rejected lines\n", len(s.Rejects)-show)
			break
		}
		fmt.Fprintf(m.Stdout, "  rejected %s\n", r)
	}
}

// parseOffset parses "+05:30", "-5:00", "0" into minutes.
func parseOffset(s string) (int, error) {
	s = strings.TrimSpace(s)
	sign := 1
	switch {
	case strings.HasPrefix(s, "-"):
		sign, s = -1, s[1:]
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	}
	var h, mi int
	if _, err := fmt.Sscanf(s, "%d:%d", &h, &mi); err != nil {
		if _, err := fmt.Sscanf(s, "%d", &h); err != nil {
			return 0, fmt.Errorf("utc offset %q: want ±HH:MM", s)
		}
	}
	if h > 14 || mi > 59 || h < 0 || mi < 0 {
		return 0, fmt.Errorf("utc offset %q out of range", s)
	}
	return sign * (h*60 + mi), nil
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
