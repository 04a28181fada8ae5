package store

import "time"

// Retention says how long the warehouse keeps each kind of record; zero keeps
// it for ever. Restore history is the product's memory (it outlives msdb's
// purge), so it is kept by default; collector runs and in-flight curves are
// operational detail that grows with every pass.
type Retention struct {
	Restores time.Duration // raw history rows and log restores, and so their restores
	Runs     time.Duration // collector run records
	Inflight time.Duration // progress curves of restores seen in flight
}

// PruneStats counts what Prune removed.
type PruneStats struct {
	History, LogRestores, Runs, Inflight int64
}
