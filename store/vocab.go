package store

import (
	"database/sql"
	"strings"
	"time"
)

// BufferConfig is the trace-flag 3213 "Backup/Restore buffer configuration
// parameters" block. Sizes are in KiB; zero means the label was absent.
type BufferConfig struct {
	MemoryLimitMB    int64
	BufferCount      int64
	SetsOfBuffers    int64
	MaxTransferKiB   int64
	MinMaxTransfer   int64
	TotalBufferKiB   int64
	TabularDevices   int64
	IOAlignment      int64 // "Filesystem i/o alignment": 512 or 4096
	MediaBufferCount int64
	MediaBufferKiB   int64
	EncodeBuffers    int64
}

// Source names the reader a record came from. The warehouse stores it
// with each record and compares it in the duplicate check and in
// derivation; readers name theirs with these constants (an untyped
// constant of the same text, as some readers declare, is the same source).
type Source string

// The sources of records.
const (
	// SourceErrorLog is an ERRORLOG file; SourceLiveErrorLog the same log
	// read from a server (xp_readerrorlog): one log, so one duplicate
	// check.
	SourceErrorLog     Source = "errorlog"
	SourceLiveErrorLog Source = "live-errorlog"
	// SourceHistory is a restore history export (CSV); SourceLive what the
	// collector reads from msdb and the server itself.
	SourceHistory Source = "history"
	SourceLive    Source = "live"
	// SourceMessages is captured client output (SSMS, sqlcmd); SourceAgent
	// an Agent job step's output, timed by the step.
	SourceMessages Source = "messages"
	SourceAgent    Source = "agent"
	// SourceDbatools is a Restore-DbaDatabase export: restores timed by
	// dbatools, placed by their history rows.
	SourceDbatools Source = "dbatools"
	// SourceBackups is a backup history export.
	SourceBackups Source = "backups"
)

// ErrorLog reports whether s reads an instance's error log.
func (s Source) ErrorLog() bool { return s == SourceErrorLog || s == SourceLiveErrorLog }

// Kind is the kind of restore.
type Kind string

// The restore kinds of SPEC §6.1; KindVerify rows are kept apart.
const (
	KindFull   Kind = "full"
	KindDiff   Kind = "diff"
	KindLog    Kind = "log"
	KindFile   Kind = "file"
	KindPage   Kind = "page"
	KindVerify Kind = "verify"
	KindRevert Kind = "revert"
	// KindFullOrDiff is a RESTORE DATABASE whose text says no more than
	// that ("RESTORE DATABASE successfully processed ..."): a full or a
	// differential restore. A history row, when one pairs with it, says
	// which; until then it is kept as what is known, not guessed full.
	KindFullOrDiff Kind = "full_or_diff"
)

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool {
	switch k {
	case KindFull, KindDiff, KindLog, KindFile, KindPage, KindVerify, KindRevert, KindFullOrDiff:
		return true
	}
	return false
}

// KindOfRestoreType maps restorehistory.restore_type to a Kind.
func KindOfRestoreType(t string) (Kind, bool) {
	switch strings.ToUpper(strings.TrimSpace(t)) {
	case "D":
		return KindFull, true
	case "I":
		return KindDiff, true
	case "L":
		return KindLog, true
	case "F", "G":
		return KindFile, true
	case "P":
		return KindPage, true
	case "V":
		return KindVerify, true
	case "R":
		return KindRevert, true
	}
	return "", false
}

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
	// ThroughputRecomputed: the size over DurationS, because the 3014
	// line's MB/sec disagreed with its own pages and seconds beyond the
	// rounding of both (EngineRateAgrees); EngineMBps keeps what it said.
	ThroughputRecomputed = "recomputed_engine_mbps_disagreed"
)

// EngineRateAgrees reports whether a 3014 line's MB/sec can be what its
// pages and seconds give. The engine divides pages × 8 KiB (its MB is
// 1,048,576 bytes) by a finer clock than the seconds it prints, and prints
// both with three decimals, so the stated rate must lie within what seconds
// ± 0.001 give; under a millisecond any rate above the lower bound fits.
// The bounds are widened by rateSlack: on statements of a few pages the
// engine's own figures differ by more than rounding ("2 pages in 0.012
// seconds (1.057 MB/sec)", 23 % below), while a pasted typo is off by a
// factor of ten or a thousand.
func EngineRateAgrees(pages int64, seconds, mbps float64) bool {
	if pages <= 0 || seconds < 0 || mbps < 0 {
		return true // nothing to check against
	}
	mb := float64(pages) * 8192 / (1 << 20) // the engine's MB is a MiB
	const tick = 0.001
	if mbps < mb/(seconds+tick)/rateSlack-tick {
		return false
	}
	return seconds <= tick || mbps <= mb/(seconds-tick)*rateSlack+tick
}

// rateSlack is how far beyond rounding a stated rate may stray.
const rateSlack = 1.5

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

// DeviceKindOf classifies a backup's devices: a local path, a UNC share, a URL
// (backup to Azure Storage or S3), a virtual device (third-party VDI tools) or
// tape. logType is the error log's TYPE=; msdbType is device_type.
func DeviceKindOf(devices []string, logType string, msdbType sql.NullInt64) string {
	switch strings.ToUpper(logType) {
	case "VIRTUAL_DEVICE":
		return DeviceVirtual
	case "URL":
		return DeviceURL
	case "TAPE":
		return DeviceTape
	}
	if msdbType.Valid {
		switch msdbType.Int64 {
		case 7:
			return DeviceVirtual
		case 9:
			return DeviceURL
		case 5:
			return DeviceTape
		}
	}
	for _, d := range devices {
		ld := strings.ToLower(strings.TrimSpace(d))
		switch {
		case strings.HasPrefix(ld, "http://"), strings.HasPrefix(ld, "https://"), strings.HasPrefix(ld, "s3://"):
			return DeviceURL
		case strings.HasPrefix(ld, `\\`), strings.HasPrefix(ld, "//"):
			return DeviceUNC
		}
	}
	if len(devices) == 0 {
		return ""
	}
	for _, d := range devices {
		if isGUIDLike(strings.TrimSpace(d)) {
			return DeviceVirtual // VDI devices are named by a GUID
		}
	}
	return DeviceLocal
}

func isGUIDLike(s string) bool {
	s = strings.Trim(s, "{}")
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
		} else if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}
