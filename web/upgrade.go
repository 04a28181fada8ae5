package web

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/buildref"
	"github.com/restorewatch/restorewatch/web/view"
)

// upgradeCase is the business case an engineer writes by hand for a
// regression a known issue explains or accompanies: AS-IS (the build the
// instance runs, the restores' median duration and speed since the
// change), TO-BE (the first build at or above it in the same major version
// that holds the fix, and what restores on fixed builds in the fleet
// measure), the hours a year it would save and the KB to apply.
//
// A case whose TO-BE is not faster than its AS-IS is not shown (SPEC §5,
// "Consistency"). before is the first restore of the series the baseline
// counts (zero: unknown), for the TO-BE's period.
func (s *Server) upgradeCase(ctx context.Context, r *store.Regression, before time.Time) (view.UpgradeCase, error) {
	uc := view.UpgradeCase{AsIsDuration: view.Duration(r.CurrentDurationS), AsIsMiBps: view.MiBps(r.CurrentMiBps)}
	current, err := s.currentBuild(ctx, r)
	if err != nil {
		return uc, err
	}
	uc.AsIsBuild = current
	if n := s.cfg.Namer(current); n != "" {
		uc.AsIsRelease = n
	}
	cur, err := buildref.ParseVersion(current)
	if err != nil {
		uc.Text = "The instance's build is not known, so no upgrade can be proposed."
		return uc, nil
	}
	var best *buildref.Version
	var issue analysis.KnownIssue
	for _, id := range r.KnownIssues {
		ki := s.issue(id)
		if fix, ok := firstFixAtOrAbove(ki, cur); ok && (best == nil || fix.Compare(*best) < 0) {
			best, issue = &fix, ki
		}
	}
	if best == nil {
		if len(r.KnownIssues) == 0 {
			uc.Text = "No catalogued known issue matches these restores, so no build is known to remove this slowdown."
		} else {
			uc.Text = fmt.Sprintf("No build of SQL Server %s at or above %s is known to fix %s.", buildref.MajorName(cur.Major, cur.Minor), current, strings.Join(r.KnownIssues, ", "))
		}
		return uc, nil
	}
	uc.Ready, uc.IssueID, uc.IssueTitle = true, issue.ID, issue.Title
	uc.ToBeBuild = best.String()
	rel := s.cfg.Reference.Lookup(*best)
	uc.ToBeRelease = s.cfg.Namer(uc.ToBeBuild)
	if !rel.Approximate && len(rel.KB) > 0 {
		uc.KB, uc.KBURL = rel.KB[0], kbURL(rel.KB[0])
	}
	uc.HoursPerYear = view.Hours(r.HoursLostPerRestore() * r.RestoresPerYear)
	uc.Explains = s.explains(issue, r.ChangedFactors) != ""
	if uc.Explains {
		// TO-BE is this series before the change, never another database's
		// speed: the fix takes the restores back to what they were.
		if !(r.BaselineMiBps > r.CurrentMiBps) || r.BaselineDurationS > 0 && r.CurrentDurationS > 0 && r.BaselineDurationS >= r.CurrentDurationS {
			return view.UpgradeCase{Text: fmt.Sprintf("No upgrade case: these restores were not faster before the change (%s before, %s since), so applying the fix of %s is not shown to win time back.",
				view.MiBps(r.BaselineMiBps), view.MiBps(r.CurrentMiBps), issue.ID)}, nil
		}
		uc.ToBeDuration, uc.ToBeMiBps = view.Duration(r.BaselineDurationS), view.MiBps(r.BaselineMiBps)
		uc.ToBeBasis = fmt.Sprintf("the %s restores of this series before the change", view.Int(int64(r.BaselineN)))
		if !before.IsZero() {
			uc.ToBeBasis += ", " + view.Date(before) + " to " + view.Date(r.ChangedAt.Add(-time.Second))
		}
	}
	// The fleet's restores on fixed builds are the same for every
	// regression of that kind and fix (a scan by build: 0.3 s at 1 M
	// restores, each view of the evidence page and its report): once per
	// data version.
	fix := *best
	fleet, err := cached(ctx, s, "fixed-in-fleet\x00"+string(r.Kind)+"\x00"+fix.String(), func(ctx context.Context) (view.FleetFix, error) {
		return s.fixedInFleet(ctx, r.Kind, fix)
	})
	if err != nil {
		return uc, err
	}
	uc.Fleet = fleet
	return uc, nil
}

// currentBuild is the build the regressed series' instance runs now: the
// instance's latest known build, else the build its restores changed to.
func (s *Server) currentBuild(ctx context.Context, r *store.Regression) (string, error) {
	insts, err := s.instances(ctx)
	if err != nil {
		return "", err
	}
	for _, in := range insts {
		if in.Name == r.Instance && in.Build != "" {
			return in.Build, nil
		}
	}
	for _, f := range r.ChangedFactors {
		if f.Factor == "instance_build" {
			return f.After, nil
		}
	}
	return "", nil
}

// firstFixAtOrAbove is the lowest of the issue's fix builds in cur's major
// version at or above cur.
func firstFixAtOrAbove(ki analysis.KnownIssue, cur buildref.Version) (buildref.Version, bool) {
	var out []buildref.Version
	for _, f := range ki.FixBuilds {
		v, err := buildref.ParseVersion(f)
		if err == nil && v.Major == cur.Major && v.Compare(cur) >= 0 {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return buildref.Version{}, false
	}
	return slices.MinFunc(out, buildref.Version.Compare), true
}

// fixedInFleet measures the restores of one kind on the fleet's builds of
// the fix's major version at or above it: their median speed relative to
// each series' usual speed. Their MiB/s is not given: it is other
// databases' speed, which says nothing of this one's.
func (s *Server) fixedInFleet(ctx context.Context, kind store.Kind, fix buildref.Version) (view.FleetFix, error) {
	set, err := s.cohorts(ctx)
	if err != nil {
		return view.FleetFix{}, err
	}
	var ff view.FleetFix
	var rel []float64
	for _, c := range set.instance {
		v, err := buildref.ParseVersion(c.Group)
		if err != nil || v.Major != fix.Major || v.Compare(fix) < 0 {
			continue
		}
		rs, err := s.db.RelativeSpeeds(ctx, store.RestoreFilter{Build: c.Group, Kind: kind})
		if err != nil {
			return ff, err
		}
		n := 0
		for _, r := range rs {
			if r.MiBps > 0 && r.Rel > 0 {
				rel = append(rel, r.Rel)
				n++
			}
		}
		if n > 0 {
			ff.Builds = append(ff.Builds, c.Group+" ("+c.release+")")
		}
	}
	if len(rel) == 0 {
		return ff, nil
	}
	ff.Restores = view.Plural(int64(len(rel)), "restore", "restores")
	ff.Relative = view.Ratio(analysis.Median(rel))
	return ff, nil
}
