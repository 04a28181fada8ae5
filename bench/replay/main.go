// Command replay measures restorewatch's detection and estimates
// walk-forward (issue 37): every series is replayed restore by restore,
// the analysis (analysis.Detect) and the estimator (plan.Rate) seeing only
// the restores before the cut, and it reports per true change how many
// restores (and days) it took to watch it and to call it a regression, the
// estimates' coverage for the first 1, 3 and 5 restores after it, and,
// away from any change, false watches, false regressions and regressions
// that later vanished.
//
//	replay -db restorewatch.db            # a warehouse: its final regressions are the true changes
//	replay -fleet [-series 300 -days 365] # generated fleets with and without changes
//
// BENCHMARKS.md keeps the figures.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/analysis"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

func main() {
	path := flag.String("db", "", "warehouse to replay (its final-state regressions are taken as the true changes)")
	fleet := flag.Bool("fleet", false, "replay generated fleets: one with changes, one null")
	series := flag.Int("series", 300, "series of each generated fleet")
	days := flag.Int("days", 365, "restores (one a day) of each generated series")
	verbose := flag.Bool("v", false, "name every false regression")
	flag.Parse()
	if *verbose {
		Verbose = os.Stdout
	}
	cfg := analysis.DefaultConfig()
	if *fleet {
		Replay(Fleet(1, *series, 120, true, 1.0/365), cfg).Print(os.Stdout, "generated fleet with changes (120 daily restores a series)")
		Replay(Fleet(2, *series, *days, false, 1.0/365), cfg).Print(os.Stdout, "generated null fleet (one-off slow restores once a series-year)")
		Replay(Fleet(3, *series, *days, false, 0), cfg).Print(os.Stdout, "generated null fleet (noise only)")
	}
	if *path != "" {
		ss, err := fromWarehouse(context.Background(), *path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "replay:", err)
			os.Exit(1)
		}
		Replay(ss, cfg).Print(os.Stdout, *path)
	}
	if !*fleet && *path == "" {
		flag.Usage()
		os.Exit(2)
	}
}

// fromWarehouse reads every instance's measured full and differential
// series (log restores are many and seldom judged one by one) and takes
// the warehouse's regressions, as its final state has them, for the true
// changes: the replay measures how soon each would have been seen.
func fromWarehouse(ctx context.Context, path string) ([]Series, error) {
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	regs, err := db.ListRegressions(ctx, store.RegressionFilter{Direction: "any"})
	if err != nil {
		return nil, err
	}
	changeAt := map[int64]bool{}
	for _, r := range regs {
		changeAt[r.ChangeRestoreID] = true
	}
	series, err := db.ListSeries(ctx, store.SeriesFilter{})
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, s := range series {
		names[s.Instance] = true
	}
	var out []Series
	for name := range names {
		rates, err := db.RestoreRates(ctx, name, false, 0)
		if err != nil {
			return nil, err
		}
		by := map[string]*Series{}
		var keys []string
		for _, r := range rates {
			if r.Kind == store.KindLog {
				continue
			}
			k := r.Database + "\x00" + string(r.Kind)
			if by[k] == nil {
				by[k] = &Series{Instance: name, Database: r.Database, Kind: r.Kind}
				keys = append(keys, k)
			}
			s := by[k]
			if changeAt[r.ID] {
				s.Changes = append(s.Changes, len(s.Points))
			}
			s.Points = append(s.Points, r)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, *by[k])
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Instance+out[i].Database < out[j].Instance+out[j].Database })
	return out, nil
}
