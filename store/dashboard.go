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

// The lean restore views charts and cohorts read.

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

// Aggregate is a dashboard aggregate kept in the warehouse between runs of
// the server (migration 0030): its encoded value, the version it was
// computed at (the server's own text) and how long computing it took.
type Aggregate struct {
	Name, Version string
	Took          time.Duration
	Body          []byte
}

// DeviceBackup is what the backup history says about the backup written to
// some files: a restore seen in flight names only its files, and its size
// and compression come from here.
type DeviceBackup struct {
	Instance       string // whose msdb recorded the backup
	Database       string
	Size           int64 // backup_size; 0 = unknown
	CompressedSize int64 // compressed_backup_size; 0 = unknown
	Families       int   // stripes; 0 = unknown
	// Filestream says the set holds a FILESTREAM or FileTable container
	// (backupfile type S, or F as some exports write it).
	Filestream bool
}
