package plan_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/plan"
)

type fakeSource struct {
	sets  []store.BackupSet
	rates []store.RestoreRate
	tags  map[string]string
	regs  []store.Regression
	asked []string
	all   bool // every set, whatever logsFrom says
	read  int  // sets returned
}

func (f *fakeSource) BackupSets(_ context.Context, instance, database string, logsFrom time.Time) ([]store.BackupSet, error) {
	switch {
	case logsFrom.Equal(store.NoLogs):
		f.asked = append(f.asked, "bases "+instance)
	case logsFrom.IsZero() || f.all:
		f.asked = append(f.asked, "sets "+instance)
	default:
		f.asked = append(f.asked, "logs "+instance)
	}
	var out []store.BackupSet
	for _, s := range f.sets {
		if f.all || s.Type != "L" || !s.Finish.Before(logsFrom) {
			out = append(out, s)
		}
	}
	f.read += len(out)
	return out, nil
}

func (f *fakeSource) RestoreRates(_ context.Context, instance string, fleet bool, perKind int) ([]store.RestoreRate, error) {
	f.asked = append(f.asked, "rates "+instance)
	return f.rates, nil
}

func (f *fakeSource) InstanceTags(_ context.Context, instance string) (map[string]string, error) {
	f.asked = append(f.asked, "tags "+instance)
	return f.tags, nil
}

func (f *fakeSource) FileFolders(_ context.Context, instance string) (string, string, error) {
	f.asked = append(f.asked, "folders "+instance)
	return `E:\Data`, `F:\Log`, nil
}

func (f *fakeSource) BackupDatabases(context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	for _, s := range f.sets {
		out[strings.ToLower(s.Instance)+"\x00"+s.Database] = true
	}
	return out, nil
}

func (f *fakeSource) BackupReplicas(_ context.Context, name, database string) (store.Replicas, error) {
	return store.Replicas{Instances: []string{name}, Database: database}, nil
}

func (f *fakeSource) InflightCurves(context.Context, time.Time) ([]store.InflightCurve, error) {
	return nil, nil
}

func (f *fakeSource) ListRestores(context.Context, store.RestoreFilter) ([]store.Restore, int, error) {
	return nil, 0, nil
}

func (f *fakeSource) ListRegressions(_ context.Context, r store.RegressionFilter) ([]store.Regression, error) {
	f.asked = append(f.asked, "regressions "+r.Instance)
	return f.regs, nil
}

func TestMakeReadsTheTarget(t *testing.T) {
	h := newHistory(2)
	src := &fakeSource{sets: h.sets, tags: map[string]string{"rto": "1d"}}
	p, opt, err := plan.Make(context.Background(), src, plan.Request{Instance: "SQL01", Database: "Sales", TargetInstance: "DR01",
		At: h.at(day + 60), LogPath: `G:\L`})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"bases SQL01", "logs SQL01", "rates DR01", "tags DR01", "folders DR01", "regressions DR01"}
	if len(src.asked) != len(want) {
		t.Fatalf("asked %q", src.asked)
	}
	for i := range want {
		if src.asked[i] != want[i] {
			t.Errorf("asked %q, want %q", src.asked, want)
		}
	}
	if p.RTO != 24*time.Hour || p.TargetInstance != "DR01" || opt.DefaultData != `E:\Data` || opt.LogPath != `G:\L` || len(p.Steps) != 6 {
		t.Errorf("plan rto %v target %q opt %+v steps %d", p.RTO, p.TargetInstance, opt, len(p.Steps))
	}
	src.sets = nil
	if _, _, err := plan.Make(context.Background(), src, plan.Request{Instance: "SQL01", Database: "Sales"}); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("no history: %v", err)
	}
	h = newHistory(3)
	h.drop("L", h.at(2*day+60))
	src.sets = h.sets
	_, _, err = plan.Make(context.Background(), src, plan.Request{Instance: "SQL01", Database: "Sales", At: h.at(2*day + 120)})
	var gap *plan.GapError
	if !errors.As(err, &gap) {
		t.Errorf("gap: %v", err)
	}
}

func TestRTOTarget(t *testing.T) {
	for v, want := range map[string]time.Duration{"4h": 4 * time.Hour, "90m": 90 * time.Minute, "2d": 48 * time.Hour, "": plan.DefaultRTO, "x": plan.DefaultRTO} {
		if got := plan.RTOTarget(map[string]string{"rto": v}, 0); got != want {
			t.Errorf("%q: %v, want %v", v, got, want)
		}
	}
	if got := plan.RTOTarget(nil, time.Hour); got != time.Hour {
		t.Errorf("default: %v", got)
	}
}

// A plan reads its database's fulls and differentials, then only the log
// backups from a day before its base started, and is the plan it would be
// from the whole history: at every instant of a month of 15-minute logs
// with a damaged full, a copy-only full and a gap in the chain.
func TestMakeReadsOnlyTheLogsItsBaseCanUse(t *testing.T) {
	h := newHistory(30)
	for i := range h.sets {
		if h.sets[i].Type == "D" && h.sets[i].Start.Equal(h.at(14*24*60)) {
			h.sets[i].Damaged = true
		}
	}
	h.data("D", 20*24*60+7*60, true)
	var kept []store.BackupSet
	for _, s := range h.sets {
		// The gap: the logs of day 25's ninth hour are missing.
		if s.Type == "L" && !s.Finish.Before(h.at(25*24*60+8*60)) && s.Finish.Before(h.at(25*24*60+9*60)) {
			continue
		}
		kept = append(kept, s)
	}
	h.sets = kept
	logs := 0
	for _, s := range h.sets {
		if s.Type == "L" {
			logs++
		}
	}
	asked := 0
	for m := 60; m <= 30*24*60; m += 7*60 + 13 {
		at := h.at(m)
		all := &fakeSource{sets: h.sets, all: true}
		part := &fakeSource{sets: h.sets}
		want, _, werr := plan.Make(context.Background(), all, plan.Request{Instance: "SQL01", Database: "Sales", At: at})
		got, _, gerr := plan.Make(context.Background(), part, plan.Request{Instance: "SQL01", Database: "Sales", At: at})
		if fmt.Sprint(werr) != fmt.Sprint(gerr) {
			t.Fatalf("at %v: error %v, from the whole history %v", at, gerr, werr)
		}
		w, _ := json.Marshal(want)
		g, _ := json.Marshal(got)
		if string(w) != string(g) {
			t.Fatalf("at %v: the plan differs from the whole history's:\n got %.500s\nwant %.500s", at, g, w)
		}
		if part.read >= all.read {
			t.Errorf("at %v: read %d sets, the whole history is %d", at, part.read, all.read)
		}
		asked++
	}
	if asked < 80 || logs < 2800 {
		t.Fatalf("%d instants over %d logs", asked, logs)
	}
}
