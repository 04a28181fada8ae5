package analysis

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// KnownIssue is one engine issue that affects restore speed (or makes a
// restore fail and so lengthens it), as the catalogue records it.
//
// Conditions name facts about the restore or instance that must all hold
// for the issue to apply. The catalogue uses: compressed (backup
// compression), encrypted (backup encryption), tde, ekm (TDE key in an
// EKM provider), io_alignment_4096 (4K-sector destination), vdi (a
// virtual-device backup product), striped (several devices), linux,
// many_vlfs, automatic_seeding. User extensions may add their own.
type KnownIssue struct {
	ID          string       `json:"id"` // "KB4088193"
	Title       string       `json:"title"`
	Description string       `json:"description"`
	Affected    []BuildRange `json:"affected"` // empty: not tied to a build, matches on conditions alone
	Conditions  []string     `json:"conditions"`
	FixBuilds   []string     `json:"fix_builds"`
	Source      string       `json:"source"` // where the facts come from, and what is unverified
}

// BuildRange is a span of affected builds within one major version:
// From <= build < Fixed, or every build from From when Fixed is "" (no fix
// build known).
type BuildRange struct {
	Major int    `json:"major"`
	From  string `json:"from"`
	Fixed string `json:"fixed"`
}

//go:embed known_issues.json
var knownIssuesJSON []byte

// DefaultKnownIssues returns the catalogue shipped with restorewatch,
// parsed afresh so callers may modify their copy. The embedded file is data
// checked by the tests, so a parse error is a build defect and panics.
func DefaultKnownIssues() []KnownIssue {
	cat, err := LoadKnownIssues(bytes.NewReader(knownIssuesJSON))
	if err != nil {
		panic(err)
	}
	return cat
}

// LoadKnownIssues reads a catalogue in the format of known_issues.json (a
// JSON array of issues) and validates it, so a user's extension fails at
// load time rather than silently never matching.
func LoadKnownIssues(r io.Reader) ([]KnownIssue, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var cat []KnownIssue
	if err := dec.Decode(&cat); err != nil {
		return nil, fmt.Errorf("analysis: load known issues: %w", err)
	}
	for _, ki := range cat {
		if err := ki.validate(); err != nil {
			return nil, fmt.Errorf("analysis: load known issues: %w", err)
		}
	}
	return cat, nil
}

func (ki KnownIssue) validate() error {
	if strings.TrimSpace(ki.ID) == "" {
		return errors.New("issue without id")
	}
	for _, r := range ki.Affected {
		from, err := parseBuild(r.From)
		if err != nil {
			return fmt.Errorf("%s: affected from: %w", ki.ID, err)
		}
		if from[0] != r.Major {
			return fmt.Errorf("%s: affected from %s is not major %d", ki.ID, r.From, r.Major)
		}
		if r.Fixed == "" {
			continue
		}
		fixed, err := parseBuild(r.Fixed)
		if err != nil {
			return fmt.Errorf("%s: fixed: %w", ki.ID, err)
		}
		if compareBuilds(fixed, from) <= 0 {
			return fmt.Errorf("%s: fixed %s is not after from %s", ki.ID, r.Fixed, r.From)
		}
	}
	for _, b := range ki.FixBuilds {
		if _, err := parseBuild(b); err != nil {
			return fmt.Errorf("%s: fix build: %w", ki.ID, err)
		}
	}
	return nil
}

// build4 is a four-part engine version, major.minor.build.revision.
type build4 [4]int

// parseBuild reads "13.0.4474.0"; a three-part version (as in the dbatools
// build list) has revision 0.
func parseBuild(s string) (build4, error) {
	var b build4
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) < 3 || len(parts) > 4 {
		return b, fmt.Errorf("build %q: want major.minor.build[.revision]", s)
	}
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return b, fmt.Errorf("build %q: part %d is not a number", s, i+1)
		}
		b[i] = v
	}
	return b, nil
}

// compareBuilds orders two builds part by part, numerically (so 12.0.5589.7
// sorts after 12.0.559.0, unlike strings): -1, 0 or +1.
func compareBuilds(a, b build4) int {
	for i := range a {
		switch {
		case a[i] < b[i]:
			return -1
		case a[i] > b[i]:
			return 1
		}
	}
	return 0
}

// MatchKnownIssues returns, in catalogue order, the issues whose affected
// ranges contain build and whose conditions all hold in conds. A condition
// missing from conds counts as not holding: restorewatch names an issue
// only on evidence. An unparseable build matches only issues not tied to a
// build.
func MatchKnownIssues(cat []KnownIssue, build string, conds map[string]bool) []KnownIssue {
	b, err := parseBuild(build)
	var out []KnownIssue
	for _, ki := range cat {
		if !ki.conditionsHold(conds) {
			continue
		}
		if len(ki.Affected) == 0 || (err == nil && ki.affects(b)) {
			out = append(out, ki)
		}
	}
	return out
}

func (ki KnownIssue) conditionsHold(conds map[string]bool) bool {
	for _, c := range ki.Conditions {
		if !conds[c] {
			return false
		}
	}
	return true
}

func (ki KnownIssue) affects(b build4) bool {
	for _, r := range ki.Affected {
		from, err := parseBuild(r.From)
		if err != nil || r.Major != b[0] || compareBuilds(b, from) < 0 {
			continue
		}
		if r.Fixed == "" {
			return true
		}
		if fixed, err := parseBuild(r.Fixed); err == nil && compareBuilds(b, fixed) < 0 {
			return true
		}
	}
	return false
}
