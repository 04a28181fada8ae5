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

// OrderHeads are the first entries of each order of the restores list (both
// ways of time, duration and throughput) as the fleet's kept orders held
// them, brought up to date with the change log: the first pages of the
// unfiltered list, answered while a server loads the orders themselves
// (each engine's DB.LoadOrderHeads, of store/orders.Heads).
type OrderHeads interface {
	OrderedPages
	// Answers reports whether Page answers f, counted up to countCap,
	// exactly as the fleet's orders do: an unfiltered list (Plain) whose
	// page and count the heads hold.
	Answers(f RestoreFilter, countCap int) bool
}

// Plain reports whether f lists the whole fleet in one of the list's own
// orders, filtered by nothing: what OrderHeads answer.
func (f RestoreFilter) Plain() bool {
	return f.Fleetwide() && f.Database == "" && f.Kind == "" && f.From.IsZero() && f.To.IsZero() && f.Build == "" && f.Source == ""
}
