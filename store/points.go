package store

import "time"

// SeriesPoint is the lean view of a restore the regression engine reads:
// what it needs to judge throughput and known-issue conditions. It holds no
// pointers and no factors, so a million of them are a small block the
// garbage collector does not scan; the factors of the few series that show
// a change are read afterwards with RestoreFactors.
type SeriesPoint struct {
	RestoreID int64
	AtMs      int64   // UTC milliseconds
	DurationS float64 // 0 = unknown
	Bytes     int64   // 0 = unknown
	MiBps     float64 // 0 = unknown
	Cond      Conditions
}

// At returns the time of the restore.
func (p SeriesPoint) At() time.Time { return UnixMs(p.AtMs) }

// Conditions are the properties of a restore that known issues are keyed on.
type Conditions uint8

// The conditions of a restore.
const (
	CondCompressed Conditions = 1 << iota // the backup is compressed
	CondEncrypted                         // the backup is encrypted
	CondAlign4K                           // the device reported a 4096-byte I/O alignment
	CondVirtual                           // a virtual device (VDI) was the source
	CondStriped                           // more than one stripe
)

// SeriesRestores is one series' restores in time order.
type SeriesRestores struct {
	InstanceID int64
	Instance   string
	Database   string
	Kind       Kind
	Build      string // the latest instance build known in the series
	Family     string // the family of the latest restore
	Points     []SeriesPoint
}
