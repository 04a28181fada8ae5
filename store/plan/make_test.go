package plan_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/plan"
)

type fakeSource struct {
	sets  []store.BackupSet
	rates []store.RestoreRate
	tags  map[string]string
	asked []string
}

func (f *fakeSource) BackupSets(_ context.Context, instance, database string) ([]store.BackupSet, error) {
	f.asked = append(f.asked, "sets "+instance)
	return f.sets, nil
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

func TestMakeReadsTheTarget(t *testing.T) {
	h := newHistory(2)
	src := &fakeSource{sets: h.sets, tags: map[string]string{"rto": "1d"}}
	p, opt, err := plan.Make(context.Background(), src, plan.Request{Instance: "SQL01", Database: "Sales", TargetInstance: "DR01",
		At: h.at(day + 60), LogPath: `G:\L`})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"sets SQL01", "rates DR01", "tags DR01", "folders DR01"}
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
