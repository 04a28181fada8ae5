package store

import "time"

// The other facts a restore plan reads: the measured restores its expected
// durations rest on, the instance's tags (its RTO target) and the folders
// its databases' files live in.

// RestoreRate is one measured restore as a plan's duration estimate uses
// it: its series (instance, database, kind), device kind, throughput,
// buffer settings, size and duration.
type RestoreRate struct {
	ID             int64
	Instance       string
	Database       string
	Kind           Kind
	DeviceKind     string
	LogicalMiBps   float64
	ReadMiBps      float64 // 0 = unknown
	BufferCount    int64   // 0 = unknown
	MaxTransferKiB int64   // 0 = unknown
	Bytes          int64   // logical backup size; 0 = unknown
	DurationS      float64 // 0 = unknown
	At             time.Time
}
