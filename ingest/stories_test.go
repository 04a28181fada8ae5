package ingest_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/demo"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// TestDemoStoriesAreFound imports the demo fleet through the real importers
// and checks that the regression engine finds every planted story with the
// right factor and known issue, and that stable and growing series stay quiet.
func TestDemoStoriesAreFound(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fleet, err := demo.Generate(demo.Config{Dir: filepath.Join(dir, "files"), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	db := storetest.OpenEngine(t)
	sum, err := demo.Import(ctx, db, fleet, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Rejects) > 0 {
		t.Errorf("the demo's own files have %d rejected lines, first: %s", len(sum.Rejects), sum.Rejects[0])
	}
	regs, err := db.ListRegressions(ctx, store.RegressionFilter{Direction: "any"})
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ instance, database string }
	found := map[key]store.Regression{}
	for _, r := range regs {
		if r.Kind == store.KindFull || r.Kind == store.KindDiff {
			found[key{r.Instance, r.Database}] = r
		}
	}
	for _, s := range fleet.Stories {
		r, ok := found[key{s.Instance, s.Database}]
		switch s.Expect {
		case "regression", "improvement":
			if !ok || r.Direction != s.Expect {
				t.Errorf("story %q (%s/%s): want a %s, found %+v", s.Name, s.Instance, s.Database, s.Expect, r)
				continue
			}
			if d := r.ChangedAt.Sub(s.ChangedAt); d < -48*3600e9 || d > 48*3600e9 {
				t.Errorf("story %q: dated %v, truth %v", s.Name, r.ChangedAt, s.ChangedAt)
			}
			if s.Factor == "" {
				if len(r.ChangedFactors) > 0 {
					t.Errorf("story %q: nothing SQL Server sees changed, yet factors %+v", s.Name, r.ChangedFactors)
				}
			} else if len(r.ChangedFactors) == 0 || r.ChangedFactors[0].Factor != s.Factor {
				t.Errorf("story %q: top factor %+v, want %s (%s → %s)", s.Name, r.ChangedFactors, s.Factor, s.Before, s.After)
			}
			if s.KnownIssue != "" && !strings.Contains(strings.Join(r.KnownIssues, ","), s.KnownIssue) {
				t.Errorf("story %q: known issues %v, want %s", s.Name, r.KnownIssues, s.KnownIssue)
			}
		case "stable", "growth", "outlier":
			if ok {
				t.Errorf("story %q (%s/%s, %s) must stay quiet, got a %s: %s", s.Name, s.Instance, s.Database, s.Expect, r.Direction, r.Note)
			}
		}
	}
	series, err := db.ListSeries(ctx, store.SeriesFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range fleet.Stories {
		if s.Expect != "outlier" && s.Expect != "growth" {
			continue
		}
		for _, se := range series {
			if se.Instance == s.Instance && se.Database == s.Database && se.Kind == s.Kind {
				if s.Expect == "outlier" && len(se.Outliers) == 0 {
					t.Errorf("story %q: the slow restore is not flagged as an outlier", s.Name)
				}
				if s.Expect == "growth" && !strings.Contains(se.Note, "larger") {
					t.Errorf("story %q: note %q does not say the restore is slower because larger", s.Name, se.Note)
				}
			}
		}
	}
}
