package store

import "time"

// Instances and their host history, for the dashboard.

// InstanceSummary is one instance as the instance list shows it.
type InstanceSummary struct {
	ID                   int64             `json:"-"`
	Name                 string            `json:"name"`
	Build                string            `json:"build"` // latest known; "" when no source stated one
	Tags                 map[string]string `json:"tags"`
	RestoreDateSemantics string            `json:"restore_date_semantics"`
	SemanticsSamples     int               `json:"semantics_samples"`
	Databases            int               `json:"databases"`
	Restores             int               `json:"restores"`
	Regressed            int               `json:"regressed_series"`
	OpenRegressions      int               `json:"open_regressions"`
	LastRestore          *time.Time        `json:"last_restore"`
}

// HostRecord is one stored host snapshot: what one source said about the
// instance's engine and host at one moment.
type HostRecord struct {
	ObservedLocal                          time.Time
	UTCOffset                              *int64
	Source, Origin                         string
	Version, Level, UpdateLevel, UpdateRef string
	Edition, OS, Manufacturer, Model       string
	Hypervisor, IFI                        *bool
	Sockets, Cores, MemoryMB               *int64
	TraceFlags                             []int
	Modules                                []string
	Extra                                  map[string]string
}
