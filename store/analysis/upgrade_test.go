package analysis_test

import (
	"context"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/buildref"
)

// TestExplainsOnlyWhatChanged: a known issue explains a regression only
// when a changed factor made it apply (a condition false before and true
// after, or a build entering its affected range); present on both sides,
// it explains nothing (issue 15 item 2).
func TestExplainsOnlyWhatChanged(t *testing.T) {
	ki := issue(t, "KB4088193")
	tests := []struct {
		name    string
		changed []store.FactorChange
		factor  string
		cond    string
	}{
		{"alignment became 4 KiB", []store.FactorChange{{Factor: "io_alignment", Before: "512", After: "4096"}}, "io_alignment", "io_alignment_4096"},
		{"compression began", []store.FactorChange{{Factor: "compression", Before: "uncompressed", After: "compressed"}}, "compression", "compressed"},
		{"compression stopped", []store.FactorChange{{Factor: "compression", Before: "compressed", After: "uncompressed"}}, "", ""},
		{"upgrade into the affected range", []store.FactorChange{{Factor: "instance_build", Before: "13.0.2149.0", After: "13.0.4474.0"}}, "instance_build", ""},
		{"upgrade to the fix build", []store.FactorChange{{Factor: "instance_build", Before: "13.0.4474.0", After: "13.0.4502.0"}}, "", ""},
		{"backups now written by an affected build (seed 003)", []store.FactorChange{{Factor: "source_build", Before: "10.50.6542", After: "13.0.4474"}}, "source_build", ""},
		{"backups now written by a fixed build", []store.FactorChange{{Factor: "source_build", Before: "13.0.4474", After: "13.0.4502"}}, "", ""},
		{"another factor changed", []store.FactorChange{{Factor: "buffer_count", Before: "64", After: "7"}}, "", ""},
		{"nothing changed", nil, "", ""},
	}
	for _, tt := range tests {
		f, c, ok := analysis.Explains(ki, tt.changed)
		if ok != (tt.factor != "") || f.Factor != tt.factor || c != tt.cond {
			t.Errorf("%s: Explains = %q, %q, %v; want %q, %q", tt.name, f.Factor, c, ok, tt.factor, tt.cond)
		}
	}
	if !analysis.ContainsFix(ki, "14.0.3026") || !analysis.ContainsFix(ki, "14.0.3026.27") || analysis.ContainsFix(ki, "14.0.1000.169") {
		t.Error("ContainsFix does not recognise 2017 CU7 (14.0.3026) as KB4088193's fix, or takes RTM for it")
	}
}

// issue is the shipped catalogue's entry id.
func issue(t *testing.T, id string) analysis.KnownIssue {
	t.Helper()
	for _, ki := range analysis.DefaultKnownIssues() {
		if ki.ID == id {
			return ki
		}
	}
	t.Fatalf("no %s in the catalogue", id)
	return analysis.KnownIssue{}
}

// TestUpgradeCase: the case of seed 003's regression (2016 SP1 CU8, the
// 4K-sector issue made to apply by the change) proposes 2016 SP1 CU9, the
// first fix at or above the build in its major version, with TO-BE the
// series before the change; each way it can have no case says why.
func TestUpgradeCase(t *testing.T) {
	cat := analysis.DefaultKnownIssues()
	changed := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	reg := func() *store.Regression {
		return &store.Regression{KnownIssues: []string{"KB4088193"}, ChangedAt: changed,
			ChangedFactors: []store.FactorChange{{Factor: "io_alignment", Before: "512", After: "4096"}},
			BaselineMiBps:  300, CurrentMiBps: 100, BaselineDurationS: 1200, CurrentDurationS: 3600, BaselineN: 9, RestoresPerYear: 52}
	}
	before := changed.AddDate(0, -2, 0)
	uc := analysis.Upgrade(reg(), "13.0.4474.0", cat, before)
	if uc.No != analysis.UpgradeReady || uc.Fix.String() != "13.0.4502.0" || uc.Issue.ID != "KB4088193" || !uc.Explains {
		t.Fatalf("case = %+v, want KB4088193 fixed by 13.0.4502.0, explaining the change", uc)
	}
	if uc.ToBeMiBps != 300 || uc.ToBeDurationS != 1200 || uc.ToBeN != 9 || !uc.ToBeFrom.Equal(before) || !uc.ToBeTo.Before(changed) {
		t.Errorf("TO-BE = %v MiB/s, %v s, n %d, %v to %v; want the series before the change", uc.ToBeMiBps, uc.ToBeDurationS, uc.ToBeN, uc.ToBeFrom, uc.ToBeTo)
	}
	if want := (3600.0 - 1200) / 3600 * 52; uc.HoursPerYear != want {
		t.Errorf("hours a year = %v, want %v", uc.HoursPerYear, want)
	}
	// On 2016 SP2 the first fix at or above is SP2 CU1, not SP1 CU9.
	if uc := analysis.Upgrade(reg(), "13.0.5026.0", cat, before); uc.Fix.String() != "13.0.5149.0" {
		t.Errorf("on 13.0.5026.0 the fix = %s, want 13.0.5149.0", uc.Fix)
	}
	slower := reg()
	slower.BaselineMiBps, slower.BaselineDurationS = 90, 4000
	noIssue := reg()
	noIssue.KnownIssues = nil
	for _, tt := range []struct {
		name  string
		r     *store.Regression
		build string
		want  analysis.UpgradeGap
	}{
		{"unknown build", reg(), "", analysis.UpgradeBuildUnknown},
		{"no known issue", noIssue, "13.0.4474.0", analysis.UpgradeNoIssue},
		{"already past every fix of its major", reg(), "13.0.6300.2", analysis.UpgradeNoFix},
		{"not faster before the change", slower, "13.0.4474.0", analysis.UpgradeNotFaster},
	} {
		if got := analysis.Upgrade(tt.r, tt.build, cat, before).No; got != tt.want {
			t.Errorf("%s: no case because %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := analysis.CurrentBuild(noIssue, ""); got != "" {
		t.Errorf("CurrentBuild with no build known = %q", got)
	}
	up := reg()
	up.ChangedFactors = append(up.ChangedFactors, store.FactorChange{Factor: "instance_build", Before: "13.0.2149.0", After: "13.0.4474.0"})
	if got := analysis.CurrentBuild(up, ""); got != "13.0.4474.0" {
		t.Errorf("CurrentBuild = %q, want the build the restores changed to", got)
	}
	if got := analysis.CurrentBuild(up, "13.0.4502.0"); got != "13.0.4502.0" {
		t.Errorf("CurrentBuild = %q, want the instance's own", got)
	}
}

// speeds is a SpeedSource of fixed relative speeds per build.
type speeds map[string][]store.RelativeSpeed

func (s speeds) RelativeSpeeds(_ context.Context, f store.RestoreFilter) ([]store.RelativeSpeed, error) {
	return s[f.Build], nil
}

// TestFixedInFleet: only builds of the fix's major at or above it count,
// and their restores' median speed relative to their own series.
func TestFixedInFleet(t *testing.T) {
	rel := func(v ...float64) []store.RelativeSpeed {
		var out []store.RelativeSpeed
		for _, x := range v {
			out = append(out, store.RelativeSpeed{MiBps: 100, Rel: x})
		}
		return out
	}
	src := speeds{"13.0.4474.0": rel(0.3, 0.3, 0.3), "13.0.4502.0": rel(0.9, 1.1), "13.0.5149.0": rel(1.0), "14.0.3026.27": rel(5), "13.0.6300.2": nil}
	fix, _ := buildref.ParseVersion("13.0.4502.0")
	ff, err := analysis.FixedInFleet(t.Context(), src, store.KindFull, fix, []string{"13.0.4474.0", "13.0.4502.0", "13.0.5149.0", "14.0.3026.27", "13.0.6300.2"})
	if err != nil {
		t.Fatal(err)
	}
	if ff.Restores != 3 || ff.Relative != 1.0 || len(ff.Builds) != 2 || ff.Builds[0] != "13.0.4502.0" || ff.Builds[1] != "13.0.5149.0" {
		t.Errorf("fixed in fleet = %+v, want 3 restores at 1.0× on 13.0.4502.0 and 13.0.5149.0", ff)
	}
}
