package sqlite

import "github.com/restorewatch/restorewatch/store"

// progressFunc is what SetProgress installed; a pointer so it can be swapped
// while a reconciliation runs.
type progressFunc = func(store.Progress)

// SetProgress has fn called as reconciliation and analysis move on (nil:
// no reports), so that a terminal can show what a large import is doing
// after its file is read. fn may be called from several goroutines at once.
func (db *DB) SetProgress(fn func(store.Progress)) {
	if fn == nil {
		db.progress.Store(nil)
		return
	}
	db.progress.Store(&fn)
}

// Report hands p to the function SetProgress installed, if any.
func (db *DB) Report(p store.Progress) {
	if fn := db.progress.Load(); fn != nil {
		(*fn)(p)
	}
}
