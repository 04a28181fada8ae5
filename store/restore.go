package store

import (
	"database/sql"

	"github.com/restorewatch/restorewatch/store/derive"
)

// Restore is one completed RESTORE statement as the warehouse knows it after
// reconciling every source (derive.Restore, which derivation makes).
type Restore = derive.Restore

// Throughput sources (derive.Throughput*).
const (
	ThroughputDuration = derive.ThroughputDuration
	ThroughputEngine   = derive.ThroughputEngine
	// ThroughputRecomputed: the 3014 line's MB/sec disagreed with its own
	// pages and seconds; the rates are size ÷ duration.
	ThroughputRecomputed = derive.ThroughputRecomputed
)

// Duration sources, in order of trust (SPEC §4; derive.Duration*).
const (
	DurationEngine     = derive.DurationEngine
	DurationCompletion = derive.DurationCompletion
	DurationDbatools   = derive.DurationDbatools
	DurationAgent      = derive.DurationAgent
	DurationUnknown    = derive.DurationUnknown
)

// Device kinds derived from the backup's device paths and types
// (derive.Device*).
const (
	DeviceLocal   = derive.DeviceLocal
	DeviceUNC     = derive.DeviceUNC
	DeviceURL     = derive.DeviceURL
	DeviceVirtual = derive.DeviceVirtual
	DeviceTape    = derive.DeviceTape
)

// DeviceKindOf classifies a backup's devices (derive.DeviceKindOf): logType
// is the error log's TYPE=, msdbType backupmediafamily.device_type.
func DeviceKindOf(devices []string, logType string, msdbType sql.NullInt64) string {
	return derive.DeviceKindOf(devices, logType, msdbType)
}
