package store

import "time"

// Restore is one completed RESTORE statement as the warehouse knows it after
// reconciling every source: the history row, the error-log lines and client
// output that describe it. Pointer fields are nil where no source says.
type Restore struct {
	ID             int64      `json:"id"`
	Instance       string     `json:"instance"`
	Database       string     `json:"database"`
	Kind           Kind       `json:"kind"`
	StartedAt      *time.Time `json:"started_at"`
	FinishedAt     *time.Time `json:"finished_at"`
	At             time.Time  `json:"at"`
	OffsetKnown    bool       `json:"offset_known"`
	DurationS      *float64   `json:"duration_s"`
	DurationSource string     `json:"duration_source"`
	BackupBytes    *int64     `json:"backup_bytes"`
	CompressedB    *int64     `json:"compressed_bytes"`
	Pages          *int64     `json:"pages"`
	SizeSource     string     `json:"size_source"`
	LogicalMiBps   *float64   `json:"logical_mibps"`
	ReadMiBps      *float64   `json:"read_mibps"`
	EngineMBps     *float64   `json:"engine_mbps"`
	InstanceBuild  string     `json:"instance_build"`
	SourceServer   string     `json:"source_server"`
	SourceDatabase string     `json:"source_database"`
	SourceBuild    string     `json:"source_build"`
	Family         string     `json:"family"`
	Compressed     *bool      `json:"compressed"`
	Encrypted      *bool      `json:"encrypted"`
	Checksum       *bool      `json:"checksum"`
	CopyOnly       *bool      `json:"copy_only"`
	Devices        []string   `json:"devices"`
	// DestinationFiles are where the restore put the database's files
	// (msdb.dbo.restorefile), empty when no source said.
	DestinationFiles []string `json:"destination_files"`
	DeviceKind       string   `json:"device_kind"`
	Stripes          *int64   `json:"stripes"`
	BufferCount      *int64   `json:"buffer_count"`
	MaxTransferKiB   *int64   `json:"max_transfer_kib"`
	IOAlignment      *int64   `json:"io_alignment"`
	IFI              *bool    `json:"ifi"`
	CPUCount         *int64   `json:"cpu_count"`
	MemoryMB         *int64   `json:"memory_mb"`
	TraceFlags       string   `json:"trace_flags"`
	Modules          string   `json:"modules"`
	UserName         string   `json:"user_name"`
	Sources          string   `json:"sources"`
	// ThroughputSource says what LogicalMiBps and ReadMiBps were computed
	// from: ThroughputDuration or ThroughputEngine; "" when unknown.
	ThroughputSource string `json:"throughput_source"`
}

// Throughput sources.
const (
	// ThroughputDuration: the size over DurationS.
	ThroughputDuration = "duration"
	// ThroughputEngine: the 3014 line's MB/sec (for a size taken from the
	// history row, the size over the seconds that MB/sec implies for the
	// line's pages). The engine computes it from a finer clock than the
	// milliseconds it prints as seconds — "25378 pages in 0.499 seconds
	// (397.318 MB/sec)" implies 0.49901 s — and both are truncated to three
	// decimals, so MB/sec is the more precise whenever it is the larger
	// number: its error, under 0.001/MBps, is then below the seconds',
	// under 0.001/seconds. That is every restore shorter than its own rate
	// (a 2 s restore at 300 MB/sec; not a 2-hour one), where a millisecond
	// is a visible share of the time.
	ThroughputEngine = "engine_mbps"
)

// Duration sources, in order of trust (SPEC §4).
const (
	DurationEngine     = "engine_3014"                // the 3014 line's seconds
	DurationCompletion = "completion_minus_start"     // completion line − restore_date measured to be the start
	DurationDbatools   = "dbatools_file_restore_time" // Restore-DbaDatabase's FileRestoreTime: an upper bound
	DurationAgent      = "agent_step_upper_bound"     // Agent job step duration
	DurationUnknown    = "unknown"
)

// Device kinds derived from the backup's device paths and types.
const (
	DeviceLocal   = "local"
	DeviceUNC     = "unc_share"
	DeviceURL     = "url"
	DeviceVirtual = "virtual_device"
	DeviceTape    = "tape"
)
