package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/postgres"
	"github.com/restorewatch/restorewatch/store/window/windowtest"
)

// pgWindows is PostgreSQL's side of the shared window tests.
var pgWindows = windowtest.Engine{
	Open: func(tb testing.TB) windowtest.Warehouse { return open(tb) },
	State: func(tb testing.TB, w windowtest.Warehouse) []string {
		tb.Helper()
		s, err := w.(*postgres.DB).DerivedState(context.Background())
		if err != nil {
			tb.Fatal(err)
		}
		return s
	},
	Windows: func(w windowtest.Warehouse) int64 {
		n, _, _ := w.(*postgres.DB).WindowStats()
		return n
	},
	FactsRead: func(w windowtest.Warehouse) int64 {
		_, n, _ := w.(*postgres.DB).WindowStats()
		return n
	},
	Again: func(tb testing.TB, w windowtest.Warehouse) windowtest.Warehouse {
		tb.Helper()
		db, err := postgres.Open(context.Background(), w.(*postgres.DB).URL())
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { db.Close() })
		return db
	},
	Seeds: 4, // SQLite runs all 12: the rules are store/window's on both
}

// TestWindowConcurrentEqualsWhole: two replicas importing and deriving the
// same instances at once, each under the instance's advisory lock, leave
// what a whole derivation leaves.
func TestWindowConcurrentEqualsWhole(t *testing.T) {
	windowtest.ConcurrentEqualsWhole(t, pgWindows)
}

// TestWindowEqualsWhole: random imports, late and out of order, derived
// from windows on PostgreSQL, leave what a whole derivation leaves.
func TestWindowEqualsWhole(t *testing.T) { windowtest.EqualsWhole(t, pgWindows) }

// The hand-written window tests (windowtest), as store/sqlite runs them.
func TestWindowFollowsAComponentBack(t *testing.T) { windowtest.FollowsAComponentBack(t, pgWindows) }
func TestWindowOfOneBackupRestoredDaily(t *testing.T) {
	windowtest.OfOneBackupRestoredDaily(t, pgWindows)
}
func TestWindowSeesThePartnerASettledPairTook(t *testing.T) {
	windowtest.SeesThePartnerASettledPairTook(t, pgWindows)
}
func TestWindowSettledPairsRandom(t *testing.T) { windowtest.SettledPairsRandom(t, pgWindows) }
func TestWindowOfLogShippingReadsItsDay(t *testing.T) {
	windowtest.OfLogShippingReadsItsDay(t, pgWindows)
}

// TestWindowReadsOnlyItsDay: a day's import of two restores into an
// instance of 1,440 derives from a window: it reads the new facts and the
// hour before them, not the instance's 2,880 facts, derives only the
// day's restores, and leaves what a whole derivation leaves.
func TestWindowReadsOnlyItsDay(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	T := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	off := 0
	var lsn, id int64
	restore := func(at time.Time) []windowtest.Fact {
		id, lsn = id+1, lsn+10
		first, last := fmt.Sprint(lsn), fmt.Sprint(lsn+10)
		dev := []string{fmt.Sprintf(`\\nas\Shipped_%d.trn`, lsn)}
		return []windowtest.Fact{
			{Hist: &store.HistoryRow{Instance: "SQLBIG", RestoreHistoryID: id, RestoreDate: at, Database: "Shipped",
				RestoreType: "L", FirstLSN: first, LastLSN: last, Devices: dev, Origin: store.Origin{Source: "history", File: "h.csv"}}},
			{Log: &store.LogRestore{Instance: "SQLBIG", Database: "Shipped", Kind: store.KindLog, MessageID: 18268,
				CompletedAt: at.Add(30 * time.Second), UTCOffset: &off, FirstLSN: first, LastLSN: last, DeviceCount: 1,
				DeviceType: "DISK", Devices: dev, Has3014: true, Statement: "RESTORE LOG", Pages: 1000, Seconds: 30, MBps: 0.26,
				Origin: store.Origin{Source: "errorlog", File: "ERRORLOG"}}},
		}
	}
	const days, perDay = 30, 48
	var old []windowtest.Fact
	for d := range days {
		for q := range perDay {
			old = append(old, restore(T.AddDate(0, 0, d).Add(time.Duration(q)*30*time.Minute))...)
		}
	}
	windowtest.Import(t, db, old)
	if err := db.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	windows, facts, restores := db.WindowStats()
	if windows != 0 || restores != days*perDay {
		t.Fatalf("first derivation: %d windows, %d restores derived, want 0 and %d", windows, restores, days*perDay)
	}
	day := T.AddDate(0, 0, days)
	windowtest.Import(t, db, append(restore(day.Add(2*time.Hour)), restore(day.Add(3*time.Hour))...))
	if err := db.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	w, f, r := db.WindowStats()
	if w-windows != 1 {
		t.Fatalf("%d windowed derivations, want 1", w-windows)
	}
	// The four new facts; the facts of the hour before the window's day
	// (its first restores may pair with them): four more.
	if read := f - facts; read > 8 {
		t.Errorf("the window read %d facts, want 8 at most of the instance's %d", read, len(old)+4)
	}
	if derived := r - restores; derived != 2 {
		t.Errorf("the window derived %d restores, want the day's 2", derived)
	}
	t.Logf("the window read %d facts of %d and derived %d restores of %d", f-facts, len(old)+4, r-restores, days*perDay+2)
	got, err := db.DerivedState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.ReconcileAll(ctx); err != nil {
		t.Fatal(err)
	}
	want, err := db.DerivedState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("after the window:\n%s\nwhole:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(want) != days*perDay+2+1 {
		t.Errorf("%d lines of state, want %d restores and the instance", len(want), days*perDay+2)
	}
}
