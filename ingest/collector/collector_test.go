package collector_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/mssql/mssqltest"
	"github.com/restorewatch/restorewatch/store"
)

// scriptRestores adds n full restores of db, one an hour, each taking
// seconds, ending well before the server's clock.
func scriptRestores(in *mssqltest.Instance, db string, from time.Time, n int, seconds float64) {
	for i := 0; i < n; i++ {
		in.AddRestore(mssqltest.Restore{Database: db, Kind: store.KindFull, Start: from.Add(time.Duration(i) * time.Hour),
			Seconds: seconds, Bytes: 10 << 30})
	}
}

func TestOncePassSeveralInstances(t *testing.T) {
	f := newFleet(t)
	names := []string{"SQL01", `SQL02\REPORTING`, "SQL03"}
	for i, name := range names {
		in := f.add(name, "13.0.4474.0")
		in.Startup(base.Add(-72 * time.Hour))
		scriptRestores(in, "Sales", base.Add(-48*time.Hour), 3+i, 120)
		in.SetClock(base.Add(time.Duration(i) * time.Minute))
	}
	f.once()
	runs := f.runs()
	for i, name := range names {
		r, ok := runs[name]
		if !ok {
			t.Fatalf("no run for %s", name)
		}
		if r.Status != store.RunOK || len(r.Errors) != 0 {
			t.Errorf("%s: status %s errors %v notes %v", name, r.Status, r.Errors, r.Notes)
		}
		if got, want := r.Rows["history"], int64(3+i); got != want {
			t.Errorf("%s: history rows = %d, want %d", name, got, want)
		}
		if got, want := r.Rows["errorlog"], int64(3+i); got != want {
			t.Errorf("%s: errorlog restores = %d, want %d", name, got, want)
		}
		rs := f.restores(name)
		if len(rs) != 3+i {
			t.Fatalf("%s: %d restores, want %d", name, len(rs), 3+i)
		}
		for _, x := range rs {
			if x.DurationSource != store.DurationEngine || x.DurationS == nil || *x.DurationS != 120 {
				t.Errorf("%s: restore %d duration %v from %q, want 120 s from the 3014 line", name, x.ID, x.DurationS, x.DurationSource)
			}
			if want := []string{`D:\Data\Sales.mdf`, `L:\Log\Sales_log.ldf`}; !slices.Equal(x.DestinationFiles, want) {
				t.Errorf("%s: destination files %q, want %q (restorefile)", name, x.DestinationFiles, want)
			}
			if x.InstanceBuild != "13.0.4474.0" {
				t.Errorf("%s: instance build %q", name, x.InstanceBuild)
			}
			if !x.OffsetKnown {
				t.Errorf("%s: offset unknown although the host snapshot states it", name)
			}
		}
		for _, src := range []string{"history", "errorlog", "agent"} {
			if _, ok, err := f.db.Watermark(context.Background(), name, src); err != nil || !ok {
				t.Errorf("%s: no %s watermark (%v)", name, src, err)
			}
		}
	}
	if !strings.Contains(f.logs.String(), "instance=SQL01") {
		t.Errorf("log has no line for SQL01:\n%s", f.logs.String())
	}
}
