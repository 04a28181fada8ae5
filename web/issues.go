package web

import (
	"fmt"
	"strings"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/buildref"
	"github.com/restorewatch/restorewatch/store/human"
	"github.com/restorewatch/restorewatch/web/view"
)

// What a reader sees of a known issue is the issue, its conditions in
// words, the builds that fix it with their KB articles and links to them.
// The catalogue's provenance (KnownIssue.Source: seeds, what is unverified)
// is for the people who maintain the catalogue and never reaches a page.

// issue finds a catalogued issue by id; an id the catalogue lacks (a newer
// warehouse, an older catalogue) still shows, untitled.
func (s *Server) issue(id string) analysis.KnownIssue {
	for _, ki := range s.issues {
		if ki.ID == id {
			return ki
		}
	}
	return analysis.KnownIssue{ID: id, Title: "(not in this catalogue)"}
}

// conditionWords writes condition keys ("compressed",
// "io_alignment_4096") as words: "Compressed backup and 4 KiB I/O
// alignment".
func conditionWords(keys []string) string {
	words := make([]string, 0, len(keys))
	for _, k := range keys {
		if k = strings.TrimSpace(k); k != "" {
			words = append(words, human.FactorLabel(k))
		}
	}
	for i := 1; i < len(words); i++ {
		words[i] = lowerFirst(words[i])
	}
	switch len(words) {
	case 0:
		return "no condition"
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// fixes names an issue's fix builds with their release and KB article, and
// links each article on Microsoft's support site.
func (s *Server) fixes(ki analysis.KnownIssue) []view.FixBuild {
	var out []view.FixBuild
	for _, b := range ki.FixBuilds {
		f := view.FixBuild{Build: b, Release: s.cfg.Namer(b)}
		if v, err := buildref.ParseVersion(b); err == nil {
			if r := s.cfg.Reference.Lookup(v); !r.Approximate && len(r.KB) > 0 {
				f.KB = r.KB[0]
				f.URL = kbURL(r.KB[0])
			}
		}
		out = append(out, f)
	}
	return out
}

// kbURL is the public support article of a KB number ("KB4229789").
func kbURL(kb string) string {
	n := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(kb)), "KB")
	if n == "" || strings.Trim(n, "0123456789") != "" {
		return ""
	}
	return "https://support.microsoft.com/help/" + n
}

// fixBuilds names an issue's fix builds in one line: "14.0.3026.27 (2017
// CU7, KB4229789), …".
func (s *Server) fixBuilds(ki analysis.KnownIssue) string {
	var out []string
	for _, f := range s.fixes(ki) {
		out = append(out, f.String())
	}
	if len(out) == 0 {
		return "no fix build known"
	}
	return strings.Join(out, ", ")
}

// containsFix reports whether build already holds one of the issue's fixes:
// it is a fix build or the fixed end of an affected range, compared on
// major.minor.build so that a three-part build ("14.0.3026", as a backup's
// source build is recorded) counts as the update it names, not as an
// earlier revision of it.
func containsFix(ki analysis.KnownIssue, build string) bool {
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

// issueRow is the box of one known issue on an evidence page or report.
func (s *Server) issueRow(ki analysis.KnownIssue) view.IssueRow {
	return view.IssueRow{ID: ki.ID, Title: ki.Title, Description: ki.Description,
		Conditions: conditionWords(ki.Conditions), Fixes: s.fixes(ki), FixBuilds: s.fixBuilds(ki)}
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

// explains judges a known issue the analysis matched to a regression's
// slow restores: it explains the change only if something that changed at
// the change point made it apply (a condition that did not hold before and
// does after, or the restoring instance's build or the backup's source
// build outside its affected range before and inside it after); otherwise it was present before and after and says nothing about
// this change. It returns the factor's words, or "".
func (s *Server) explains(ki analysis.KnownIssue, changed []store.FactorChange) string {
	f, _ := s.explainsHow(ki, changed)
	return f
}

// explainsHow is explains with the condition that changed at the change
// point in words: "the source build (of the backup) moved from 10.50.6542,
// outside the affected builds, to 13.0.4474, inside them".
func (s *Server) explainsHow(ki analysis.KnownIssue, changed []store.FactorChange) (factor, how string) {
	for _, f := range changed {
		label := human.FactorLabel(f.Factor)
		switch f.Factor {
		case "instance_build", "source_build":
			// A backup written by an affected build is what seed 003 saw:
			// 2008 R2 backups restored at 892 MiB/s on 2016 SP1 CU8 and 4K
			// disks, the same database's 2016 SP1 CU8 backups at 262.
			if len(ki.Affected) > 0 && !affected(ki, f.Before) && affected(ki, f.After) {
				return label, fmt.Sprintf("%s moved from %s, outside the builds %s affects, to %s, inside them",
					lowerFirst(label), s.factorValue(f.Factor, f.Before), ki.ID, s.factorValue(f.Factor, f.After))
			}
		default:
			for _, c := range ki.Conditions {
				if cf, ok := conditionFactor[c]; ok && cf.factor == f.Factor && !cf.holds(f.Before) && cf.holds(f.After) {
					return label, fmt.Sprintf("%s changed from %s to %s, which meets its condition \u201c%s\u201d",
						lowerFirst(label), s.factorValue(f.Factor, f.Before), s.factorValue(f.Factor, f.After), lowerFirst(conditionWords([]string{c})))
				}
			}
		}
	}
	return "", ""
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// affected reports whether build falls in the issue's affected ranges and
// does not already hold its fix.
func affected(ki analysis.KnownIssue, build string) bool {
	all := map[string]bool{}
	for _, c := range ki.Conditions {
		all[c] = true
	}
	return len(analysis.MatchKnownIssues([]analysis.KnownIssue{ki}, build, all)) > 0 && !containsFix(ki, build)
}
