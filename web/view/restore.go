package view

// RestoreDetail is everything known about one restore, grouped the way a
// DBA reads it, with the evidence each figure came from.
type RestoreDetail struct {
	Title                       string
	Instance, InstanceURL       string
	Database, DatabaseURL, Kind string
	SeriesURL                   string
	Summary                     string
	Groups                      []KVGroup
	Devices                     []string
	Destinations                []string // files the restore wrote (restorefile)
	Buffer                      []KV
	Phases                      []KV
	Evidence                    []KVGroup
	// Progress is the restore's progress curve when a collector watched it
	// run (with its knee, when it slowed), else nil.
	Progress *LiveRestore
	// Findings are the regressions this restore ran after, each with the
	// known issues that match it (issue 30: a slow restore's page links
	// its regression and known issue).
	Findings []RestoreFinding
}

// RestoreFinding is a regression a restore belongs to: the sentence, its
// evidence page and its known issues.
type RestoreFinding struct {
	Text, URL string
	Issues    []Link
}

// KVGroup is a titled list of facts.
type KVGroup struct {
	Title string
	Rows  []KV
}

// KV is one fact; Mono sets it in a fixed-width face (paths, LSNs, builds).
type KV struct {
	Key, Value string
	Mono       bool
}
