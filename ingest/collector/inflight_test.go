package collector_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/collector"
	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/ingest/mssql/mssqltest"
	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
	"github.com/restorewatch/restorewatch/store"
)

func TestInflightSamplingKeepsTheCurve(t *testing.T) {
	f := newFleet(t)
	// The restore advances one step each time the collector has sampled
	// it, so the test follows the collector's pace, not a clock: a busy
	// machine makes it slower, never wrong.
	answered, scripted := make(chan struct{}), make(chan struct{})
	in := f.addServed("SQL01", "16.0.4135.4", serving{wrap: func(h tdstest.Handler) tdstest.Handler {
		return tdstest.HandlerFunc(func(ctx context.Context, q tdstest.Query) ([]tdstest.ResultSet, error) {
			sets, err := h.Handle(ctx, q)
			if mssql.QueryName(q.SQL) == "inflight" {
				select {
				case answered <- struct{}{}:
				case <-scripted:
				case <-ctx.Done():
				}
			}
			return sets, err
		})
	}})
	in.SetClock(time.Time{}) // the server's clock runs: samples need distinct times
	f.cfg.Collector.InflightInterval = 40 * time.Millisecond
	start := in.Now().Add(-10 * time.Minute).Truncate(time.Second)
	running := func(pct float64) mssqltest.Running {
		return mssqltest.Running{SessionID: 57, Start: start, Command: "RESTORE DATABASE", Percent: pct,
			EstMs: int64((100 - pct) * 6000), WaitType: "BACKUPIO",
			Statement: "RESTORE DATABASE [Big DB] FROM DISK = N'F:\\b.bak' WITH PASSWORD = 'hunter2', STATS = 5"}
	}
	in.SetRunning(running(5))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- collector.Run(ctx, f.db, f.cfg, collector.Options{Logger: f.logger()}) }()
	for pct := 10.0; pct <= 100; pct += 10 {
		<-answered // the pass or a sample saw the previous step
		in.SetRunning(running(pct))
	}
	<-answered // 100 % seen
	in.SetRunning()
	<-answered // seen gone: the collector ends the curve
	close(scripted)
	var curves []store.InflightCurve
	waitFor(t, "the ended curve in the warehouse", func() bool {
		var err error
		if curves, err = f.db.InflightCurves(context.Background(), time.Unix(0, 0)); err != nil {
			t.Fatal(err)
		}
		return len(curves) == 1 && curves[0].Ended
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(curves) != 1 {
		t.Fatalf("%d curves, want 1", len(curves))
	}
	c := curves[0]
	if c.Database != "Big DB" || c.SessionID != 57 || !c.Start.Equal(start) || !c.Ended || c.UTCOffset != testOffset {
		t.Errorf("curve %s/%d start %v ended %v offset %d", c.Database, c.SessionID, c.Start, c.Ended, c.UTCOffset)
	}
	if strings.Contains(c.Statement, "hunter2") || !strings.Contains(c.Statement, "[redacted]") {
		t.Errorf("statement not redacted: %s", c.Statement)
	}
	if len(c.Points) < 5 {
		t.Fatalf("%d points, want the progress sampled while it ran", len(c.Points))
	}
	for i := 1; i < len(c.Points); i++ {
		if c.Points[i].Percent < c.Points[i-1].Percent || !c.Points[i].At.After(c.Points[i-1].At) {
			t.Errorf("points out of order: %+v then %+v", c.Points[i-1], c.Points[i])
		}
	}
	// The curve is found again from the restore's start, within a tolerance,
	// as the restore page will look it up.
	if got, err := f.db.InflightCurveFor(context.Background(), "SQL01", "Big DB", start.Add(3*time.Second), 10*time.Second); err != nil || len(got.Points) != len(c.Points) {
		t.Errorf("InflightCurveFor: %v", err)
	}
	// While the restore ran, the error-log watermark kept the next read
	// starting before the restore's first lines (its buffer block, phases).
	v, _, _ := f.db.Watermark(context.Background(), "SQL01", mssql.SourceErrorLog)
	var m mssql.LogMark
	if err := json.Unmarshal([]byte(v), &m); err != nil || m.From.After(start.Add(-mssql.Lookback)) {
		t.Errorf("error-log watermark %s: reads from after the running restore's start %v", v, start)
	}
	// Sampling reused the pass's connection: one login (go-mssqldb pings once per connection).
	pings := 0
	for _, q := range f.srv["SQL01"].Queries() {
		if q.SQL == "select 1;" {
			pings++
		}
	}
	if pings != 1 {
		t.Errorf("%d logins for one pass and its sampling", pings)
	}
}

// A sample slower than the sampling interval delays the next one; it used
// to hit a deadline of one interval and end the sampling of the restore.
func TestSlowSampleKeepsSampling(t *testing.T) {
	f := newFleet(t)
	in := f.add("SQL01", "16.0.4135.4")
	in.SetClock(time.Time{})
	f.cfg.Collector.InflightInterval = 40 * time.Millisecond
	in.Delay("inflight", 200*time.Millisecond) // five intervals per sample
	start := in.Now().Add(-time.Minute).Truncate(time.Second)
	in.SetRunning(mssqltest.Running{SessionID: 61, Start: start, Command: "RESTORE LOG", Percent: 40, WaitType: "BACKUPIO",
		Statement: "RESTORE LOG [Slow] FROM DISK = N'x.trn'"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- collector.Run(ctx, f.db, f.cfg, collector.Options{Logger: f.logger()}) }()
	failed := func() bool { return strings.Contains(f.logs.String(), "in-flight sample failed") }
	waitFor(t, "a third sample started, or a failed one", func() bool { return in.Calls("inflight") >= 4 || failed() })
	in.SetRunning()
	var curves []store.InflightCurve
	waitFor(t, "the curve's end, or a failed sample", func() bool {
		curves, _ = f.db.InflightCurves(context.Background(), time.Unix(0, 0))
		return failed() || len(curves) == 1 && curves[0].Ended
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if failed() {
		t.Fatalf("a slow sample ended the sampling: %s", f.logs.String())
	}
	if len(curves[0].Points) < 3 {
		t.Errorf("%d points, want the pass's and two samples", len(curves[0].Points))
	}
}
