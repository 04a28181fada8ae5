package web

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/buildref"
	"github.com/restorewatch/restorewatch/store/human"
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
		if ib := factorChange(r, "instance_build"); ib != nil && r.Direction == "regression" {
			return s.rollbackCase(r, ib, uc, before), nil
		}
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
	uc.Patch = r.Instance
	// The builds of the condition that changed: the restoring build is the
	// one a fix changes; where the backups' source build is what changed at
	// the change, the AS-IS and the TO-BE's figures say so.
	src := factorChange(r, "source_build")
	if src != nil {
		uc.AsIsCondition = "backups from " + src.After
	}
	if a.Explains {
		uc.ToBeDuration, uc.ToBeMiBps = view.Duration(a.ToBeDurationS), view.MiBps(a.ToBeMiBps)
		uc.ToBeBasis = fmt.Sprintf("as the %s restores of this series before the change", view.Int(int64(a.ToBeN)))
		if !a.ToBeFrom.IsZero() {
			uc.ToBeBasis += " (" + view.Date(a.ToBeFrom) + " to " + view.Date(a.ToBeTo) + ")"
		}
		before := "on " + a.AsIsBuild
		if ib := factorChange(r, "instance_build"); ib != nil {
			before = "on " + ib.Before
		}
		if src != nil {
			before += " with backups from " + src.Before
		}
		uc.ToBeBasis += ", measured " + before + ", not on " + uc.ToBeBuild + " itself"
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
	ff := view.FleetFix{Restores: view.Plural(int64(f.Restores), "restore", "restores"), Relative: human.Change(f.Relative)}
	for _, b := range f.Builds {
		ff.Builds = append(ff.Builds, b+" ("+release[b]+")")
	}
	return ff, nil
}

// factorChange is r's change of factor, or nil.
func factorChange(r *store.Regression, factor string) *store.FactorChange {
	for i := range r.ChangedFactors {
		if r.ChangedFactors[i].Factor == factor {
			return &r.ChangedFactors[i]
		}
	}
	return nil
}

// rollbackCase is the upgrade case of a regression the instance's own
// upgrade brought and no catalogued issue names (issue 38): AS-IS the build
// it runs now, TO-BE the build it ran before — measured, the restores
// before the change — so that rolling back, or testing a later build,
// has its figures and the time it would win back.
func (s *Server) rollbackCase(r *store.Regression, ib *store.FactorChange, uc view.UpgradeCase, before time.Time) view.UpgradeCase {
	uc.Ready, uc.Rollback, uc.Explains = true, true, true
	uc.AsIsBuild, uc.AsIsRelease = ib.After, s.cfg.Namer(ib.After)
	uc.AsIsDuration, uc.AsIsMiBps = view.Duration(r.CurrentDurationS), view.MiBps(r.CurrentMiBps)
	uc.AsIsCondition = "since " + view.Date(r.ChangedAt)
	uc.ToBeBuild, uc.ToBeRelease = ib.Before, s.cfg.Namer(ib.Before)
	uc.ToBeDuration, uc.ToBeMiBps = view.Duration(r.BaselineDurationS), view.MiBps(r.BaselineMiBps)
	uc.ToBeBasis = fmt.Sprintf("the %s restores of this series before the change, on %s", view.Int(int64(r.BaselineN)), ib.Before)
	if !before.IsZero() {
		uc.ToBeBasis += " (" + view.Date(before) + " to " + view.Date(r.ChangedAt) + ")"
	}
	uc.HoursPerYear = view.Hours(r.HoursLostPerYear())
	uc.Patch = r.Instance
	return uc
}
