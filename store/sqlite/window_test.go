package sqlite

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/restorewatch/restorewatch/store/window/windowtest"
)

// windowFact is one record of the window tests (windowtest.Fact).
type windowFact = windowtest.Fact

// importFacts imports facts in one import.
func importFacts(t *testing.T, db *DB, facts []windowFact) {
	t.Helper()
	windowtest.Import(t, db, facts)
}

// windowFacts makes an instance's facts over days (windowtest.Facts).
var windowFacts = windowtest.Facts

// derivedState is what reconciliation leaves: every restore by natural key
// with its content hash, and each instance's semantics and vote total.
func derivedState(t testing.TB, db *DB) []string {
	t.Helper()
	var out []string
	rows, err := db.write.Query(`SELECT i.name, r.natural_key, r.content_hash FROM restore r JOIN instance i ON i.id = r.instance_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		var k, h int64
		if err := rows.Scan(&name, &k, &h); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s restore %d %x", name, k, h))
	}
	rows.Close()
	rows, err = db.write.Query(`SELECT name, restore_date_semantics, semantics_samples, dirty, windowable,
		(SELECT COALESCE(SUM(start_votes), 0) || '/' || COALESCE(SUM(end_votes), 0) FROM derive_vote WHERE instance_id = instance.id)
		FROM instance`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name, sem, votes string
		var n, dirty, win int64
		if err := rows.Scan(&name, &sem, &n, &dirty, &win, &votes); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s semantics %s on %d, votes %s, dirty %d, windowable %d", name, sem, n, votes, dirty, win))
	}
	rows.Close()
	slices.Sort(out)
	return out
}

// sqliteWindows is SQLite's side of the shared window tests.
var sqliteWindows = windowtest.Engine{
	Open:      func(tb testing.TB) windowtest.Warehouse { return openTestDB(tb) },
	State:     func(tb testing.TB, w windowtest.Warehouse) []string { return derivedState(tb, w.(*DB)) },
	Windows:   func(w windowtest.Warehouse) int64 { return w.(*DB).windows.Load() },
	FactsRead: func(w windowtest.Warehouse) int64 { return w.(*DB).windowFacts.Load() },
	Again: func(tb testing.TB, w windowtest.Warehouse) windowtest.Warehouse {
		tb.Helper()
		db, err := Open(context.Background(), w.(*DB).path)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { db.Close() })
		return db
	},
}

// TestWindowConcurrentEqualsWhole: two handles on one warehouse file
// importing and deriving at once leave what a whole derivation leaves
// (windowtest.ConcurrentEqualsWhole, which store/postgres runs with two
// replicas).
func TestWindowConcurrentEqualsWhole(t *testing.T) {
	windowtest.ConcurrentEqualsWhole(t, sqliteWindows)
}

// TestWindowEqualsWhole: random imports, late and out of order, derived
// from windows, leave what a whole derivation leaves (windowtest.EqualsWhole,
// which store/postgres runs too).
func TestWindowEqualsWhole(t *testing.T) { windowtest.EqualsWhole(t, sqliteWindows) }

// The hand-written window tests (windowtest), which store/postgres runs too.
func TestWindowFollowsAComponentBack(t *testing.T) {
	windowtest.FollowsAComponentBack(t, sqliteWindows)
}
func TestWindowOfOneBackupRestoredDaily(t *testing.T) {
	windowtest.OfOneBackupRestoredDaily(t, sqliteWindows)
}
func TestWindowSeesThePartnerASettledPairTook(t *testing.T) {
	windowtest.SeesThePartnerASettledPairTook(t, sqliteWindows)
}
func TestWindowSettledPairsRandom(t *testing.T) { windowtest.SettledPairsRandom(t, sqliteWindows) }
func TestWindowOfLogShippingReadsItsDay(t *testing.T) {
	windowtest.OfLogShippingReadsItsDay(t, sqliteWindows)
}
