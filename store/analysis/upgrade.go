package analysis

import (
	"context"
	"slices"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/buildref"
)

// UpgradeCase is the business case an engineer writes by hand for a
// regression a known issue explains or accompanies: AS-IS (the build the
// instance runs, the restores' median duration and speed since the
// change), TO-BE (the first build at or above it in the same major version
// that holds the fix and, when the issue explains the change, this series
// before the change), the hours a year it would save. The evidence page
// and the report (web) word it; No says why there is none.
type UpgradeCase struct {
	No UpgradeGap

	AsIsBuild                string // "" = unknown
	AsIsDurationS, AsIsMiBps float64

	Issue        KnownIssue       // the issue whose fix is proposed
	Fix          buildref.Version // its first fix build at or above AsIsBuild
	HoursPerYear float64
	// Explains: the issue explains the change (Explains), so TO-BE is
	// this series before it: ToBeN restores from ToBeFrom (zero: unknown)
	// to ToBeTo.
	Explains                 bool
	ToBeDurationS, ToBeMiBps float64
	ToBeN                    int
	ToBeFrom, ToBeTo         time.Time
}

// UpgradeGap is why a regression has no upgrade case; "" when it has one.
type UpgradeGap string

// The reasons for no upgrade case.
const (
	UpgradeReady        UpgradeGap = ""
	UpgradeBuildUnknown UpgradeGap = "build unknown" // the instance's build is not known
	UpgradeNoIssue      UpgradeGap = "no issue"      // no catalogued issue matches the restores
	UpgradeNoFix        UpgradeGap = "no fix"        // no fix build at or above the current one
	// UpgradeNotFaster: the restores were not faster before the change, so
	// applying the fix is not shown to win time back (SPEC §5,
	// "Consistency": a TO-BE not faster than its AS-IS is not shown).
	UpgradeNotFaster UpgradeGap = "not faster"
)

// Upgrade makes r's upgrade case. current is the build the instance runs
// now (CurrentBuild), cat the known-issue catalogue (r.KnownIssues name
// its entries), before the first restore of the series the baseline counts
// (zero: unknown).
func Upgrade(r *store.Regression, current string, cat []KnownIssue, before time.Time) UpgradeCase {
	uc := UpgradeCase{AsIsBuild: current, AsIsDurationS: r.CurrentDurationS, AsIsMiBps: r.CurrentMiBps}
	cur, err := buildref.ParseVersion(current)
	if err != nil {
		uc.No = UpgradeBuildUnknown
		return uc
	}
	var best *buildref.Version
	for _, id := range r.KnownIssues {
		i := slices.IndexFunc(cat, func(ki KnownIssue) bool { return ki.ID == id })
		if i < 0 {
			continue
		}
		if fix, ok := FirstFixAtOrAbove(cat[i], cur); ok && (best == nil || fix.Compare(*best) < 0) {
			best, uc.Issue = &fix, cat[i]
		}
	}
	switch {
	case best == nil && len(r.KnownIssues) == 0:
		uc.No = UpgradeNoIssue
		return uc
	case best == nil:
		uc.No = UpgradeNoFix
		return uc
	}
	uc.Fix = *best
	uc.HoursPerYear = r.HoursLostPerYear()
	_, _, uc.Explains = Explains(uc.Issue, r.ChangedFactors)
	if uc.Explains {
		// TO-BE is this series before the change, never another database's
		// speed: the fix takes the restores back to what they were.
		if !(r.BaselineMiBps > r.CurrentMiBps) || r.BaselineDurationS > 0 && r.CurrentDurationS > 0 && r.BaselineDurationS >= r.CurrentDurationS {
			uc.No = UpgradeNotFaster
			return uc
		}
		uc.ToBeDurationS, uc.ToBeMiBps, uc.ToBeN = r.BaselineDurationS, r.BaselineMiBps, r.BaselineN
		if !before.IsZero() {
			uc.ToBeFrom, uc.ToBeTo = before, r.ChangedAt.Add(-time.Second)
		}
	}
	return uc
}

// CurrentBuild is the build the regressed series' instance runs now: the
// instance's latest known build (instanceBuild), else the build its
// restores changed to.
func CurrentBuild(r *store.Regression, instanceBuild string) string {
	if instanceBuild != "" {
		return instanceBuild
	}
	for _, f := range r.ChangedFactors {
		if f.Factor == "instance_build" {
			return f.After
		}
	}
	return ""
}

// FirstFixAtOrAbove is the lowest of the issue's fix builds in cur's major
// version at or above cur.
func FirstFixAtOrAbove(ki KnownIssue, cur buildref.Version) (buildref.Version, bool) {
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

// SpeedSource reads measured restores with their speed relative to their
// own series' usual speed; the SQLite warehouse satisfies it.
type SpeedSource interface {
	RelativeSpeeds(ctx context.Context, f store.RestoreFilter) ([]store.RelativeSpeed, error)
}

// FleetFix is what the fleet's restores on builds holding a fix measure:
// the builds that had any, how many, and their median speed relative to
// each series' usual speed. Their MiB/s is not given: it is other
// databases' speed, which says nothing of the regressed one's.
type FleetFix struct {
	Builds   []string // the fleet's builds with such restores, in the order given
	Restores int
	Relative float64 // 0 when Restores is 0
}

// FixedInFleet measures the restores of one kind on the fleet's builds
// (builds: the instance builds the fleet runs) of the fix's major version
// at or above it.
func FixedInFleet(ctx context.Context, src SpeedSource, kind store.Kind, fix buildref.Version, builds []string) (FleetFix, error) {
	var ff FleetFix
	var rel []float64
	for _, b := range builds {
		v, err := buildref.ParseVersion(b)
		if err != nil || v.Major != fix.Major || v.Compare(fix) < 0 {
			continue
		}
		rs, err := src.RelativeSpeeds(ctx, store.RestoreFilter{Build: b, Kind: kind})
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
			ff.Builds = append(ff.Builds, b)
		}
	}
	if len(rel) > 0 {
		ff.Restores, ff.Relative = len(rel), Median(rel)
	}
	return ff, nil
}
