// Command backtest says how good restorewatch's expected restore times are
// (SPEC §5): it replays every instance's full, differential and log
// restores in a warehouse, predicting each from the restores the instance
// had finished before it with plan.Rate (the estimator every plan, RTO
// figure, API answer and report uses), and reports how often the actual
// duration fell inside the stated range and the median relative error.
// Beside it, for comparison, the estimator restorewatch had before
// "estimates follow the present": every earlier restore of the kind on the
// instance, pooled, with its 10th–90th percentiles as the range.
//
//	backtest -db restorewatch.db [-last N]
//
// Run it on the demo (`restorewatch demo`) and on a fleet builder estate
// (`go run ./bench/fleet build …`); BENCHMARKS.md keeps the figures.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/plan"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

func main() {
	path := flag.String("db", "restorewatch.db", "warehouse to replay (opened as it is; use a copy of a production one)")
	last := flag.Int("last", 0, "replay only each instance's newest N restores of a kind (0: all)")
	flag.Parse()
	if err := run(context.Background(), *path, *last); err != nil {
		fmt.Fprintln(os.Stderr, "backtest:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, path string, last int) error {
	if _, err := os.Stat(path); err != nil {
		return err
	}
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	insts, err := db.ListInstances(ctx, "")
	if err != nil {
		return err
	}
	cfg := analysis.DefaultConfig()
	fmt.Printf("%-8s %9s %8s %9s   %s\n", "kind", "predicted", "inside", "median", "before (pooled history, p10-p90): inside, median error")
	for _, k := range []store.Kind{store.KindFull, store.KindDiff, store.KindLog} {
		var now, old plan.Calibration
		for _, in := range insts {
			rates, err := db.RestoreRates(ctx, in.Name, false, 0)
			if err != nil {
				return err
			}
			c := plan.Backtest(rates, in.Name, k, last, cfg)
			now.Restores, now.Inside, now.Errors = now.Restores+c.Restores, now.Inside+c.Inside, append(now.Errors, c.Errors...)
			o := pooled(rates, in.Name, k, last)
			old.Restores, old.Inside, old.Errors = old.Restores+o.Restores, old.Inside+o.Inside, append(old.Errors, o.Errors...)
		}
		if now.Restores == 0 {
			continue
		}
		fmt.Printf("%-8s %9d %7.1f%% %8.1f%%   %.1f%%, %.1f%%\n", k, now.Restores, 100*now.Share(), 100*analysis.Median(now.Errors),
			100*old.Share(), 100*analysis.Median(old.Errors))
	}
	return nil
}

// pooled replays the estimator of before: every earlier restore of the
// kind on the instance, median and 10th–90th percentiles.
func pooled(rates []store.RestoreRate, instance string, k store.Kind, last int) plan.Calibration {
	var v []store.RestoreRate
	for _, r := range rates {
		if strings.EqualFold(r.Instance, instance) && r.Kind == k && r.LogicalMiBps > 0 && !math.IsInf(r.LogicalMiBps, 0) {
			v = append(v, r)
		}
	}
	sort.SliceStable(v, func(i, j int) bool { return v[i].At.Before(v[j].At) })
	c := plan.Calibration{Instance: instance, Kind: k}
	from := 0
	if last > 0 && len(v) > last {
		from = len(v) - last
	}
	for i := max(from, 1); i < len(v); i++ {
		var hist []float64
		for _, r := range v[:i] {
			if r.At.Before(v[i].At) {
				hist = append(hist, r.LogicalMiBps)
			}
		}
		if len(hist) == 0 {
			continue
		}
		sort.Float64s(hist)
		m, lo, hi := plan.Quantile(hist, 0.5), plan.Quantile(hist, 0.1), plan.Quantile(hist, 0.9)
		x := v[i].LogicalMiBps
		c.Restores++
		if x >= lo && x <= hi {
			c.Inside++
		}
		c.Errors = append(c.Errors, math.Abs(x/m-1))
	}
	return c
}
