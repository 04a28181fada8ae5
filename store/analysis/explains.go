package analysis

import (
	"strings"

	"github.com/restorewatch/restorewatch/store"
)

// Explains judges a known issue the analysis matched to a regression's
// slow restores: it explains the change only if something that changed at
// the change point made it apply (a condition that did not hold before and
// does after, or the restoring instance's build or the backup's source
// build outside its affected range before and inside it after); otherwise
// it was present before and after and says nothing about this change. It
// returns the changed factor that made it apply and, for a condition, the
// condition's key ("" for a build); ok is false when none did. The
// evidence page, the report and the regressions list word the answer.
func Explains(ki KnownIssue, changed []store.FactorChange) (f store.FactorChange, condition string, ok bool) {
	for _, f := range changed {
		switch f.Factor {
		case "instance_build", "source_build":
			// A backup written by an affected build is what seed 003 saw:
			// 2008 R2 backups restored at 892 MiB/s on 2016 SP1 CU8 and 4K
			// disks, the same database's 2016 SP1 CU8 backups at 262.
			if len(ki.Affected) > 0 && !affected(ki, f.Before) && affected(ki, f.After) {
				return f, "", true
			}
		default:
			for _, c := range ki.Conditions {
				if cf, ok := conditionFactor[c]; ok && cf.factor == f.Factor && !cf.holds(f.Before) && cf.holds(f.After) {
					return f, c, true
				}
			}
		}
	}
	return store.FactorChange{}, "", false
}

// conditionFactor is the changed factor whose values tell whether a
// condition held, and the test of one value.
var conditionFactor = map[string]struct {
	factor string
	holds  func(v string) bool
}{
	"compressed":        {"compression", is("compressed")},
	"encrypted":         {"encryption", is("encrypted")},
	"io_alignment_4096": {"io_alignment", func(v string) bool { return strings.HasPrefix(strings.TrimSpace(v), "4096") }},
	"striped":           {"stripes", func(v string) bool { v = strings.TrimSpace(v); return v != "" && v != "1" && v != "0" }},
	"vdi":               {"device_kind", func(v string) bool { return strings.TrimSpace(v) == store.DeviceVirtual }},
}

// is tests a factor value against the one that meets a condition (store's
// factor values: "compressed" or "uncompressed", "encrypted" or "not
// encrypted").
func is(want string) func(string) bool {
	return func(v string) bool { return strings.TrimSpace(v) == want }
}

// affected reports whether build falls in the issue's affected ranges and
// does not already hold its fix.
func affected(ki KnownIssue, build string) bool {
	all := map[string]bool{}
	for _, c := range ki.Conditions {
		all[c] = true
	}
	return len(MatchKnownIssues([]KnownIssue{ki}, build, all)) > 0 && !ContainsFix(ki, build)
}

// ContainsFix reports whether build already holds one of the issue's fixes:
// it is a fix build or the fixed end of an affected range, compared on
// major.minor.build so that a three-part build ("14.0.3026", as a backup's
// source build is recorded) counts as the update it names, not as an
// earlier revision of it.
func ContainsFix(ki KnownIssue, build string) bool {
	b := build3(build)
	if b == "" {
		return false
	}
	for _, f := range ki.FixBuilds {
		if build3(f) == b {
			return true
		}
	}
	for _, r := range ki.Affected {
		if r.Fixed != "" && build3(r.Fixed) == b {
			return true
		}
	}
	return false
}

// build3 is "major.minor.build" of a version, "" when it is not one.
func build3(v string) string {
	parts := strings.Split(strings.TrimSpace(v), ".")
	if len(parts) < 3 {
		return ""
	}
	return strings.Join(parts[:3], ".")
}
