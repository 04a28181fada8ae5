package windowtest

// The hand-written window tests: shapes of facts that once broke a
// window's reach, each checked against a whole derivation.

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
