package sqlite_test

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/errorlog"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

// TestThroughputFromTheEnginesRate: a short restore's throughput is the
// 3014 line's MB/sec, which the engine computed from a finer clock than the
// seconds it printed ("25378 pages in 0.499 seconds (397.318 MB/sec)": the
// pages over 0.499 s would be 397.326); a long one's is the pages over the
// seconds, the more precise there. Each says which.
func TestThroughputFromTheEnginesRate(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, f := range []string{"restore_with_recovery_2024.log", "synthetic_windows_full_diff_log.log"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "ingest", "errorlog", "testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		im, err := db.NewImport(ctx, "errorlog", f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := errorlog.Parse(ctx, bytes.NewReader(b), errorlog.Options{File: f, Instance: "SQL01"}, im); err != nil {
			t.Fatal(err)
		}
		if _, err := im.CommitAndReconcile(); err != nil {
			t.Fatal(err)
		}
	}
	rs, _, err := db.ListRestores(ctx, store.RestoreFilter{})
	if err != nil {
		t.Fatal(err)
	}
	const mib = 1 << 20
	for _, c := range []struct {
		pages     int64
		mibps     float64
		source    string
		durationS float64
	}{
		{25378, 397.318, store.ThroughputEngine, 0.499},
		{6553610, 6553610.0 * 8192 / mib / 3006.912, store.ThroughputDuration, 3006.912},
	} {
		found := false
		for _, r := range rs {
			if r.Pages == nil || *r.Pages != c.pages {
				continue
			}
			found = true
			if r.LogicalMiBps == nil || math.Abs(*r.LogicalMiBps-c.mibps) > 1e-9 || r.ThroughputSource != c.source {
				t.Errorf("%d pages: %v MiB/s from %q; want %.6f from %q", c.pages, deref(r.LogicalMiBps), r.ThroughputSource, c.mibps, c.source)
			}
			if r.DurationS == nil || *r.DurationS != c.durationS {
				t.Errorf("%d pages: duration %v; want the engine's %v s as printed", c.pages, deref(r.DurationS), c.durationS)
			}
		}
		if !found {
			t.Errorf("no restore of %d pages among %d", c.pages, len(rs))
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
