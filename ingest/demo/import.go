package demo

import (
	"context"
	"fmt"
	"sort"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/store"
)

// Summary totals the import of a fleet.
type Summary struct {
	Files      int
	Read       int64 // records the parsers handed in
	Added      int64
	Duplicates int64
	Rejects    []store.Reject
}

// Import imports every file of the fleet with ingest.ImportFile, as
// `restorewatch import` would, calling progress after each file. Error logs
// go first and the history CSV last: every import reconciles the instances
// it touched, and matching history rows to log lines is the expensive part,
// so it is done once, with everything present, instead of once per error-log
// file. The result does not depend on the order (the warehouse reconciles
// from raw facts).
func Import(ctx context.Context, db *store.DB, f Fleet, progress func(done, total int)) (Summary, error) {
	files := append([]File(nil), f.Files...)
	rank := map[ingest.Kind]int{ingest.ErrorLog: 0, ingest.Messages: 1, ingest.History: 2}
	sort.SliceStable(files, func(i, j int) bool { return rank[files[i].Kind] < rank[files[j].Kind] })
	var sum Summary
	for i, file := range files {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		var opt ingest.Options
		if file.Kind == ingest.Messages {
			opt.Instance = file.Instance // client output never names its server
		}
		s, err := ingest.ImportFile(ctx, db, file.Kind, file.Path, opt)
		sum.Files++
		sum.Read += s.Read
		sum.Added += s.Added
		sum.Duplicates += s.Duplicates
		sum.Rejects = append(sum.Rejects, s.Rejects...)
		if err != nil {
			return sum, fmt.Errorf("demo: import %s: %w", file.Path, err)
		}
		if progress != nil {
			progress(i+1, len(files))
		}
	}
	return sum, nil
}
