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

// issueRow is the box of one known issue on an evidence page or report.
func (s *Server) issueRow(ki analysis.KnownIssue) view.IssueRow {
	return view.IssueRow{ID: ki.ID, Title: ki.Title, Description: ki.Description,
		Conditions: conditionWords(ki.Conditions), Fixes: s.fixes(ki), FixBuilds: s.fixBuilds(ki)}
}

// explains is the label of the factor whose change made a known issue
// apply at the change point (analysis.Explains), or "".
func (s *Server) explains(ki analysis.KnownIssue, changed []store.FactorChange) string {
	f, _ := s.explainsHow(ki, changed)
	return f
}

// explainsHow is explains with the condition that changed at the change
// point in words: "the source build (of the backup) moved from 10.50.6542,
// outside the affected builds, to 13.0.4474, inside them".
func (s *Server) explainsHow(ki analysis.KnownIssue, changed []store.FactorChange) (factor, how string) {
	f, c, ok := analysis.Explains(ki, changed)
	if !ok {
		return "", ""
	}
	label := human.FactorLabel(f.Factor)
	if c == "" {
		return label, fmt.Sprintf("%s moved from %s, outside the builds %s affects, to %s, inside them",
			lowerFirst(label), s.factorValue(f.Factor, f.Before), ki.ID, s.factorValue(f.Factor, f.After))
	}
	return label, fmt.Sprintf("%s changed from %s to %s, which meets its condition \u201c%s\u201d",
		lowerFirst(label), s.factorValue(f.Factor, f.Before), s.factorValue(f.Factor, f.After), lowerFirst(conditionWords([]string{c})))
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
