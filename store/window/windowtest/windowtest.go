// Package windowtest holds the window tests both engines run
// (store/window): random imports, late and out of order, whose windowed
// derivation must equal a whole one. It imports no engine, so that each
// engine's own tests, internal ones too, run it.
package windowtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// Warehouse is what the window tests need of a warehouse.
type Warehouse interface {
	store.ImportSink
	Reconcile(ctx context.Context) error
	ReconcileAll(ctx context.Context) error
}

// Engine is what the window tests need of an engine: its warehouses, and
// what only its tests read of them.
type Engine struct {
	// Open returns a new, empty warehouse closed when its test ends.
	Open func(testing.TB) Warehouse
	// State lists, sorted, every restore by instance name, natural key and
	// content hash, and each instance's restore_date semantics, samples,
	// stored vote totals, dirty counter and windowable flag.
	State func(testing.TB, Warehouse) []string
	// Windows counts the instances the warehouse derived from a window
	// (store/window) so far.
	Windows func(Warehouse) int64
	// FactsRead counts the facts (history rows and log restores) its
	// windows read so far.
	FactsRead func(Warehouse) int64
	// Again opens a second handle on the warehouse w (another replica on
	// PostgreSQL, another process's connection on SQLite), closed when its
	// test ends.
	Again func(tb testing.TB, w Warehouse) Warehouse
	// Seeds bounds the seeds of SettledPairsRandom (0: all 12), whose
	// every step also derives a second warehouse whole: a server's round
	// trips make the 12 take minutes.
	Seeds int
}

// Fact is one record of the synthetic instance of the window tests,
// with the day of the import that brings it.
type Fact struct {
	Day  int
	Hist *store.HistoryRow
	Log  *store.LogRestore
	Host *store.HostSnapshot
}

// Facts makes an instance's facts over days: full restores of three
// databases (some of the same backup twice: rival partners for a completion
// line; some of the last full backup again days later, as a daily test
// restore of one backup does), log restores every few hours with LSN
// chains, history rows without a completion line and completion lines
// without a history row, and a host snapshot now and then. Completion lines
// often arrive days late, and now and then a day's whole history arrives
// weeks late.
//
// From day flipDay on, most restore_dates are the restores' ends: the
// instance's semantics changes on the way, which changes every restore.
func Facts(rng *rand.Rand, inst string, days, flipDay int) []Fact {
	base := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	off := 60
	var out []Fact
	out = append(out, Fact{Day: 0, Host: &store.HostSnapshot{Instance: inst, ObservedAt: base.Add(-time.Hour), UTCOffset: &off,
		Version: "15.0.4236.7", Origin: store.Origin{Source: "errorlog", File: "ERRORLOG"}}})
	lsn, lastFull := map[string]int64{}, map[string]int64{}
	hid := int64(0)
	for d := range days {
		arrive := func() int {
			switch x := rng.IntN(20); {
			case x < 12:
				return d
			case x < 17:
				return d + 1 + rng.IntN(3)
			default:
				return d + rng.IntN(days)
			}
		}
		if d > 0 && rng.IntN(9) == 0 {
			v := fmt.Sprintf("15.0.%d.1", 4236+d)
			var o *int
			if rng.IntN(2) == 0 {
				o = &off
			}
			out = append(out, Fact{Day: arrive(), Host: &store.HostSnapshot{Instance: inst,
				ObservedAt: base.AddDate(0, 0, d).Add(time.Duration(rng.IntN(24)) * time.Hour), UTCOffset: o,
				Version: v, Origin: store.Origin{Source: "errorlog", File: "ERRORLOG"}}})
		}
		for db := range 3 {
			name := fmt.Sprintf("DB%d", db)
			restores := 1 + rng.IntN(3)
			for range restores {
				kind, rtype, msg, stmt := store.KindFull, "D", 18267, "RESTORE DATABASE"
				if rng.IntN(3) > 0 {
					kind, rtype, msg, stmt = store.KindLog, "L", 18268, "RESTORE LOG"
				}
				start := base.AddDate(0, 0, d).Add(time.Duration(rng.IntN(86400)) * time.Second)
				secs := float64(5 + rng.IntN(3000))
				if rng.IntN(40) == 0 {
					secs = float64(30000 + rng.IntN(100000)) // a restore of hours: pairs far from its restore_date
				}
				end := start.Add(time.Duration(secs * float64(time.Second))).Truncate(10 * time.Millisecond)
				first := lsn[name] + 1
				if kind == store.KindFull && rng.IntN(4) == 0 && lsn[name] > 100 {
					first = lsn[name] - 100 // the same backup again
				}
				if kind == store.KindFull && lastFull[name] > 0 && rng.IntN(3) == 0 {
					first = lastFull[name] // the last full backup restored again, a day or more later
				}
				if kind == store.KindFull {
					lastFull[name] = first
				}
				last := first + 100
				lsn[name] = max(lsn[name], last)
				fl, ll := fmt.Sprint(first*1000), fmt.Sprint(last*1000)
				if rng.IntN(6) == 0 {
					fl, ll = "", ""
				}
				rd := start
				if rng.IntN(12) == 0 || d >= flipDay && rng.IntN(4) > 0 {
					rd = end.Truncate(time.Second) // a restore_date at the end: a contrary vote
				}
				pages := int64(1000 + rng.IntN(100000))
				if rng.IntN(10) > 0 {
					hid++
					h := &store.HistoryRow{Instance: inst, RestoreHistoryID: hid, RestoreDate: rd.Truncate(time.Second), Database: name,
						RestoreType: rtype, FirstLSN: fl, LastLSN: ll, Devices: []string{fmt.Sprintf(`\\nas\%s_%d.bak`, name, first)},
						Origin: store.Origin{Source: "history", File: "h.csv"}}
					out = append(out, Fact{Day: arrive(), Hist: h})
				}
				if rng.IntN(10) > 0 {
					l := &store.LogRestore{Instance: inst, Database: name, Kind: kind, MessageID: msg, CompletedAt: end,
						UTCOffset: &off, FirstLSN: fl, LastLSN: ll, DeviceCount: 1, DeviceType: "DISK",
						Devices: []string{fmt.Sprintf(`\\nas\%s_%d.bak`, name, first)}, Has3014: true, Statement: stmt,
						Pages: pages, Seconds: secs, MBps: float64(pages) * 8192 / (1 << 20) / secs,
						Origin: store.Origin{Source: "errorlog", File: "ERRORLOG"}}
					out = append(out, Fact{Day: arrive(), Log: l})
				}
			}
		}
	}
	return out
}

// Import imports facts in one import, committed, not derived.
func Import(tb testing.TB, db store.ImportSink, facts []Fact) {
	tb.Helper()
	if err := importFacts(db, facts); err != nil {
		tb.Fatal(err)
	}
}

// EqualsWhole imports random instances' facts day by day, late and
// out of order, reconciling after each import (windows wherever they are
// allowed), and compares the restores with those of a warehouse that
// imported the same facts in the same order and derived every instance
// whole once.
func EqualsWhole(t *testing.T, e Engine) {
	ctx := context.Background()
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 16))
			// The second instance's semantics flips, once its votes turn.
			facts, byDay := fleetFacts(rng, 40, 1, 40/4)
			win, whole := e.Open(t), e.Open(t)
			for _, day := range byDay {
				if len(day) == 0 {
					continue
				}
				Import(t, win, day)
				if err := win.Reconcile(ctx); err != nil {
					t.Fatal(err)
				}
				Import(t, whole, day)
			}
			if err := whole.ReconcileAll(ctx); err != nil {
				t.Fatal(err)
			}
			if e.Windows(win) == 0 {
				t.Fatal("no instance was derived from a window: the test proves nothing")
			}
			want := e.State(t, whole)
			sameState(t, "windows", e.State(t, win), want)
			t.Logf("%d facts, %d restores, %d windowed derivations", len(facts), len(want), e.Windows(win))
		})
	}
}

// ConcurrentEqualsWhole is EqualsWhole with two writers: each day's facts
// are split between two handles on one warehouse (two replicas, or two
// processes), which import their halves and derive at the same time, the
// same instances from windows while the other's import lands. What they
// leave must be what deriving every instance of that warehouse whole then
// leaves (not another warehouse's: the order in which the halves commit
// numbers the facts, and a restore known by its log line alone is named
// by that number).
func ConcurrentEqualsWhole(t *testing.T, e Engine) {
	ctx := context.Background()
	for seed := range uint64(2) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 32))
			facts, byDay := fleetFacts(rng, 30, 2, 30/3)
			a := e.Open(t)
			ws := [2]Warehouse{a, e.Again(t, a)}
			for _, day := range byDay {
				if len(day) == 0 {
					continue
				}
				var halves [2][]Fact
				for _, f := range day {
					k := rng.IntN(2)
					halves[k] = append(halves[k], f)
				}
				var wg sync.WaitGroup
				errs := make([]error, 2)
				for i, w := range ws {
					wg.Go(func() {
						if len(halves[i]) > 0 {
							if errs[i] = importFacts(w, halves[i]); errs[i] != nil {
								return
							}
						}
						errs[i] = w.Reconcile(ctx)
					})
				}
				wg.Wait()
				for i, err := range errs {
					if err != nil {
						t.Fatalf("writer %d: %v", i, err)
					}
				}
			}
			// What one writer marked while the other derived is derived by
			// the next reconciliation; after the last day there is none.
			for _, w := range ws {
				if err := w.Reconcile(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if e.Windows(ws[0])+e.Windows(ws[1]) == 0 {
				t.Fatal("no instance was derived from a window: the test proves nothing")
			}
			got := e.State(t, ws[0])
			if err := ws[1].ReconcileAll(ctx); err != nil {
				t.Fatal(err)
			}
			want := e.State(t, ws[0])
			sameState(t, "concurrent windows", got, want)
			t.Logf("%d facts, %d restores, %d+%d windowed derivations", len(facts), len(want), e.Windows(ws[0]), e.Windows(ws[1]))
		})
	}
}

// fleetFacts makes three instances' facts over days (Facts), instance flip's
// semantics flipping on flipDay, and the same facts by the day of the
// import that brings them.
func fleetFacts(rng *rand.Rand, days, flip, flipDay int) (facts []Fact, byDay [][]Fact) {
	for i := range 3 {
		f := days + 1
		if i == flip {
			f = flipDay
		}
		facts = append(facts, Facts(rng, fmt.Sprintf("SQL%d", i), days, f)...)
	}
	byDay = make([][]Fact, 2*days)
	for _, f := range facts {
		byDay[f.Day] = append(byDay[f.Day], f)
	}
	return facts, byDay
}

// sameState reports every line of the state one derivation left that the
// other did not (after: which derivation got got).
func sameState(t *testing.T, after string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	for _, s := range want {
		if !slices.Contains(got, s) {
			t.Errorf("missing after %s: %s", after, s)
		}
	}
	for _, s := range got {
		if !slices.Contains(want, s) {
			t.Errorf("only after %s: %s", after, s)
		}
	}
}

// importFacts is Import returning its error, for a goroutine.
func importFacts(db store.ImportSink, facts []Fact) error {
	im, err := db.NewImport(context.Background(), "test", "window")
	if err != nil {
		return err
	}
	for _, f := range facts {
		switch {
		case f.Hist != nil:
			err = im.History(*f.Hist)
		case f.Log != nil:
			err = im.LogRestore(*f.Log)
		default:
			err = im.Host(*f.Host)
		}
		if err != nil {
			return err
		}
	}
	_, err = im.Commit()
	return err
}
