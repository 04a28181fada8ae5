package main

import (
	"runtime/debug"
)

// Commit names the commit a build came from when the build info has none
// (a build from a source archive): -ldflags "-X main.Commit=…".
var Commit = ""

// commit says which commit the binary was built from: Go's VCS stamp
// (vcs.revision, and "+modified" for a tree with uncommitted changes), else
// Commit, else "commit unknown".
func commit() string {
	rev, modified, when := Commit, false, ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			case "vcs.time":
				when = s.Value
			}
		}
	}
	if rev == "" {
		return "commit unknown"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	out := "commit " + rev
	if modified {
		out += "+modified"
	}
	if when != "" {
		out += " of " + when
	}
	return out
}
