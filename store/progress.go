package store

// Progress is how far a long warehouse operation has come: the phase it is
// in ("deriving restores", "building indexes", "analysing"), how many of its
// steps are done, out of how many.
type Progress struct {
	Phase       string
	Done, Total int
}

// Phases of Progress.
const (
	PhaseDerive    = "deriving restores"
	PhaseIndexes   = "building indexes"
	PhaseAnalysing = "analysing"
)

// progressFunc is what SetProgress installed; a pointer so it can be swapped
// while a reconciliation runs.
type progressFunc = func(Progress)

// SetProgress has fn called as reconciliation and analysis move on (nil:
// no reports), so that a terminal can show what a large import is doing
// after its file is read. fn may be called from several goroutines at once.
func (db *DB) SetProgress(fn func(Progress)) {
	if fn == nil {
		db.progress.Store(nil)
		return
	}
	db.progress.Store(&fn)
}

// Report hands p to the function SetProgress installed, if any.
func (db *DB) Report(p Progress) {
	if fn := db.progress.Load(); fn != nil {
		(*fn)(p)
	}
}
