package store

import (
	"fmt"
	"strings"
	"time"
)

// The records below are what every source (offline file or live server) hands
// to the warehouse. They carry facts as the source states them: times are the
// instance's local wall-clock readings (stored in a time.Time whose location is
// UTC but whose meaning is "local"), because a source rarely knows the offset.
// The warehouse converts to UTC when it reconciles, from the instance's offset
// timeline, so that the order in which files are imported never matters.

// HistoryRow is one msdb restorehistory row with the backup set it read
// (restorehistory ⟕ backupset ⟕ backupmediaset ⟕ backupmediafamily), as the
// history export query of SPEC §3.3 or the live collector returns it.
type HistoryRow struct {
	Instance         string
	RestoreHistoryID int64
	RestoreDate      time.Time // local wall time; see package comment
	Database         string    // destination_database_name
	UserName         string
	RestoreType      string // D, F, G, I, L, V, R, P (restorehistory.restore_type)
	Replace          *bool
	Recovery         *bool
	StopAt           *time.Time
	DeviceCount      *int64

	BackupSetUUID  string
	FamilyGUID     string
	SourceServer   string
	SourceMachine  string
	SourceDatabase string
	BackupType     string // backupset.type: D, I, L, F, G, P, Q
	BackupStart    *time.Time
	BackupFinish   *time.Time
	FirstLSN       string // msdb numeric(25,0) as canonical decimal text
	LastLSN        string
	BackupSize     *int64
	CompressedSize *int64
	SoftwareMajor  *int64
	SoftwareMinor  *int64
	SoftwareBuild  *int64
	IsCopyOnly     *bool
	HasChecksums   *bool
	KeyAlgorithm   string
	MediaFamilies  *int64 // backupmediaset.media_family_count: stripes
	DeviceType     *int64 // backupmediafamily.device_type
	Devices        []string
	// DestinationFiles are the paths msdb.dbo.restorefile says the restore
	// wrote the database's files to.
	DestinationFiles []string

	Origin Origin
}

// Validate reports whether the row holds the minimum a restore needs.
func (h *HistoryRow) Validate() error {
	switch {
	case strings.TrimSpace(h.Instance) == "":
		return Errorf(EINVALID, "history row: instance is empty")
	case h.RestoreDate.IsZero():
		return Errorf(EINVALID, "history row: restore_date is empty")
	case h.Database == "":
		return Errorf(EINVALID, "history row: destination_database_name is empty")
	}
	if err := firstError(CheckInstant("restore_date", h.RestoreDate), CheckInstantPtr("stop_at", h.StopAt),
		CheckInstantPtr("backup_start_date", h.BackupStart), CheckInstantPtr("backup_finish_date", h.BackupFinish)); err != nil {
		return Errorf(EINVALID, "history row: %s", ErrorMessage(err))
	}
	switch {
	case h.MediaFamilies != nil && (*h.MediaFamilies < 0 || *h.MediaFamilies > MaxMediaFamilies):
		return Errorf(EINVALID, "history row: media_family_count %d, SQL Server's limit is %d", *h.MediaFamilies, MaxMediaFamilies)
	case len(h.Devices) > maxDevices:
		return Errorf(EINVALID, "history row: %d devices, at most %d (%d families, each mirrored up to 4 times)", len(h.Devices), maxDevices, MaxMediaFamilies)
	case len(h.DestinationFiles) > MaxBackupFiles:
		return Errorf(EINVALID, "history row: %d destination files, SQL Server's limit is %d", len(h.DestinationFiles), MaxBackupFiles)
	}
	if h.FirstLSN != "" && !isDigits(h.FirstLSN) {
		return Errorf(EINVALID, "history row: first_lsn %q is not a number", h.FirstLSN)
	}
	if h.LastLSN != "" && !isDigits(h.LastLSN) {
		return Errorf(EINVALID, "history row: last_lsn %q is not a number", h.LastLSN)
	}
	return nil
}

// LogRestore is one completed restore as a log or a client saw it: an
// error-log completion line (18267/18271/18268/18269/18277) with the 3014 line,
// trace-flag 3213 buffer block and 3004 phases that belong to it; or a 3014
// line from captured client output or Agent job history.
type LogRestore struct {
	Instance    string
	Database    string
	Kind        Kind // from the message number, else from the 3014 statement
	MessageID   int  // 18267, 18271, 18268, 18269, 18277; 0 when only a 3014 line was seen
	CompletedAt time.Time
	// UTCOffset is the instance's offset in minutes when the source states it
	// (the error log's "UTC adjustment" line, SSMS's "Completion time" stamp).
	UTCOffset *int

	FirstLSN    string // decimal numeric form
	LastLSN     string
	DeviceCount int
	DeviceType  string // DISK, VIRTUAL_DEVICE, URL, TAPE as the log prints it
	Devices     []string

	Has3014   bool
	Statement string // "RESTORE DATABASE", "RESTORE LOG", ...
	Pages     int64
	Seconds   float64
	MBps      float64

	// UpperBoundS is a duration that bounds the restore from above (an Agent
	// job step's run_duration); 0 when unknown.
	UpperBoundS float64

	Buffer   *BufferConfig
	Phases   []Phase
	Recovery *RecoveryTiming

	Origin Origin
}

// Validate reports whether the restore can be kept.
func (l *LogRestore) Validate() error {
	switch {
	case strings.TrimSpace(l.Instance) == "":
		return Errorf(EINVALID, "log restore: instance is empty")
	case l.Database == "":
		return Errorf(EINVALID, "log restore: database is empty")
	case !l.Kind.Valid():
		return Errorf(EINVALID, "log restore: unknown kind %q", l.Kind)
	case l.Has3014 && (l.Seconds < 0 || l.Pages < 0):
		return Errorf(EINVALID, "log restore: negative pages or seconds")
	case len(l.Devices) > maxDevices:
		return Errorf(EINVALID, "log restore: %d devices, at most %d", len(l.Devices), maxDevices)
	}
	errs := []error{checkOffset("utc offset", l.UTCOffset)}
	if !l.CompletedAt.IsZero() { // a 3014 line of client output may carry no time
		errs = append(errs, CheckInstant("completion time", l.CompletedAt))
	}
	for _, p := range l.Phases {
		if !p.At.IsZero() { // captured output's phases carry no time
			errs = append(errs, CheckInstant("phase time", p.At))
		}
	}
	if err := firstError(errs...); err != nil {
		return Errorf(EINVALID, "log restore: %s", ErrorMessage(err))
	}
	return nil
}

// Phase is one trace-flag 3004/3014 line of a restore, kept raw with its time.
type Phase struct {
	At   time.Time `json:"at"`
	Text string    `json:"text"`
}

// RecoveryTiming is the 3421 "Recovery completed" line of a restored database.
type RecoveryTiming struct {
	Seconds    int64 `json:"seconds"`
	AnalysisMs int64 `json:"analysis_ms"`
	RedoMs     int64 `json:"redo_ms"`
	UndoMs     int64 `json:"undo_ms"`
}

// HostSnapshot is what a source says about an instance's host and engine at
// one moment: an error-log startup (banner and the lines after it) or a live
// snapshot. Unknown fields stay nil/empty.
type HostSnapshot struct {
	Instance   string
	ObservedAt time.Time // local wall time
	UTCOffset  *int      // minutes

	Version      string // four-part engine version
	Level        string // RTM, SP1
	UpdateLevel  string // CU8
	UpdateRef    string // KB4077064
	Edition      string
	OS           string
	Hypervisor   *bool
	Manufacturer string
	Model        string
	Sockets      *int64
	Cores        *int64 // logical processors in use
	MemoryMB     *int64
	IFI          *bool
	TraceFlags   []int
	Modules      []string
	// Extra holds facts without a column of their own (configuration values,
	// volumes, service account), shown on the instance page.
	Extra map[string]string
	// AvailabilityGroups are the availability-group databases the instance
	// holds a replica of, when AGsRead says the collector could read them
	// (a snapshot that could not leaves the recorded membership alone): the
	// warehouse records each, whether or not the replica takes backups,
	// and forgets the instance's memberships it no longer lists.
	AvailabilityGroups []AGMembership `json:",omitempty"`
	AGsRead            bool           `json:",omitempty"`

	Origin Origin
}

// Validate reports whether the snapshot can be kept.
func (h *HostSnapshot) Validate() error {
	if strings.TrimSpace(h.Instance) == "" {
		return Errorf(EINVALID, "host snapshot: instance is empty")
	}
	if h.ObservedAt.IsZero() {
		return Errorf(EINVALID, "host snapshot: time is empty")
	}
	if err := firstError(CheckInstant("time", h.ObservedAt), checkOffset("utc offset", h.UTCOffset)); err != nil {
		return Errorf(EINVALID, "host snapshot: %s", ErrorMessage(err))
	}
	if len(h.Extra) > MaxHostFacts {
		return Errorf(EINVALID, "host snapshot: %d facts, at most %d", len(h.Extra), MaxHostFacts)
	}
	for k, v := range h.Extra {
		if len(k) > maxFactKey || len(v) > maxFactValue {
			return Errorf(EINVALID, "host snapshot: a fact of %d+%d bytes, at most %d+%d", len(k), len(v), maxFactKey, maxFactValue)
		}
	}
	if len(h.TraceFlags) > MaxHostFacts || len(h.Modules) > MaxHostFacts {
		return Errorf(EINVALID, "host snapshot: %d trace flags and %d modules, at most %d each", len(h.TraceFlags), len(h.Modules), MaxHostFacts)
	}
	return nil
}

// Limits of a host snapshot's facts: far above what the collector reads
// (about 40 configuration values, a volume or two, a few trace flags and
// filter drivers), so that no source can make an instance page of
// megabytes.
const (
	MaxHostFacts = 1024
	maxFactKey   = 256
	maxFactValue = 4096
)

// Origin says where a record came from, so a page can cite its evidence.
type Origin struct {
	Source Source
	File   string // file name (base) or instance for live sources
	Line   int
}

// String formats the origin as file:line.
func (o Origin) String() string {
	if o.Line > 0 {
		return fmt.Sprintf("%s:%d", o.File, o.Line)
	}
	return o.File
}

// Reject is an input line the importer could not use.
type Reject struct {
	File   string
	Line   int
	Reason string
}

// String formats the reject as "file:line: reason".
// A reject without a line (a pushed record, which has no file) is
// "file: reason", one without a file the reason alone.
func (r Reject) String() string {
	switch {
	case r.File == "":
		return r.Reason
	case r.Line <= 0:
		return r.File + ": " + r.Reason
	}
	return fmt.Sprintf("%s:%d: %s", r.File, r.Line, r.Reason)
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
