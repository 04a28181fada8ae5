package store

// The fleet's restores in memory, for the list's pages and the overview.

import "time"

// Fleetwide reports whether f asks for a list the fleet's in-memory orders
// answer (FleetOrders' Page): any order of the list's own (time, duration,
// throughput) filtered by anything but an instance or a list of ids.
func (f RestoreFilter) Fleetwide() bool {
	return (f.Sort == "at" || f.Sort == "duration" || f.Sort == "throughput") && f.Instance == "" && len(f.IDs) == 0
}

// FleetOrders is the fleet's restores in memory, in order of time and of
// each measure: what the dashboard's pages ask of them (RestoreOrders is
// the one there is).
type FleetOrders interface {
	OrderedPages
	// Databases returns the database names of the fleet's restores, not
	// to be modified.
	Databases() []string
	// Measured returns the ids of the newest restores matching f (at most
	// f.Limit; 0: all) whose throughput is known, newest first; f is
	// Fleetwide.
	Measured(f RestoreFilter) []int64
	// Span returns the times of the oldest and the newest restore.
	Span() (first, last time.Time)
	// Count counts the restores that finished in [from, to).
	Count(from, to time.Time) int64
	// Throughputs returns the logical MiB/s of the restores of one kind
	// that finished in [from, to), oldest first, where known and positive.
	Throughputs(kind Kind, from, to time.Time) []TimeValue
	// OrdersSeq is the position in the restore change log the orders
	// reflect, and Scanned whether they were read from every restore (not
	// updated, nor loaded from what a previous run kept): what a server
	// keeps for its next start and when.
	OrdersSeq() int64
	Scanned() bool
}
