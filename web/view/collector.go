package view

import (
	"strconv"
	"time"

	"github.com/restorewatch/restorewatch/web/chart"
)

// Collector is the collector page: the last run of every instance, or the
// recent runs of one instance when Instance is set.
type Collector struct {
	// Instance is the instance whose history is shown; "" for the fleet.
	Instance    string
	InstanceURL string
	Summary     string // "4 instances: 2 ok, 1 failing, 1 partial"
	Interval    string // the pass interval freshness is judged against
	Rows        []RunRow
	// Paging pages the fleet's latest runs (empty for one instance's).
	Paging Paging
	Empty  bool // no collector has ever recorded a run
	// Insecure says which instances' latest runs logged in unprotected
	// (encrypt = "false"/"disable", trust_server_certificate); "" if none.
	Insecure string
}

// RunRow is one collector run.
type RunRow struct {
	Instance    string
	InstanceURL string // the instance's page
	HistoryURL  string // its recent runs on this page
	Status      string // store.Run* code, shown by RunBadge
	Started     string
	Duration    string // "running" while the pass runs
	Rows        []SourceCount
	Errors      []SourceError
	Notes       []string
	Warnings    []string // why the login was unprotected, shown before the notes
	Freshness   string   // "3 min ago"
	Stale       bool     // older than twice the pass interval
}

// SourceCount is the rows one source read in a run.
type SourceCount struct {
	Source, Count string
}

// SourceError is why one source failed in a run; the collector removed
// secrets from Text, the page still escapes it.
type SourceError struct {
	Source, Text string
}

// Live is the page of restores in flight and recently finished.
type Live struct {
	Window   string // "24 h"
	Refresh  string // "15 s"
	Running  []LiveRestore
	Finished []LiveRestore
	// Empty explains why there is nothing to show, when there is nothing.
	Empty string
	// CollectorSeen says that some collector has run, so the empty state
	// does not ask to start one.
	CollectorSeen bool
}

// LiveRestore is one restore seen in flight, with its progress curve.
type LiveRestore struct {
	Instance, InstanceURL string
	Database, DatabaseURL string
	Command               string
	Started               string // instance local wall clock
	Percent               string
	Completion            string // estimated completion, UTC; or when it was last seen
	WaitType              string
	Elapsed               string
	LastSample            string // "2 min ago"
	Quiet                 bool   // in flight but not sampled lately: is the collector running?
	Finished              bool
	Knee                  string // "slowed after 55 %: 1.7 GiB/s → 175 MiB/s"; "" when none
	// KneeFinding is the knee with its known issues and checks, nil when
	// the restore did not slow.
	KneeFinding *KneeRow
	Size        string // the backup's size and where it was read
	// RestoreURL is the warehouse's restore the run became, "" while none.
	RestoreURL string
	Curve      chart.Line
}

// Ago says how long ago something happened in words a glance takes in:
// "just now", "3 min ago", "1 h 59 min ago", "20 h ago", "2 days ago". A negative age (clocks
// apart) is "just now".
func Ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " min ago"
	case d < 10*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return strconv.Itoa(h) + " h ago"
		}
		return strconv.Itoa(h) + " h " + strconv.Itoa(m) + " min ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + " h ago"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + " days ago"
}
