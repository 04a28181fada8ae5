package demo

import (
	"context"
	"fmt"
	"time"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
)

// Summary totals the import of a fleet.
type Summary struct {
	Files      int
	Read       int64 // records the parsers handed in
	Added      int64
	Duplicates int64
	Rejects    []store.Reject
}

// Import imports every file of the fleet through the one import pipeline
// (ingest.Loader), as `restorewatch import DIR` would: the files are parsed
// in parallel into the warehouse, then the instances are derived and
// analysed once. progress is called as files complete.
func Import(ctx context.Context, db store.Warehouse, f Fleet, progress func(done, total int)) (Summary, error) {
	return ImportWith(ctx, db, f, analysis.Options{}, progress)
}

// ImportWith is Import with the analysis configured.
func ImportWith(ctx context.Context, db store.Warehouse, f Fleet, aopt analysis.Options, progress func(done, total int)) (Summary, error) {
	files := make([]ingest.File, len(f.Files))
	for i, file := range f.Files {
		files[i] = ingest.File{Path: file.Path, Kind: file.Kind}
		if file.Kind == ingest.Messages {
			files[i].Instance = file.Instance // client output never names its server
		}
	}
	l := ingest.NewLoader(db, ingest.LoaderOptions{Analysis: aopt})
	opt := ingest.FilesOptions{}
	if progress != nil {
		last := 0
		opt.Progress = func(p ingest.FilesProgress) { // serialised by StoreFiles
			if p.FilesDone != last {
				last = p.FilesDone
				progress(p.FilesDone, p.Files)
			}
		}
	}
	run, err := l.StoreFiles(ctx, files, opt)
	sum := Summary{Added: run.Added, Duplicates: run.Duplicates}
	for _, r := range run.Files {
		sum.Files++
		sum.Read += r.Read
		sum.Rejects = append(sum.Rejects, r.Rejects...)
		if r.Err != nil && err == nil {
			err = fmt.Errorf("demo: import %s: %w", r.Path, r.Err)
		}
	}
	if err != nil {
		return sum, err
	}
	if _, err := l.Derive(ctx); err != nil {
		return sum, fmt.Errorf("demo: derive: %w", err)
	}
	if err := recordLive(ctx, db, time.Now().UTC()); err != nil { // live.go
		return sum, fmt.Errorf("demo: collector runs and restores in flight: %w", err)
	}
	return sum, nil
}
