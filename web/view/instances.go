package view

import "github.com/restorewatch/restorewatch/web/chart"

// Instances is the instance list, one page of it.
type Instances struct {
	Empty  bool
	Query  string // the name filter as typed
	Rows   []InstanceRow
	Paging Paging
}

// InstanceRow is one instance in the list.
type InstanceRow struct {
	Name, URL, Build, Release        string
	Databases, Restores, LastRestore string
	OpenRegressions                  int
	Semantics, Target                string
}

// Instance is one instance's page.
type Instance struct {
	Name, RestoresURL string
	Host              []KV
	HostSource        string
	Semantics         string
	Target            string
	Builds            []BuildChange
	Chart             chart.TimeScatter
	HasChart          bool
	Databases         []DatabaseRow
	Backups           []BackupRow
	Regressions       []RegressionRow
	Issues            []IssueRef
	// Knees are its restores that slowed sharply part-way.
	Knees []KneeRow
}

// BackupRow is one database of an instance's backup history: its newest
// backups of each type (UTC, Unknown when none) and its restore plan.
type BackupRow struct {
	Database, PlanURL           string
	LastFull, LastDiff, LastLog string
}

// BuildChange is one entry of an instance's build history.
type BuildChange struct {
	Since, Version, Release, Source string
}

// DatabaseRow is one series of an instance or database.
type DatabaseRow struct {
	Database, URL, Kind  string
	N, Baseline, Current string
	Last, Verdict, Note  string
	RegressionURL        string
	// Watch is the series' open watch in words (human.WatchLine), and
	// WatchURL the restore that opened it; "" when not watched.
	Watch, WatchURL string
}

// Database is one database's page on one instance, for one restore kind.
type Database struct {
	Instance, InstanceURL, Database string
	Kind                            string
	Kinds                           []Tab
	Series                          DatabaseRow
	RegressionURL                   string
	Throughput, Duration, Size      chart.TimeScatter
	Buffers                         []BufferRow
	Rows                            []RestoreRow
	AllURL, RowsShown               string
	Shown                           string
	// Knees are its restores that slowed sharply part-way; Progress the
	// progress curves the collector kept of its restores, newest first.
	Knees    []KneeRow
	Progress []LiveRestore
	// InFlightOnly says the warehouse knows the database only from
	// restores seen in flight: no restore of it has completed yet.
	InFlightOnly bool
}

// BufferRow is one stretch of restores that ran with the same buffer
// settings, so a lost BUFFERCOUNT tuning shows as a new row.
type BufferRow struct {
	From, To, FirstURL, LastURL         string
	BufferCount, MaxTransfer, Alignment string
	N, Throughput                       string // restores, their median MiB/s
}
