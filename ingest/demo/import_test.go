package demo_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/demo"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/storetest"
)

// TestImportFindsEveryRestore imports the default fleet into a real
// warehouse and checks each restore against the truth: there once, engine
// durations inside the error-log window, unknown before it, UTC instants
// from the logs' UTC adjustment, and nothing added by a second import.
func TestImportFindsEveryRestore(t *testing.T) {
	f, _ := defaultFleet(t)
	ctx := context.Background()
	db := storetest.OpenEngine(t)
	calls := 0
	sum, err := demo.Import(ctx, db, f, func(done, total int) {
		calls++
		if done != calls || total != len(f.Files) {
			t.Errorf("progress(%d, %d) at call %d", done, total, calls)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Files != len(f.Files) || calls != len(f.Files) {
		t.Errorf("imported %d files, progress %d times; fleet has %d", sum.Files, calls, len(f.Files))
	}
	for i, r := range sum.Rejects {
		if i < 10 {
			t.Errorf("reject: %v", r)
		}
	}
	t.Run("restores", func(t *testing.T) { checkRestores(t, db, f) })
	t.Run("stories", func(t *testing.T) { checkStories(t, db, f) })
	t.Run("instances", func(t *testing.T) { checkInstances(t, db, f) })
	again, err := demo.Import(ctx, db, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.Added != 0 || again.Duplicates != again.Read {
		t.Errorf("re-import added %d (read %d, duplicates %d)", again.Added, again.Read, again.Duplicates)
	}
}

func checkRestores(t *testing.T, db store.Warehouse, f demo.Fleet) {
	ctx := context.Background()
	restores, total, err := db.ListRestores(ctx, store.RestoreFilter{})
	if err != nil {
		t.Fatal(err)
	}
	truth := readTruth(t, f)
	if total != len(truth) || len(restores) != total {
		t.Errorf("warehouse has %d restores (listed %d), the fleet wrote %d", total, len(restores), len(truth))
	}
	key := func(instance, db, kind, devices string) string {
		return instance + "\x00" + db + "\x00" + kind + "\x00" + devices
	}
	got := map[string]store.Restore{}
	for _, r := range restores {
		k := key(r.Instance, r.Database, string(r.Kind), strings.Join(r.Devices, "|"))
		if _, dup := got[k]; dup {
			t.Errorf("restore %s %s %s %v is there twice", r.Instance, r.Database, r.Kind, r.Devices)
		}
		got[k] = r
	}
	endDates := map[string]bool{"DWH-SQL02": true}
	bad := 0
	for _, tr := range truth {
		r, ok := got[key(tr.instance, tr.db, tr.kind, tr.devices)]
		if !ok {
			t.Errorf("restore %s %s %s at %v is missing", tr.instance, tr.db, tr.kind, tr.start)
			bad++
		} else if msg := checkRestore(r, tr, endDates[tr.instance]); msg != "" {
			t.Errorf("%s %s %s started %v: %s", tr.instance, tr.db, tr.kind, tr.start, msg)
			bad++
		}
		if bad > 20 {
			t.Fatal("too many differences")
		}
	}
}

func checkRestore(r store.Restore, tr truthRow, endDates bool) string {
	near := func(a, b time.Time, d time.Duration) bool { return a.Sub(b) < d && b.Sub(a) < d }
	if !r.OffsetKnown {
		return "UTC offset unknown"
	}
	if !tr.inLog {
		// msdb's restore_date alone, at datetime precision: the start, or
		// the end on the instance whose msdb says so.
		want := tr.start
		if endDates {
			want = tr.end
		}
		switch {
		case r.DurationSource != store.DurationUnknown || r.DurationS != nil:
			return "before the error-log window, yet duration " + r.DurationSource
		case !near(r.At, want, 3*time.Millisecond):
			return "at " + r.At.String() + ", want " + want.String()
		}
		return ""
	}
	switch {
	case r.DurationSource != store.DurationEngine || r.DurationS == nil:
		return "duration source " + r.DurationSource
	case math.Abs(*r.DurationS*1000-float64(tr.durMS)) > 1:
		return "duration " + time.Duration(*r.DurationS*float64(time.Second)).String() + ", truth " + (time.Duration(tr.durMS) * time.Millisecond).String()
	case !near(r.At, tr.end, 50*time.Millisecond):
		// The completion line, 30 ms before the 3014 line, at centiseconds.
		return "at " + r.At.String() + ", truth end " + tr.end.String()
	case !strings.Contains(r.Sources, "history") || !strings.Contains(r.Sources, "errorlog"):
		return "sources " + r.Sources
	case tr.db == "CRM_Restore" && !strings.Contains(r.Sources, "messages"):
		return "manual restore not merged with its SSMS output: " + r.Sources
	}
	return ""
}

// checkStories holds the analysis to the stories' truth: every planted
// regression is found at the restore the story changed at, with its factor
// and known issue; nothing else is flagged as a regression.
func checkStories(t *testing.T, db store.Warehouse, f demo.Fleet) {
	regs, err := db.ListRegressions(context.Background(), store.RegressionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	type series struct {
		instance, db string
		kind         store.Kind
	}
	found := map[series]store.Regression{}
	for _, g := range regs {
		if g.Direction == "regression" {
			found[series{g.Instance, g.Database, g.Kind}] = g
		}
	}
	for _, st := range f.Stories {
		g, ok := found[series{st.Instance, st.Database, st.Kind}]
		delete(found, series{st.Instance, st.Database, st.Kind})
		if st.Expect != "regression" {
			if ok {
				t.Errorf("%s %s (%s, expect %s) flagged as a regression at %v", st.Instance, st.Database, st.Name, st.Expect, g.ChangedAt)
			}
			continue
		}
		if !ok {
			t.Errorf("story %q on %s %s not found", st.Name, st.Instance, st.Database)
			continue
		}
		if d := g.ChangedAt.Sub(st.ChangedAt); d < -time.Second || d > time.Second {
			t.Errorf("story %q changed at %v, found at %v", st.Name, st.ChangedAt, g.ChangedAt)
		}
		if st.Factor != "" && (len(g.ChangedFactors) == 0 || g.ChangedFactors[0].Factor != st.Factor ||
			g.ChangedFactors[0].Before != st.Before || g.ChangedFactors[0].After != st.After) {
			t.Errorf("story %q: factor %s %s→%s, found %+v", st.Name, st.Factor, st.Before, st.After, g.ChangedFactors)
		}
		if st.KnownIssue != "" && !slices.Contains(g.KnownIssues, st.KnownIssue) {
			t.Errorf("story %q: known issue %s not matched: %v", st.Name, st.KnownIssue, g.KnownIssues)
		}
	}
	for s, g := range found {
		t.Errorf("regression on %s %s %s at %v is no story", s.instance, s.db, s.kind, g.ChangedAt)
	}
}

// checkInstances checks what the error logs say of the instances: the build
// history (a CU at a restart shows as the newest build) and the measured
// restore_date semantics (the end on DWH-SQL02, the start elsewhere).
func checkInstances(t *testing.T, db store.Warehouse, f demo.Fleet) {
	ins, err := db.ListInstances(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]store.InstanceSummary{}
	for _, i := range ins {
		byName[i.Name] = i
	}
	for _, st := range f.Stories {
		if st.Name == "instance CU" && byName[st.Instance].Build != st.After {
			t.Errorf("%s: latest build %q, want %q", st.Instance, byName[st.Instance].Build, st.After)
		}
	}
	for name, want := range map[string]string{"DWH-SQL02": "end", `RPT-SQL01\REPORTING`: "start", "LNX-SQL05": "start"} {
		if got := byName[name].RestoreDateSemantics; got != want {
			t.Errorf("%s: restore_date semantics %q, want %q", name, got, want)
		}
	}
}
