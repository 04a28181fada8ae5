// Package ingest turns offline files into warehouse records: it opens a file,
// hands it to the parser of its kind (errorlog, history CSV, captured
// messages) with a store import as the sink, and reports what happened.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/restorewatch/restorewatch/ingest/csv"
	"github.com/restorewatch/restorewatch/ingest/errorlog"
	"github.com/restorewatch/restorewatch/ingest/messages"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
)

// Kind is the kind of an offline file.
type Kind string

// The offline file kinds of SPEC §3.2.
const (
	ErrorLog Kind = "errorlog"
	History  Kind = "history"
	Messages Kind = "messages"
)

// ParseKind validates a kind given on the command line or in a form.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(s); k {
	case ErrorLog, History, Messages:
		return k, nil
	}
	return "", store.Errorf(store.EINVALID, "unknown import kind %q: want errorlog, history or messages", s)
}

// Options fill in what a file itself does not say.
type Options struct {
	Instance string    // --instance
	Database string    // --database (messages)
	At       time.Time // --at (messages)
	// Progress, when set, is called with the bytes read so far and the file size.
	Progress func(done, total int64)
	// Analysis configures the regression engine run after the import.
	Analysis analysis.Options
}

// ImportFile imports one file. A file that cannot be opened or read to its end
// is an error; bad lines inside it are rejects in the summary.
func ImportFile(ctx context.Context, db *store.DB, kind Kind, path string, opt Options) (store.ImportSummary, error) {
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

// Import imports one stream named name (for messages and rejects).
func Import(ctx context.Context, db *store.DB, kind Kind, name string, r io.Reader, size int64, opt Options) (store.ImportSummary, error) {
	im, err := db.NewImport(ctx, string(kind), name)
	if err != nil {
		return store.ImportSummary{Source: string(kind), File: name}, err
	}
	var progress func(int64)
	if opt.Progress != nil {
		progress = func(n int64) { opt.Progress(n, size) }
	}
	var perr error
	switch kind {
	case ErrorLog:
		_, perr = errorlog.Parse(ctx, r, errorlog.Options{File: name, Instance: opt.Instance, Progress: progress}, im)
	case History:
		_, perr = csv.Parse(ctx, r, csv.Options{File: name, Instance: opt.Instance, Progress: progress}, im)
	case Messages:
		_, perr = messages.Parse(ctx, r, messages.Options{File: name, Instance: opt.Instance, Database: opt.Database, At: opt.At}, im)
	default:
		perr = store.Errorf(store.EINVALID, "unknown import kind %q", kind)
	}
	sum, cerr := im.Close()
	if cerr == nil && len(sum.InstanceIDs) > 0 {
		// Findings follow the facts: judge again the series this file touched.
		_, cerr = analysis.Run(ctx, db, sum.InstanceIDs, opt.Analysis)
	}
	if perr != nil {
		return sum, fmt.Errorf("%s: %w", name, perr)
	}
	return sum, cerr
}
