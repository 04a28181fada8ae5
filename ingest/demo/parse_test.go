package demo_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/ingest/csv"
	"github.com/restorewatch/restorewatch/ingest/errorlog"
	"github.com/restorewatch/restorewatch/store"
)

// These tests run the parsers on the demo files without a warehouse, so a
// mismatch between the demo and a parser shows up as a line, not as a wrong
// number three layers later.

func TestParsersReadTheFleet(t *testing.T) {
	f, _ := defaultFleet(t)
	type key struct{ instance, db, first, last string }
	truth := map[key]truthRow{}
	for _, r := range readTruth(t, f) {
		truth[key{r.instance, r.db, r.first, r.last}] = r
	}
	ctx := context.Background()
	var hist store.Collect
	fh, err := os.Open(f.Files[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = csv.Parse(ctx, fh, csv.Options{File: filepath.Base(f.Files[0].Path)}, &hist)
	fh.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(hist.Rejects) > 0 {
		t.Errorf("history: %d rejects, first %v", len(hist.Rejects), hist.Rejects[0])
	}
	if len(hist.Histories) != len(truth) || len(truth) != f.Restores {
		t.Errorf("history rows %d, truth %d, Fleet.Restores %d", len(hist.Histories), len(truth), f.Restores)
	}
	for _, h := range hist.Histories {
		if _, ok := truth[key{h.Instance, h.Database, h.FirstLSN, h.LastLSN}]; !ok {
			t.Fatalf("history row %s %s %s..%s is not in the truth", h.Instance, h.Database, h.FirstLSN, h.LastLSN)
		}
	}
	seen := 0
	for _, file := range f.Files {
		if file.Kind != ingest.ErrorLog {
			continue
		}
		var c store.Collect
		fh, err := os.Open(file.Path)
		if err != nil {
			t.Fatal(err)
		}
		st, err := errorlog.Parse(ctx, fh, errorlog.Options{File: filepath.Base(file.Path)}, &c)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", file.Path, err)
		}
		if st.Instance != file.Instance || st.InstanceSource != "server_name" {
			t.Errorf("%s: instance %q from %q", file.Path, st.Instance, st.InstanceSource)
		}
		for _, r := range c.Rejects {
			t.Errorf("%s: reject %v", file.Path, r)
		}
		if len(c.Hosts) == 0 || c.Hosts[0].Version == "" || c.Hosts[0].UTCOffset == nil {
			t.Fatalf("%s: no startup snapshot with a build and an offset", file.Path)
		}
		for _, l := range c.LogRestores {
			seen++
			tr, ok := truth[key{l.Instance, l.Database, l.FirstLSN, l.LastLSN}]
			switch {
			case !ok:
				t.Errorf("%s:%d: restore %s %s..%s not in the truth", file.Path, l.Origin.Line, l.Database, l.FirstLSN, l.LastLSN)
			case !l.Has3014 || math.Abs(l.Seconds*1000-float64(tr.durMS)) > 0.5:
				t.Errorf("%s:%d: %s seconds %v (3014 %v), truth %d ms", file.Path, l.Origin.Line, l.Database, l.Seconds, l.Has3014, tr.durMS)
			case string(l.Kind) != tr.kind:
				t.Errorf("%s:%d: kind %s, truth %s", file.Path, l.Origin.Line, l.Kind, tr.kind)
			}
		}
	}
	want := 0
	for _, r := range truth {
		if r.inLog {
			want++
		}
	}
	if seen != want || seen == 0 {
		t.Errorf("error logs gave %d restores, truth has %d in the logs", seen, want)
	}
}

// TestErrorLogKeepsEveryBufferBlock checks that every restore on an instance
// running trace flag 3213 gets its own buffer block. The full of a
// full+diff job runs WITH NORECOVERY on the same session as the diff, whose
// block follows ~10 s after the full's completion line; the parser must give
// the full its block before the diff's replaces it.
func TestErrorLogKeepsEveryBufferBlock(t *testing.T) {
	f, _ := defaultFleet(t)
	missing, total := 0, 0
	first := ""
	for _, file := range f.Files {
		if file.Kind != ingest.ErrorLog {
			continue
		}
		var c store.Collect
		fh, err := os.Open(file.Path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = errorlog.Parse(context.Background(), fh, errorlog.Options{File: filepath.Base(file.Path)}, &c)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Hosts) == 0 || !slices.Contains(c.Hosts[0].TraceFlags, 3213) {
			continue
		}
		for _, l := range c.LogRestores {
			total++
			if l.Buffer == nil || l.Buffer.BufferCount == 0 {
				missing++
				if first == "" {
					first = fmt.Sprintf("%s:%d (%s %s)", file.Path, l.Origin.Line, l.Database, l.Kind)
				}
			}
		}
	}
	if total == 0 || missing > 0 {
		t.Errorf("%d of %d restores on TF 3213 instances have no buffer block; first %s", missing, total, first)
	}
}
