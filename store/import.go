package store

import "time"

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

// ImportedFile is a file an import read to its end and committed, known by
// a fingerprint of its content and of the options that shaped its records.
type ImportedFile struct {
	Fingerprint string
	Path        string
	Size        int64
	Records     int64 // records the file handed in
	Rejected    int64 // lines it rejected
	ImportedAt  time.Time
}

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

// Retention says how long the warehouse keeps each kind of record; zero keeps
// it for ever. Restore history is the product's memory (it outlives msdb's
// purge), so it is kept by default; collector runs and in-flight curves are
// operational detail that grows with every pass.
//
// Restores is the age beyond which log restores are rolled up per day
// (restore_rollup) and their raw facts deleted (issue 41, SCALE.md
// "Retention and roll-up"). What stays raw whatever its age is the
// evidence: every full, differential, file and page restore; the restores
// of a regression's series its figures were computed over (the BaselineN
// before the change, the CurrentN from it on) and the one it names;
// a watch's restore, the usual ones before it and those after; a series'
// outliers and change points; and the last KeepLast log restores of every
// series, so the next restore is still judged against a full baseline.
// Known issues cite builds, not restores: they pin nothing.
type Retention struct {
	Restores time.Duration // log restores beyond it are rolled up, the evidence kept
	Runs     time.Duration // collector run records
	Inflight time.Duration // progress curves of restores seen in flight
	// KeepLast is how many of a series' newest log restores stay raw
	// whatever their age (0: DefaultKeepLast).
	KeepLast int
}

// DefaultKeepLast is Retention.KeepLast's default: more than the analysis'
// baseline reads.
const DefaultKeepLast = 60

// PruneStats counts what Prune removed, rolled up and kept.
type PruneStats struct {
	History, LogRestores, Runs, Inflight int64
	// RolledUp counts the log restores folded into restore_rollup, Rollups
	// the day rows that took them, Pinned the old log restores kept raw as
	// evidence.
	RolledUp, Rollups, Pinned int64
	// Months counts the months dropped whole (PostgreSQL's partitions,
	// MonthPruner); their facts count in History and LogRestores too.
	Months int64
	// Locked is how long the months' drop held the restore tables'
	// exclusive locks, until its commit: the longest a page waited for it.
	Locked time.Duration
}

// Untimed is a count of log records that reconciliation kept but could place
// nowhere in time, from one source: they are stored, not restores, until an
// import dates them.
type Untimed struct {
	Source    Source `json:"source"`
	Records   int64  `json:"records"`
	Instances int64  `json:"instances"`
}

// Remedy says how to date the records, in the words of the import command.
func (u Untimed) Remedy() string {
	switch u.Source {
	case SourceDbatools:
		return "import the instance's restore history (Get-DbaDbRestoreHistory | Export-Csv or its console output, or the history export), which places each Restore-DbaDatabase row"
	case SourceMessages:
		return "re-import the client output with --at (the time the statements completed)"
	}
	return "import a source that states when the restores completed (the error log or the restore history)"
}
