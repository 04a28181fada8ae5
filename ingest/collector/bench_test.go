package collector_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/ingest/collector"
	"github.com/restorewatch/restorewatch/ingest/mssql"
	"github.com/restorewatch/restorewatch/ingest/mssql/mssqltest"
	"github.com/restorewatch/restorewatch/ingest/mssql/tdstest"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

// BenchmarkPass500 measures one --once pass over 500 instances at
// concurrency 32, each served by its own TDS test server on 127.0.0.1 and
// holding a startup banner and 5 restores (history rows and error-log
// lines), into an empty warehouse; then the same with 10 % of the servers
// hung (they accept TCP and never answer the login). The hung case should
// cost at most one timeout more. Run it with:
//
//	GOTOOLCHAIN=go1.27.3 go test ./ingest/collector -run '^$' -bench Pass500 -benchtime 1x -timeout 30m
//
// RW_BENCH_INSTANCES and RW_BENCH_TIMEOUT (a duration) change the fleet size
// and the per-instance timeout (default 5s).
func BenchmarkPass500(b *testing.B) {
	n := 500
	if v, err := strconv.Atoi(os.Getenv("RW_BENCH_INSTANCES")); err == nil && v > 0 {
		n = v
	}
	timeout := 5 * time.Second
	if v, err := time.ParseDuration(os.Getenv("RW_BENCH_TIMEOUT")); err == nil {
		timeout = v
	}
	servers, instances := benchFleet(b, n)
	jitter := time.Duration(0)
	cfg := &mssql.Config{Instances: instances, Collector: mssql.Collector{Interval: time.Hour, Timeout: timeout,
		Concurrency: 32, InflightInterval: 10 * time.Second, Jitter: &jitter}}

	for _, hung := range []int{0, n / 10} {
		b.Run(fmt.Sprintf("hung=%d", hung), func(b *testing.B) {
			for i := range n {
				servers[i].Hang(i < hung) // the first ones: they are started first, the worst case
			}
			var last time.Duration
			var cpu float64
			for b.Loop() {
				b.StopTimer()
				db, err := sqlite.Open(context.Background(), b.TempDir()+"/bench.db")
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start, cpu0 := time.Now(), cpuSeconds()
				err = collector.Run(context.Background(), db, cfg, collector.Options{Once: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
				last, cpu = time.Since(start), cpuSeconds()-cpu0
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				runs, _ := db.LatestRuns(context.Background())
				ok := 0
				for _, r := range runs {
					if r.Status == store.RunOK {
						ok++
					}
				}
				if ok != n-hung {
					b.Errorf("%d instances collected, want %d", ok, n-hung)
				}
				db.Close()
				b.StartTimer()
			}
			b.ReportMetric(last.Seconds(), "s/pass")
			b.ReportMetric(float64(n)/last.Seconds(), "instances/s")
			b.ReportMetric(cpu, "cpu_s/pass")
			b.ReportMetric(peakRSSMiB(), "peakRSS_MiB")
		})
	}
}

// benchFleet starts n scripted instances, each on its own TDS server.
func benchFleet(b *testing.B, n int) ([]*tdstest.Server, []mssql.Instance) {
	os.Setenv(passEnv, testPass)
	servers := make([]*tdstest.Server, n)
	var instances []mssql.Instance
	for i := range n {
		name := fmt.Sprintf("BENCH%03d", i)
		in := mssqltest.New(name, "16.0.4135.4", testOffset)
		in.SetClock(base)
		in.Startup(base.Add(-72 * time.Hour))
		scriptRestores(in, "Sales", base.Add(-48*time.Hour), 5, 60)
		srv, addr, err := mssqltest.Serve(in, testUser, testPass)
		if err != nil {
			b.Fatal(err)
		}
		servers[i] = srv
		_, port, _ := net.SplitHostPort(addr)
		p, _ := strconv.Atoi(port)
		instances = append(instances, mssql.Instance{Name: name, Host: "127.0.0.1", Port: p, Auth: "sql",
			User: testUser, PasswordEnv: passEnv, Encrypt: "disable"})
	}
	b.Cleanup(func() {
		for _, s := range servers {
			s.Close()
		}
	})
	return servers, instances
}

// BenchmarkFetch500 is the collector's share of BenchmarkPass500: the same
// queries over the same fleet at concurrency 32, read into memory without a
// warehouse. The difference between the two is the warehouse's cost
// (import, reconciliation, analysis, run records), serialised on its single
// writer connection.
func BenchmarkFetch500(b *testing.B) {
	n := 500
	if v, err := strconv.Atoi(os.Getenv("RW_BENCH_INSTANCES")); err == nil && v > 0 {
		n = v
	}
	_, instances := benchFleet(b, n)
	for b.Loop() {
		start := time.Now()
		sem := make(chan struct{}, 32)
		var wg sync.WaitGroup
		var mu sync.Mutex
		restores := 0
		for _, in := range instances {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				s, err := mssql.Connect(ctx, in, 30*time.Second)
				if err != nil {
					b.Error(err)
					return
				}
				defer s.Close()
				h, err := s.Host(ctx)
				if err == nil {
					_, err = s.Inflight(ctx)
				}
				if err == nil {
					_, err = s.History(ctx, mssql.HistoryMark{}, 100000)
				}
				var el *mssql.ErrorLogResult
				if err == nil {
					el, err = s.ErrorLog(ctx, mssql.LogMark{}, h.Now, time.Time{}, 100000)
				}
				if err == nil {
					_, err = s.Agent(ctx, mssql.AgentMark{}, 10000)
				}
				if err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				restores += len(el.Restores)
				mu.Unlock()
			}()
		}
		wg.Wait()
		if restores != 5*n {
			b.Errorf("%d restores read, want %d", restores, 5*n)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/pass")
	}
	b.ReportMetric(peakRSSMiB(), "peakRSS_MiB")
}

// peakRSSMiB reads the process's peak resident set (Linux; 0 elsewhere).
func peakRSSMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}
