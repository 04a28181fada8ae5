package store

// ImportSummary is what an import reports (SPEC §3.2).
type ImportSummary struct {
	Source     string
	File       string
	Read       int64 // records handed in (restores, history rows, snapshots)
	Added      int64
	Duplicates int64
	Rejects    []Reject
	Instances  []string
	// InstanceIDs are the instances whose facts changed, for the analysis
	// that follows an import.
	InstanceIDs []int64
	// Untimed is how many log records of these instances are kept without
	// a restore because nothing dates them (DB.Untimed says which and how to
	// date them). CommitAndReconcile fills it, after deriving; Commit cannot know it yet
	// (DB.UntimedIn, after DB.Reconcile).
	Untimed int64
}

// BatchSize is the number of records an Import commits at once.
const BatchSize = 5000
