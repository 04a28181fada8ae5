package sqlite

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// A watch opens with the series' watched restore, stays open while the
// analysis keeps it, and is then confirmed (a regression dated to its
// restore) or closed (back to usual), both kept as history (issue 37).
func TestWatchOpensAndConfirmsOrCloses(t *testing.T) {
	db := openTestDB(t)
	ctx := context.Background()
	var id int64
	if err := db.write.QueryRowContext(ctx, `INSERT INTO instance (name, created_at) VALUES ('SQL01', 0) RETURNING id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	series := func(db string, w *store.Watch) store.Series {
		return store.Series{InstanceID: id, Instance: "SQL01", Database: db, Kind: store.KindFull, N: 40, Verdict: "stable", Watch: w}
	}
	watch := func(db string, restore int64) *store.Watch {
		return &store.Watch{Database: db, Kind: store.KindFull, Direction: "regression", RestoreID: restore, OpenedAt: at,
			Ratio: 0.32, DurationRatio: 3.1, UsualMiBps: 400, UsualN: 30}
	}
	state := func() map[string]string {
		ws, err := db.ListWatches(ctx, store.WatchFilter{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, w := range ws {
			out[w.Database] = w.State
		}
		return out
	}
	// Both series' newest restores are slow: two watches open.
	if err := db.SaveFindings(ctx, id, 0, []store.Series{series("Billing", watch("Billing", 101)), series("HR", watch("HR", 201))}, nil, nil); err != nil {
		t.Fatal(err)
	}
	// The same analysis again: nothing changes.
	if err := db.SaveFindings(ctx, id, 0, []store.Series{series("Billing", watch("Billing", 101)), series("HR", watch("HR", 201))}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := state(); got["Billing"] != "open" || got["HR"] != "open" {
		t.Fatalf("after the first slow restores: %v", got)
	}
	ss, _ := db.ListSeries(ctx, store.SeriesFilter{Instance: "SQL01", Database: "Billing"})
	if len(ss) != 1 || ss[0].Watch == nil || ss[0].Watch.RestoreID != 101 {
		t.Errorf("Billing's series carries watch %+v", ss)
	}
	// Billing's next restore is slow too: a regression dated to 101.
	// HR's is back to usual.
	reg := store.Regression{Database: "Billing", Kind: store.KindFull, Direction: "regression", ChangedAt: at, ChangeRestoreID: 101,
		BaselineMiBps: 400, CurrentMiBps: 130, Ratio: 0.32}
	if err := db.SaveFindings(ctx, id, 0, []store.Series{series("Billing", nil), series("HR", nil)}, []store.Regression{reg}, nil); err != nil {
		t.Fatal(err)
	}
	if got := state(); got["Billing"] != "confirmed" || got["HR"] != "closed" {
		t.Errorf("after the next restores: %v, want Billing confirmed and HR closed", got)
	}
	ws, _ := db.ListWatches(ctx, store.WatchFilter{Database: "HR"})
	if len(ws) != 1 || ws[0].ClosedAt == nil || ws[0].ClosedNote == "" {
		t.Errorf("HR's closed watch: %+v", ws)
	}
	regs, _ := db.ListRegressions(ctx, store.RegressionFilter{})
	if len(regs) != 1 || regs[0].State != "regression" {
		t.Errorf("regressions %+v", regs)
	}
	// Alerts, in the same transactions: each watch opened once (the
	// repeated analysis added none), HR's closed; Billing's confirmation is
	// its regression's alert.
	rows, err := db.read.QueryContext(ctx, `SELECT kind, database_name, json_extract(body, '$.title') FROM alert_event ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var kind, dbName, title string
		if err := rows.Scan(&kind, &dbName, &title); err != nil {
			t.Fatal(err)
		}
		got = append(got, kind+" "+dbName)
		if kind == store.AlertWatchOpened && title != "Billing on SQL01: last restore 3.1× slower than usual (2026-12-01 03:00 UTC) — watching" && dbName == "Billing" {
			t.Errorf("the watch's alert says %q", title)
		}
	}
	want := "watch_opened Billing, watch_opened HR, regression_confirmed Billing, watch_closed HR"
	if strings.Join(slices.Sorted(slices.Values(got)), ", ") != strings.Join(slices.Sorted(slices.Values(strings.Split(want, ", "))), ", ") {
		t.Errorf("alerts %v, want %s", got, want)
	}
}
