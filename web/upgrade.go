package web

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/buildref"
	"github.com/restorewatch/restorewatch/web/view"
)

// upgradeCase words a regression's upgrade case (analysis.Upgrade) for the
// evidence page and its report. before is the first restore of the series
// the baseline counts (zero: unknown), for the TO-BE's period.
func (s *Server) upgradeCase(ctx context.Context, r *store.Regression, before time.Time) (view.UpgradeCase, error) {
	insts, err := s.instances(ctx)
	if err != nil {
		return view.UpgradeCase{}, err
	}
	build := ""
	for _, in := range insts {
		if in.Name == r.Instance && in.Build != "" {
			build = in.Build
			break
		}
	}
	a := analysis.Upgrade(r, analysis.CurrentBuild(r, build), s.issues, before)
	uc := view.UpgradeCase{AsIsBuild: a.AsIsBuild, AsIsDuration: view.Duration(a.AsIsDurationS), AsIsMiBps: view.MiBps(a.AsIsMiBps)}
	if n := s.cfg.Namer(a.AsIsBuild); n != "" {
		uc.AsIsRelease = n
	}
	switch a.No {
	case analysis.UpgradeBuildUnknown:
		uc.Text = "The instance's build is not known, so no upgrade can be proposed."
		return uc, nil
	case analysis.UpgradeNoIssue:
		uc.Text = "No catalogued known issue matches these restores, so no build is known to remove this slowdown."
		return uc, nil
	case analysis.UpgradeNoFix:
		cur, _ := buildref.ParseVersion(a.AsIsBuild)
		uc.Text = fmt.Sprintf("No build of SQL Server %s at or above %s is known to fix %s.", buildref.MajorName(cur.Major, cur.Minor), a.AsIsBuild, strings.Join(r.KnownIssues, ", "))
		return uc, nil
	case analysis.UpgradeNotFaster:
		return view.UpgradeCase{Text: fmt.Sprintf("No upgrade case: these restores were not faster before the change (%s before, %s since), so applying the fix of %s is not shown to win time back.",
			view.MiBps(r.BaselineMiBps), view.MiBps(r.CurrentMiBps), a.Issue.ID)}, nil
	}
	uc.Ready, uc.IssueID, uc.IssueTitle = true, a.Issue.ID, a.Issue.Title
	uc.ToBeBuild = a.Fix.String()
	rel := s.cfg.Reference.Lookup(a.Fix)
	uc.ToBeRelease = s.cfg.Namer(uc.ToBeBuild)
	if !rel.Approximate && len(rel.KB) > 0 {
		uc.KB, uc.KBURL = rel.KB[0], kbURL(rel.KB[0])
	}
	uc.HoursPerYear = view.Hours(a.HoursPerYear)
	uc.Explains = a.Explains
	if a.Explains {
		uc.ToBeDuration, uc.ToBeMiBps = view.Duration(a.ToBeDurationS), view.MiBps(a.ToBeMiBps)
		uc.ToBeBasis = fmt.Sprintf("the %s restores of this series before the change", view.Int(int64(a.ToBeN)))
		if !a.ToBeFrom.IsZero() {
			uc.ToBeBasis += ", " + view.Date(a.ToBeFrom) + " to " + view.Date(a.ToBeTo)
		}
	}
	// The fleet's restores on fixed builds are the same for every
	// regression of that kind and fix (a scan by build, on each view of the
	// evidence page and its report): once per data version.
	fix := a.Fix
	fleet, err := cached(ctx, s, "fixed-in-fleet\x00"+string(r.Kind)+"\x00"+fix.String(), func(ctx context.Context) (view.FleetFix, error) {
		return s.fixedInFleet(ctx, r.Kind, fix)
	})
	if err != nil {
		return uc, err
	}
	uc.Fleet = fleet
	return uc, nil
}

// fixedInFleet words analysis.FixedInFleet over the fleet's instance
// builds, each named with its release.
func (s *Server) fixedInFleet(ctx context.Context, kind store.Kind, fix buildref.Version) (view.FleetFix, error) {
	set, err := s.cohorts(ctx)
	if err != nil {
		return view.FleetFix{}, err
	}
	builds := make([]string, len(set.instance))
	release := map[string]string{}
	for i, c := range set.instance {
		builds[i], release[c.Group] = c.Group, c.release
	}
	f, err := analysis.FixedInFleet(ctx, s.db, kind, fix, builds)
	if err != nil || f.Restores == 0 {
		return view.FleetFix{}, err
	}
	ff := view.FleetFix{Restores: view.Plural(int64(f.Restores), "restore", "restores"), Relative: view.Ratio(f.Relative)}
	for _, b := range f.Builds {
		ff.Builds = append(ff.Builds, b+" ("+release[b]+")")
	}
	return ff, nil
}
