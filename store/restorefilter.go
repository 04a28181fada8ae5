package store

import (
	"strings"
	"time"
)

// RestoreFilter selects restores. Zero fields match everything. It has one
// meaning wherever it is answered: DB.Restores applies it in SQL (cond) or,
// for the fleet-wide pages, over RestoreOrders in memory (match), and
// TestRestoreFilterOneMeaning holds the two equal.
type RestoreFilter struct {
	Instance string
	Database string
	Kind     Kind
	From, To time.Time // on the restore's time (UTC): From <= at < To
	// Build is an instance build or a prefix of one in whole components:
	// "15.0.4153" matches 15.0.4153.1 and 15.0.4153.10, "15.0.4153.1" only
	// 15.0.4153.1 (see BuildMatches).
	Build  string
	Source string // source server
	IDs    []int64
	// Sort is the list's order: "at" (the default, newest first),
	// "duration" or "throughput" (the restores whose measure is known),
	// "instance", "database"; Asc reverses it. Limit and Offset page it.
	Sort   string
	Asc    bool
	Limit  int
	Offset int
}

// Normal returns f with its names in the warehouse's form (as Import
// stores them) and its build without surrounding space or a trailing dot.
func (f RestoreFilter) Normal() RestoreFilter {
	if f.Instance != "" {
		f.Instance = InstanceName(f.Instance)
	}
	if f.Database != "" {
		f.Database = DatabaseName(f.Database)
	}
	if f.Source != "" {
		f.Source = InstanceName(f.Source)
	}
	f.Build = strings.TrimRight(strings.TrimSpace(f.Build), ".")
	return f
}

// BuildMatches reports whether the instance build b is the build prefix p
// or lies under it: p is b, or b continues p with a dot. The engines' SQL
// range [p+".", p+"/") is the same test ('/' follows '.').
func BuildMatches(b, p string) bool {
	return b == p || len(b) > len(p) && b[len(p)] == '.' && b[:len(p)] == p
}
