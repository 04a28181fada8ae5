package web_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web"
)

// countedRuns counts the reads of the collector's latest runs, each taking
// delay.
type countedRuns struct {
	web.Store
	delay time.Duration
	n     *atomic.Int64
}

func (c countedRuns) LatestRuns(ctx context.Context) ([]store.CollectorRun, error) {
	c.n.Add(1)
	time.Sleep(c.delay)
	return c.Store.LatestRuns(ctx)
}

// The overview's collector status reuses a slow read of the latest runs
// for a few seconds (on a large fleet it was half of every overview view;
// BENCHMARKS.md has the page's figure). A quick read
// (a small fleet) is not kept; how quick depends on the machine, so only
// the slow side is held here.
func TestOverviewReusesASlowReadOfTheLatestRuns(t *testing.T) {
	var n atomic.Int64
	cfg := webConfig(demoDB(t))
	cfg.DB = countedRuns{Store: cfg.DB, delay: 20 * time.Millisecond, n: &n}
	_, ts := serve(t, cfg)
	cl := client(t)
	for range 3 {
		if code, _, _ := get(t, cl, ts.URL+"/"); code != http.StatusOK {
			t.Fatalf("overview: %d", code)
		}
	}
	if got := n.Load(); got != 1 {
		t.Errorf("%d reads of the latest runs for 3 views within seconds, want 1", got)
	}
}
