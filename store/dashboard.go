package store

import "time"

// Totals are the warehouse's headline counts. The time range of the
// restores comes from RestoreOrders.Span: no index orders the fleet by time.
type Totals struct {
	Restores, Instances, Series int64
	LastImport                  time.Time // zero when nothing was imported
}

// TimeValue is one measured value at one moment.
type TimeValue struct {
	At    time.Time
	Value float64
}

// RTOCandidate is what a restore of one database today would read: its
// latest full, the differential after it and the logs after both, with the
// recent throughput of its full restores and the instance's tags (where an
// "rto" target may be set).
type RTOCandidate struct {
	Instance, Database  string
	Tags                map[string]string
	FullBytes           int64
	DiffBytes, LogBytes int64
	MiBps               float64 // recent median logical throughput of the full restores; 0 = unknown
	LastFull            time.Time
}
