package store

// The lean restore views charts and cohorts read.

import "time"

// RelativeSpeed is one restore's throughput and its speed relative to the
// baseline of its own series (Rel 0 when the series has no baseline).
type RelativeSpeed struct {
	At                         time.Time
	InstanceBuild, SourceBuild string
	MiBps, Rel                 float64
	DurationS                  float64 // 0 = unknown
}

// ChartPoint is the lean view of a restore that a chart draws: its
// measures, and the buffer settings a database page groups restores by.
type ChartPoint struct {
	ID                                       int64
	At                                       time.Time
	Database                                 string
	Kind                                     Kind
	MiBps, DurationS                         *float64
	BackupBytes                              *int64
	BufferCount, MaxTransferKiB, IOAlignment *int64
}
