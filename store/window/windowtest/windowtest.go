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
	"strings"
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
	im, err := db.NewImport(context.Background(), "test", "window")
	if err != nil {
		tb.Fatal(err)
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
			tb.Fatal(err)
		}
	}
	if _, err := im.Commit(); err != nil {
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
			const days = 40
			var facts []Fact
			for i := range 3 {
				flip := days + 1
				if i == 1 {
					flip = days / 4 // the second instance's semantics flips, once its votes turn
				}
				facts = append(facts, Facts(rng, fmt.Sprintf("SQL%d", i), days, flip)...)
			}
			byDay := make([][]Fact, 2*days)
			for _, f := range facts {
				byDay[f.Day] = append(byDay[f.Day], f)
			}
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
			got, want := e.State(t, win), e.State(t, whole)
			if !slices.Equal(got, want) {
				for _, s := range want {
					if !slices.Contains(got, s) {
						t.Errorf("missing after windows: %s", s)
					}
				}
				for _, s := range got {
					if !slices.Contains(want, s) {
						t.Errorf("only after windows: %s", s)
					}
				}
			}
			t.Logf("%d facts, %d restores, %d windowed derivations", len(facts), len(want), e.Windows(win))
		})
	}
}

// salesFacts makes the facts of the hand-written window tests, hours from
// its time: history rows and completion lines of one backup of Sales (the
// same LSNs each time), and unrelated Ledger restores that give the
// instance a history.
type salesFacts struct{ T time.Time }

var salesBackup = salesFacts{time.Date(2025, 3, 20, 12, 0, 0, 0, time.UTC)}

func (s salesFacts) at(h float64) time.Time { return s.T.Add(time.Duration(h * float64(time.Hour))) }

func (s salesFacts) hist(id int64, h float64) Fact {
	return Fact{Hist: &store.HistoryRow{Instance: "SQLX", RestoreHistoryID: id, RestoreDate: s.at(h), Database: "Sales",
		RestoreType: "D", FirstLSN: "1000", LastLSN: "2000", Devices: []string{`\\nas\Sales.bak`},
		Origin: store.Origin{Source: "history", File: "h.csv"}}}
}

func (s salesFacts) line(h float64) Fact {
	off := 0
	return Fact{Log: &store.LogRestore{Instance: "SQLX", Database: "Sales", Kind: store.KindFull, MessageID: 18267,
		CompletedAt: s.at(h), UTCOffset: &off, FirstLSN: "1000", LastLSN: "2000", DeviceCount: 1, DeviceType: "DISK",
		Devices: []string{`\\nas\Sales.bak`}, Has3014: true, Statement: "RESTORE DATABASE", Pages: 1000, Seconds: 5, MBps: 1.56, // under 10 s: no semantics votes
		Origin: store.Origin{Source: "errorlog", File: "ERRORLOG"}}}
}

func (s salesFacts) other(id int64, h float64) Fact {
	f := s.hist(id, h)
	f.Hist.FirstLSN, f.Hist.LastLSN, f.Hist.Database = fmt.Sprint(id), fmt.Sprint(id+1), "Ledger"
	return f
}

// FollowsAComponentBack: facts whose pairing depends on facts
// older than the window's first read. A new history row's candidate
// completion line is a candidate of an older row, whose other candidate is
// older still and wins its contest; and a new completion line pairs with a
// history row 50 h before it. The window must read back far enough for
// both, and equal a whole derivation.
func FollowsAComponentBack(t *testing.T, e Engine) {
	hist, line, other := salesBackup.hist, salesBackup.line, salesBackup.other
	var old []Fact
	for d := range 10 {
		old = append(old, other(100+int64(d), -240+24*float64(d)))
	}
	old = append(old,
		hist(1, -73.2), line(-72.9), // H0 and L0: 0.3 h apart, they pair
		hist(2, -72.0),            // H1: 0.9 h after L0, a rival for it
		line(-0.5),                // L1: 71.5 h after H1, its candidate
		hist(10, -150), line(-99), // H3 alone, L3 51 h later
	)
	steps := [][]Fact{old, {hist(3, 0)}, {line(-98.5), hist(11, 1)}}
	if n := stepsEqualWhole(t, e, steps); n != 2 {
		t.Errorf("%d windowed derivations, want 2 (the imports after the first)", n)
	}
}

// stepsEqualWhole imports each step's facts into one warehouse that
// reconciles after each (from windows) and another derived whole after
// each, checks that both hold the same restores after every step, and
// returns how many derivations of the first were windows.
func stepsEqualWhole(t *testing.T, e Engine, steps [][]Fact) int64 {
	t.Helper()
	ctx := context.Background()
	win, whole := e.Open(t), e.Open(t)
	for i, step := range steps {
		Import(t, win, step)
		if err := win.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		Import(t, whole, step)
		if err := whole.ReconcileAll(ctx); err != nil {
			t.Fatal(err)
		}
		got, want := e.State(t, win), e.State(t, whole)
		if !slices.Equal(got, want) {
			t.Errorf("step %d, after windows:\n%s\nwhole:\n%s", i, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	return e.Windows(win)
}

// OfOneBackupRestoredDaily: the same full backup restored every
// day (a training or reporting copy reset each morning), its history row and
// completion line stating the same LSNs. Each day's row is a candidate of
// the lines of the three days after it, which chained every day's restore
// into one component: each day's window read further back than the last,
// until the instance was derived whole. A day's window now reads a few
// days, whatever the number of days before it, and equals a whole
// derivation.
func OfOneBackupRestoredDaily(t *testing.T, e Engine) {
	T := time.Date(2025, 3, 1, 6, 0, 0, 0, time.UTC)
	off := 0
	day := func(d int) []Fact {
		at := T.AddDate(0, 0, d)
		return []Fact{
			{Hist: &store.HistoryRow{Instance: "SQLX", RestoreHistoryID: int64(d + 1), RestoreDate: at, Database: "Training",
				RestoreType: "D", FirstLSN: "1000", LastLSN: "2000", Devices: []string{`\\nas\Golden.bak`},
				Origin: store.Origin{Source: "history", File: "h.csv"}}},
			{Log: &store.LogRestore{Instance: "SQLX", Database: "Training", Kind: store.KindFull, MessageID: 18267,
				CompletedAt: at.Add(40 * time.Second), UTCOffset: &off, FirstLSN: "1000", LastLSN: "2000", DeviceCount: 1,
				DeviceType: "DISK", Devices: []string{`\\nas\Golden.bak`}, Has3014: true, Statement: "RESTORE DATABASE",
				Pages: 1000, Seconds: 5, MBps: 1.56, Origin: store.Origin{Source: "errorlog", File: "ERRORLOG"}}},
		}
	}
	const days = 30
	steps := make([][]Fact, days)
	for d := range days {
		steps[d] = day(d)
	}
	read := dailyWindows(t, e, steps)
	lastRead := read[days-1]
	// Its own day and the three its line reaches: 8 facts.
	if lastRead > 8 {
		t.Errorf("the last day's window read %d facts of %d", lastRead, 2*days)
	}
}

// SeesThePartnerASettledPairTook: a new fact pairs with an old
// one that was paired, before it came, with a fact older than the window's
// first read. The old partner's restore changes too (it loses its pair),
// so the window must read back to it, though the new pair is first for
// both its facts and nothing unread could beat it. Two ways: a history row
// that arrives late takes the completion line of a restore of the same
// backup two days before, and a completion line that arrives late takes
// the history row another line of the same LSNs held.
func SeesThePartnerASettledPairTook(t *testing.T, e Engine) {
	hist, line, other := salesBackup.hist, salesBackup.line, salesBackup.other
	for _, c := range []struct {
		name  string
		steps [][]Fact
	}{
		// The row 50 h before the line held it; the late row, 0.4 h after
		// it, is nearer.
		{"late row", [][]Fact{{hist(1, -50), line(0)}, {hist(2, 0.4)}}},
		// The line 55 min before the row held it; the late line, 10 min
		// after it, is nearer. Past midnight: a window reads its first day
		// whole.
		{"late line", [][]Fact{{line(12.5 - 55.0/60), hist(1, 12.5)}, {line(12.5 + 10.0/60)}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var old []Fact
			for d := range 6 {
				old = append(old, other(100+int64(d), -120+24*float64(d)))
			}
			steps := append([][]Fact{old}, c.steps...)
			if n := stepsEqualWhole(t, e, steps); n != int64(len(steps)-1) {
				t.Errorf("%d windowed derivations, want %d", n, len(steps)-1)
			}
		})
	}
}

// SettledPairsRandom: one backup of Sales restored again and
// again over ten days, its history rows and completion lines arriving up to
// three days late, some restores an hour or less apart (rivals for each
// other's facts), each day's rows imported before its lines (a history CSV,
// then the error logs): every import's windows must equal a whole
// derivation. This is where settled pairs (derive.settledPairs) cut
// components short: it fails when a candidate with one free end is dropped
// too. A new pair that settles before its old partner is read has not been
// seen to fail it in 300 seeds; TestWindowSeesThePartnerASettledPairTook
// holds the two shapes that do.
func SettledPairsRandom(t *testing.T, e Engine) {
	seeds := uint64(12)
	if e.Seeds > 0 {
		seeds = min(seeds, uint64(e.Seeds))
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 8))
			const days = 16 // restores over 240 h and more, arriving up to 3 days late
			rows, lines := make([][]Fact, days), make([][]Fact, days)
			arrive := func(h float64) int {
				day := int((h + 12) / 24) // salesBackup.T is noon
				if rng.IntN(5) < 2 {
					day += 1 + rng.IntN(3)
				}
				return day
			}
			var id int64
			for h := 0.0; h < 240; {
				h += 0.2 + rng.Float64()*float64([]int{1, 8, 30}[rng.IntN(3)])
				id++
				end := h + float64(5+rng.IntN(600))/3600
				if rng.IntN(8) > 0 {
					d := arrive(h)
					rows[d] = append(rows[d], salesBackup.hist(id, h))
				}
				if rng.IntN(8) > 0 {
					d := arrive(end)
					lines[d] = append(lines[d], salesBackup.line(end))
				}
			}
			var steps [][]Fact
			for d := range days {
				if d < 10 { // an unrelated restore a day, so the instance has a history
					rows[d] = append(rows[d], salesBackup.other(1000+int64(d), float64(24*d)))
				}
				steps = append(steps, rows[d], lines[d])
			}
			if n := stepsEqualWhole(t, e, steps); n == 0 {
				t.Fatal("no window derived: the test proves nothing")
			}
		})
	}
}

// OfLogShippingReadsItsDay: a log-shipped database restores a
// log every 15 minutes, each history row and completion line stating the
// log's LSNs, a day's rows and lines imported together, and a copy of
// another database is restored every morning from the same full backup. A
// new line stating LSNs could pair with a row up to 72 h before it; one
// query shows that only the copy's row of the day before does, so a day's
// window reads back to that row, not the three days before it. A full restore whose row lies 30 h before its
// line (a restore of hours, the line imported a day later) must still be
// found: the windows equal a whole derivation.
func OfLogShippingReadsItsDay(t *testing.T, e Engine) {
	T := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	off := 0
	row := func(id int64, at time.Time, kind, rtype string, lsn int64) Fact {
		return Fact{Hist: &store.HistoryRow{Instance: "SQLX", RestoreHistoryID: id, RestoreDate: at, Database: "Shipped",
			RestoreType: rtype, FirstLSN: fmt.Sprint(lsn), LastLSN: fmt.Sprint(lsn + 10), Devices: []string{fmt.Sprintf(`\\nas\Shipped_%d.%s`, lsn, kind)},
			Origin: store.Origin{Source: "history", File: "h.csv"}}}
	}
	line := func(at time.Time, kind store.Kind, ext string, lsn int64, secs float64) Fact {
		msg, stmt := 18268, "RESTORE LOG"
		if kind == store.KindFull {
			msg, stmt = 18267, "RESTORE DATABASE"
		}
		return Fact{Log: &store.LogRestore{Instance: "SQLX", Database: "Shipped", Kind: kind, MessageID: msg,
			CompletedAt: at, UTCOffset: &off, FirstLSN: fmt.Sprint(lsn), LastLSN: fmt.Sprint(lsn + 10), DeviceCount: 1,
			DeviceType: "DISK", Devices: []string{fmt.Sprintf(`\\nas\Shipped_%d.%s`, lsn, ext)}, Has3014: true, Statement: stmt,
			Pages: 1000, Seconds: secs, MBps: 1.56, Origin: store.Origin{Source: "errorlog", File: "ERRORLOG"}}}
	}
	const days, perDay = 8, 96
	steps := make([][]Fact, days)
	var id, lsn int64
	for d := range days {
		for q := range perDay {
			at := T.AddDate(0, 0, d).Add(time.Duration(q) * 15 * time.Minute)
			id, lsn = id+1, lsn+10
			steps[d] = append(steps[d], row(id, at, "trn", "L", lsn), line(at.Add(2*time.Second), store.KindLog, "trn", lsn, 1))
		}
	}
	// Every morning a copy of the database is restored from the same full
	// backup: each day's line states the LSNs of the days before's rows.
	for d := range days {
		at := T.AddDate(0, 0, d).Add(5 * time.Hour)
		copyRow := row(20_000+int64(d), at, "bak", "D", 1)
		copyRow.Hist.Database = "Copy"
		copyLine := line(at.Add(40*time.Second), store.KindFull, "bak", 1, 5) // under 10 s: no semantics votes
		copyLine.Log.Database = "Copy"
		steps[d] = append(steps[d], copyRow, copyLine)
	}
	// Day 4's full restore starts at 06:00 and ends 30 h later; its line
	// comes with day 6's error log.
	full := T.AddDate(0, 0, 4).Add(6 * time.Hour)
	steps[4] = append(steps[4], row(10_000, full, "bak", "D", 5))
	steps[6] = append(steps[6], line(full.Add(30*time.Hour), store.KindFull, "bak", 5, 3000))

	read := dailyWindows(t, e, steps)
	// A day is 194 facts (195 with day 4's long restore). Its copy's line
	// reaches the copies of the two mornings before (72 h): the window
	// reads back to the first of those days and the hour before it (the
	// restores of that day's first hour reach it): ~396 facts more, where
	// the 73 h before the day were ~590.
	for _, d := range []int{3, 7} {
		if want := 3*(2*perDay+2) + 8 + 8; read[d] > int64(want) {
			t.Errorf("day %d's window read %d facts, want %d at most: its day, back to the copies its line may pair with", d, read[d], want)
		}
	}
	// Day 6 brings the full restore's line, whose row is 30 h before it.
	if read[6] < 2*perDay+8+4*30 {
		t.Errorf("day 6's window read %d facts: not back to the full restore's row 30 h before its line", read[6])
	}
}

// dailyWindows imports each day's facts into a warehouse that reconciles
// after each (from windows) and into another derived whole once at the
// end, checks that both hold the same restores and that every import but
// the first was derived from a window, and returns the facts each day's
// windows read.
func dailyWindows(t *testing.T, e Engine, days [][]Fact) []int64 {
	t.Helper()
	ctx := context.Background()
	win, whole := e.Open(t), e.Open(t)
	read := make([]int64, len(days))
	for d, facts := range days {
		Import(t, win, facts)
		before := e.FactsRead(win)
		if err := win.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		read[d] = e.FactsRead(win) - before
		Import(t, whole, facts)
	}
	if err := whole.ReconcileAll(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := e.State(t, win), e.State(t, whole); !slices.Equal(got, want) {
		t.Errorf("after windows:\n%s\nwhole:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := e.Windows(win); n != int64(len(days)-1) {
		t.Errorf("%d of %d daily imports derived from a window, want all but the first", n, len(days)-1)
	}
	return read
}
