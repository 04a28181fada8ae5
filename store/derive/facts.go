package derive

import (
	"database/sql"

	"github.com/restorewatch/restorewatch/store"
)

// Facts are one instance's raw records, as the warehouse stored them:
// derivation's whole input. Times are the instance's local wall clock in
// Unix milliseconds (the *_local convention of the warehouse).
type Facts struct {
	// DefaultOffset is the UTC offset (minutes) the user set for the
	// instance, for times no source states an offset for.
	DefaultOffset *int
	History       []History // in restore time order
	Logs          []Log     // in completion time order, untimed last
	Hosts         []Host    // in observation order
	// Semantics, when set, is the restore_date semantics to build with
	// instead of the one these facts vote for: a window of an instance's
	// facts (see the warehouse's windowed derivation) is built with the
	// whole instance's.
	Semantics string
	// Components asks for each restore's component (Derived.CompFrom …):
	// what a window of an instance's facts needs to know it holds every
	// fact its restores depend on.
	Components bool
	// ReadFrom and NewFrom are, with Components, the local time from which
	// the facts were read (an older fact may exist, unread) and the time
	// before which every fact was there when the instance was last derived
	// (see settledPairs).
	ReadFrom, NewFrom int64
}

// History is one msdb restorehistory row: its warehouse id, msdb's
// restore_history_id (negative: a synthetic one, see store's historyKey)
// and restore_date.
type History struct {
	ID, HID      int64
	RestoreLocal int64
	HistoryFacts
}

// HistoryFacts are what a history row's source stated; NULL (invalid) or
// empty where it said nothing.
type HistoryFacts struct {
	DB, User, RestoreType, UUID, Family, SourceServer, SourceMachine, SourceDB, BackupType string
	FirstLSN, LastLSN, KeyAlgorithm                                                        string
	Source                                                                                 store.Source
	Replace, Recovery, CopyOnly, Checksums                                                 sql.NullBool
	StopAt, DeviceCount, BackupStart, BackupFinish                                         sql.NullInt64
	BackupSize, Compressed, Major, Minor, Build                                            sql.NullInt64
	MediaFamilies, DeviceType                                                              sql.NullInt64
	Devices, Destinations                                                                  []string
}

// Log is one log record of a restore: an error-log completion, client
// output, an Agent step or a Restore-DbaDatabase row.
type Log struct {
	ID                            int64
	Source                        store.Source
	DB                            string
	Kind                          store.Kind
	MessageID                     int
	Completed, Offset             sql.NullInt64
	FirstLSN, LastLSN, DeviceType string
	DeviceCount                   sql.NullInt64
	Devices                       []string
	Has3014                       bool
	Pages                         sql.NullInt64
	Seconds, MBps, UpperBound     sql.NullFloat64
	Buffer                        *store.BufferConfig
	// LSNRowsRead, in a window (Facts.Components), says that no history
	// row before the facts read states this line's LSNs: a row it could
	// pair with by them is among the facts read, so it reaches back only
	// as far as a line without LSNs (lineReach). The warehouse learns it
	// with one query instead of reading the 72 h before the line.
	LSNRowsRead bool
}

// Host is one snapshot of the instance's host and engine.
type Host struct {
	Observed            int64
	Offset              sql.NullInt64
	Version             string
	IFI                 sql.NullBool
	Cores, Memory       sql.NullInt64
	TraceFlags, Modules string // JSON lists
}
