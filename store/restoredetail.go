package store

// A restore's evidence: the raw facts it was derived from.

import "time"

// RestoreDetail is one restore with the raw facts it was derived from, so its
// page can cite every piece of evidence.
type RestoreDetail struct {
	Restore
	// Local wall-clock readings of the instance, as its sources printed them.
	StartedLocal, FinishedLocal, RestoreDateLocal *time.Time
	History                                       *HistoryFact
	Logs                                          []LogFact // the completion line first, then client output
}

// HistoryFact is the msdb restorehistory row behind a restore.
type HistoryFact struct {
	RestoreHistoryID                               int64
	RestoreDate                                    time.Time // local
	UserName, RestoreType, BackupType              string
	SourceMachine, FirstLSN, LastLSN, KeyAlgorithm string
	BackupStart, BackupFinish                      *time.Time // local, on the source server's clock
	Source, Origin                                 string
}

// LogFact is an error-log or client-output record behind a restore.
type LogFact struct {
	Source, Origin, Statement, DeviceType string
	MessageID                             int
	Completed                             *time.Time // local
	UTCOffset                             *int64     // minutes
	Has3014                               bool
	Pages                                 *int64
	Seconds, MBps, UpperBoundS            *float64
	Buffer                                *BufferConfig
	Phases                                []Phase
	Recovery                              *RecoveryTiming
}
