// Package ingest turns offline files into warehouse records: it finds the
// files of a run (files, folders, globs), tells each one's kind from its
// content, hands it to the parser of its kind (errorlog, history CSV,
// captured messages) with a store import as the sink, and reports what
// happened. Loader is the one pipeline every entry point uses: store the
// records, then derive the touched instances and analyse them, once.
package ingest

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
)

// FileKind is the kind of an offline file.
type FileKind string

// The offline file kinds of SPEC §3.2.
const (
	ErrorLog FileKind = "errorlog"
	History  FileKind = "history"
	Messages FileKind = "messages"
	Backups  FileKind = "backups"
)

// ParseKind validates a kind given on the command line or in a form.
func ParseKind(s string) (FileKind, error) {
	switch k := FileKind(s); k {
	case ErrorLog, History, Messages, Backups:
		return k, nil
	}
	return "", store.Errorf(store.EINVALID, "unknown import kind %q: want errorlog, history, messages or backups", s)
}

// Options fill in what a file itself does not say.
type Options struct {
	Instance string // --instance
	// Fallback names the instance of a file that names none (the folder's
	// name with --instance-from-dir); Instance wins over it.
	Fallback string
	Database string    // --database (messages)
	At       time.Time // --at (messages)
	// DateFormat gives the day/month order of culture-formatted dates in
	// PowerShell exports (--date-format; see csv.Options.DateFormat).
	DateFormat string
	// Progress, when set, is called with the raw bytes read so far.
	Progress func(bytesRead int64)
	// Analysis configures the regression engine run after a one-shot
	// Import; a Loader has its own.
	Analysis analysis.Options
}

// ImportFile imports one file of a known kind, derives and analyses: a
// one-file run of a Loader.
func ImportFile(ctx context.Context, db store.Warehouse, kind FileKind, path string, opt Options) (store.ImportSummary, error) {
	f, err := os.Open(path)
	if err != nil {
		return store.ImportSummary{Source: string(kind), File: path}, store.Errorf(store.EINVALID, "%s: cannot open: %v", path, errors.Unwrap(err))
	}
	defer f.Close()
	var size int64
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	return Import(ctx, db, kind, filepath.Base(path), f, size, opt)
}

// Import imports one stream named name (for messages and rejects) of the
// given kind, or of the kind its content shows when kind is empty (the
// summary's Source says which), then derives and analyses: a one-stream run
// of a Loader, as the dashboard's uploads are.
func Import(ctx context.Context, db store.Warehouse, kind FileKind, name string, r io.Reader, size int64, opt Options) (store.ImportSummary, error) {
	if kind == "" {
		k, _, whole, err := DetectStream(r)
		if err != nil {
			return store.ImportSummary{File: name}, store.Errorf(store.EINVALID, "%s: %v", name, err)
		}
		kind, r = k, whole
	} else if _, err := ParseKind(string(kind)); err != nil {
		return store.ImportSummary{Source: string(kind), File: name}, err
	}
	l := NewLoader(db, LoaderOptions{Analysis: opt.Analysis})
	st, err := l.Store(ctx, Input{Kind: kind, Name: name, R: r, Size: size, Options: opt})
	if _, derr := l.Derive(ctx); err == nil {
		err = derr
	}
	return st.ImportSummary, err
}
