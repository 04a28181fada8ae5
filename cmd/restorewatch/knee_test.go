package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestKneesAndNextStepsInTheCLI: on the demo, `restores --knee` lists the
// two finished restores that slowed part-way (seed 000's Billing, seed
// 002's Archive) with their knee in the JSON and the table; `regressions
// --format json` gives next steps to the one regression no factor explains.
func TestKneesAndNextStepsInTheCLI(t *testing.T) {
	db := newDB(t, "w.db")
	if _, stderr, code := runMain(t, "demo", "--db", db); code != 0 {
		t.Fatalf("demo: exit %d: %s", code, stderr)
	}
	out, stderr, code := runMain(t, "restores", "--db", db, "--knee", "--format", "json")
	if code != 0 {
		t.Fatalf("restores --knee: exit %d: %s", code, stderr)
	}
	var rs []struct {
		Database string `json:"database"`
		Knee     *struct {
			Percent     float64  `json:"percent"`
			KnownIssues []string `json:"known_issues"`
		} `json:"knee"`
	}
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range rs {
		if r.Knee == nil {
			t.Fatalf("restores --knee lists a %s restore without a knee", r.Database)
		}
		got[r.Database] = r.Knee.Percent
		if r.Database == "Billing" && !slices.Contains(r.Knee.KnownIssues, "KB4088193") {
			t.Errorf("Billing's knee names %q, want KB4088193", r.Knee.KnownIssues)
		}
	}
	if len(got) != 2 || got["Archive"] != 92 || got["Billing"] < 54 || got["Billing"] > 56 {
		t.Errorf("restores --knee: %v; want Archive at 92 %% and Billing at 55 %%", got)
	}
	table, _, _ := runMain(t, "restores", "--db", db, "--knee")
	if !strings.Contains(table, "SLOWED") || !strings.Contains(table, "after 92 %, 23× slower") {
		t.Errorf("restores --knee table lacks its SLOWED column:\n%s", table)
	}

	out, _, _ = runMain(t, "regressions", "--db", db, "--format", "json")
	var regs []struct {
		Database       string            `json:"database"`
		ChangedFactors []json.RawMessage `json:"changed_factors"`
		NextSteps      []struct {
			Fact    string `json:"fact"`
			Command string `json:"command"`
		} `json:"next_steps"`
	}
	if err := json.Unmarshal([]byte(out), &regs); err != nil {
		t.Fatal(err)
	}
	for _, r := range regs {
		switch {
		case len(r.ChangedFactors) == 0 && (len(r.NextSteps) == 0 || r.NextSteps[0].Fact != "share_latency"):
			t.Errorf("%s: no factor changed, next steps %+v; want the share's latency first", r.Database, r.NextSteps)
		case len(r.ChangedFactors) > 0 && len(r.NextSteps) == 0:
			t.Errorf("%s: a factor changed, and no next step says what to do about it", r.Database)
		}
	}
}
