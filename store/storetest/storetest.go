// Package storetest holds what tests across the project need of a
// warehouse and the program never does: a fresh warehouse in the test's
// temporary folder, closed when the test ends, and the reads of restores
// that only tests make (a counted page, every match streamed), each a
// plain query of DB.Restores so a test reads what a page reads.
package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

// Open creates an empty warehouse in tb's temporary folder.
func Open(tb testing.TB) *sqlite.DB {
	tb.Helper()
	return OpenAt(tb, filepath.Join(tb.TempDir(), "warehouse.db"))
}

// OpenAt opens (creating if need be) the warehouse at path and closes it
// when the test ends.
func OpenAt(tb testing.TB, path string) *sqlite.DB {
	tb.Helper()
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// PageRestores returns one page of the restores matching f and how many
// match, counted up to countCap (0: all), and whether that count is whole.
func PageRestores(ctx context.Context, db store.Pages, f store.RestoreFilter, countCap int) ([]store.Restore, int, bool, error) {
	p, err := db.Restores(ctx, store.RestoreQuery{Filter: f, CountCap: countCap})
	return p.Restores, p.Total, p.Exact, err
}

// EachRestore calls fn for every restore matching f in series order,
// streamed.
func EachRestore(ctx context.Context, db store.Pages, f store.RestoreFilter, fn func(*store.Restore) error) error {
	_, err := db.Restores(ctx, store.RestoreQuery{Filter: f, Series: true, Each: fn})
	return err
}

// ImportBackupSets imports sets the way every source hands them in (one
// import from file, through its Sink) and returns the import's summary.
func ImportBackupSets(ctx context.Context, db store.ImportSink, file string, sets []store.BackupSet) (store.ImportSummary, error) {
	im, err := db.NewImport(ctx, "test", file)
	if err != nil {
		return store.ImportSummary{}, err
	}
	for _, b := range sets {
		if err := im.BackupSet(b); err != nil {
			return store.ImportSummary{}, err
		}
	}
	return im.Commit()
}

// BackupSets imports sets (ImportBackupSets) and returns how many were
// new; a set the import rejected is an EINVALID error naming it.
func BackupSets(ctx context.Context, db store.ImportSink, sets []store.BackupSet) (int64, error) {
	sum, err := ImportBackupSets(ctx, db, "backups", sets)
	if err == nil && len(sum.Rejects) > 0 {
		err = store.Errorf(store.EINVALID, "%d backup sets rejected, the first %s", len(sum.Rejects), sum.Rejects[0])
	}
	return sum.Added, err
}
