package sqlite_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/sqlite"
	"github.com/restorewatch/restorewatch/store/storetest"
)

func regressionOf(db string, ratio float64, dir string, changed time.Time) store.Regression {
	return store.Regression{Database: db, Kind: store.KindFull, Direction: dir, ChangedAt: changed, BaselineMiBps: 800,
		CurrentMiBps: 800 * ratio, Ratio: ratio, RatioLow: ratio - 0.05, RatioHigh: ratio + 0.05, BaselineN: 20, CurrentN: 5,
		BaselineDurationS: 3600, CurrentDurationS: 3600 / ratio, RestoresPerYear: 52}
}

func instanceIDOf(t *testing.T, db *sqlite.DB, name string) int64 {
	t.Helper()
	ctx := context.Background()
	if err := db.SetInstanceTags(ctx, name, map[string]string{"env": "prod"}); err != nil {
		t.Fatal(err)
	}
	ids, err := db.InstanceIDs(ctx)
	if err != nil || len(ids) == 0 {
		t.Fatalf("instance ids: %v %v", ids, err)
	}
	return ids[len(ids)-1]
}

// TestAlertOutboxWithFindings: a new regression queues its alert in the
// findings' transaction, once however often the analysis saves it again; a
// speed-up is an info alert; a resolved regression queues its own alert.
func TestAlertOutboxWithFindings(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	id := instanceIDOf(t, db, "SQL-PROD-01")
	changed := time.Date(2026, 10, 15, 2, 0, 0, 0, time.UTC)
	regs := []store.Regression{regressionOf("Sales", 0.4, "regression", changed), regressionOf("HR", 2.0, "improvement", changed)}
	for range 3 {
		if err := db.SaveFindings(ctx, id, 0, nil, regs, nil); err != nil {
			t.Fatal(err)
		}
	}
	as, err := db.Alerts(ctx, store.AlertFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 2 {
		t.Fatalf("got %d alerts after three saves, want 2: %+v", len(as), as)
	}
	byKey := map[string]store.Alert{}
	for _, a := range as {
		byKey[a.Key] = a
	}
	want := "regression_confirmed/SQL-PROD-01/Sales/full/regression/" + itoa(changed.Unix())
	slow, ok := byKey[want]
	if !ok {
		t.Fatalf("no alert keyed %s in %v", want, keys(byKey))
	}
	if slow.Severity != store.SeverityCritical || !strings.Contains(slow.Title, "2.5× slower") || slow.Link == "" ||
		!strings.Contains(slow.Summary, "since") || slow.NextStep == "" {
		t.Errorf("slowdown alert: %+v", slow.AlertEvent)
	}
	if fast := byKey["regression_confirmed/SQL-PROD-01/HR/full/improvement/"+itoa(changed.Unix())]; fast.Severity != store.SeverityInfo {
		t.Errorf("speed-up alert: %+v", fast.AlertEvent)
	}
	// The slowdown is no longer found: resolved, with its alert.
	if err := db.SaveFindings(ctx, id, 0, nil, regs[1:], nil); err != nil {
		t.Fatal(err)
	}
	as, err = db.Alerts(ctx, store.AlertFilter{Kind: store.AlertRegressionResolved})
	if err != nil || len(as) != 1 || as[0].Severity != store.SeverityInfo || as[0].Instance != "SQL-PROD-01" {
		t.Fatalf("resolved alerts: %+v, %v", as, err)
	}
}

// TestAlertDeliveryStates: routed deliveries come due, a failed attempt
// waits for its retry with the error, a sent one is not due again, an
// acknowledgement silences what is left.
func TestAlertDeliveryStates(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	now := time.Now()
	for _, k := range []string{"a", "b", "c"} {
		if err := db.EnqueueAlerts(ctx, store.AlertEvent{Key: "test/" + k, Kind: store.AlertRTOBreach, Severity: store.SeverityWarning,
			Instance: "SQL01", Title: "t " + k, Since: now}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := db.RouteAlerts(ctx, 100, func(a *store.Alert) []store.AlertDelivery {
		return []store.AlertDelivery{{Channel: "hook", Mode: store.ModeNow, NextAt: now}}
	})
	if err != nil || n != 3 {
		t.Fatalf("routed %d, %v", n, err)
	}
	if n, _ := db.RouteAlerts(ctx, 100, nil); n != 0 {
		t.Fatalf("routed again: %d", n)
	}
	due, err := db.ClaimDeliveries(ctx, "hook", store.ModeNow, now, now, 0, 10)
	if err != nil || len(due) != 3 {
		t.Fatalf("due: %d, %v", len(due), err)
	}
	err = db.MarkDeliveries(ctx, "hook", []store.DeliveryResult{
		{AlertID: due[0].ID, State: store.DeliverySent},
		{AlertID: due[1].ID, State: store.DeliveryRetrying, NextAt: now.Add(time.Minute), Error: "502 Bad Gateway"},
	})
	if err != nil {
		t.Fatal(err)
	}
	due, _ = db.ClaimDeliveries(ctx, "hook", store.ModeNow, now, now, 0, 10)
	if len(due) != 1 || due[0].Key != "test/c" {
		t.Fatalf("due after one sent, one retrying: %+v", due)
	}
	due, _ = db.ClaimDeliveries(ctx, "hook", store.ModeNow, now.Add(2*time.Minute), now.Add(2*time.Minute), 0, 10)
	if len(due) != 2 || due[0].Deliveries[0].Attempts+due[1].Deliveries[0].Attempts != 1 {
		t.Fatalf("due after the retry time: %+v", due)
	}
	if _, err := db.AckAlert(ctx, "test/c", "ana", "known, fixing tonight"); err != nil {
		t.Fatal(err)
	}
	as, _ := db.Alerts(ctx, store.AlertFilter{State: store.DeliverySilenced})
	if len(as) != 1 || as[0].AckedBy != "ana" || as[0].Deliveries[0].Note != "acknowledged by ana" {
		t.Fatalf("acknowledged: %+v", as)
	}
	as, _ = db.Alerts(ctx, store.AlertFilter{State: store.DeliveryRetrying})
	if len(as) != 1 || as[0].Deliveries[0].LastError != "502 Bad Gateway" {
		t.Fatalf("retrying: %+v", as)
	}
}

// TestAlertConditions: a condition found on every pass is one alert; one
// that cleared and came back is a second.
func TestAlertConditions(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	ev := store.AlertEvent{Key: "rto_breach/SQL01/Sales", Kind: store.AlertRTOBreach, Severity: store.SeverityWarning,
		Instance: "SQL01", Database: "Sales", Title: "over"}
	total := 0
	for _, found := range [][]store.AlertEvent{{ev}, {ev}, {ev}, nil, {ev}} {
		n, err := db.SyncAlertConditions(ctx, store.AlertRTOBreach, found)
		if err != nil {
			t.Fatal(err)
		}
		total += n
		time.Sleep(2 * time.Millisecond) // keys carry the millisecond a condition began
	}
	as, _ := db.Alerts(ctx, store.AlertFilter{Kind: store.AlertRTOBreach})
	if total != 2 || len(as) != 2 {
		t.Fatalf("queued %d, kept %d, want 2 each", total, len(as))
	}
}

// TestSilenceMatches covers patterns with a named instance's backslash.
func TestSilenceMatches(t *testing.T) {
	now := time.Now()
	s := store.AlertSilence{Instance: `SQL-B-*\REPORTING`, By: "ana", Why: "patching", Until: now.Add(time.Hour)}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{`sql-b-07\reporting`: true, `SQL-B-07\OTHER`: false, `SQL-A-01\REPORTING`: false} {
		if got := s.Matches(&store.AlertEvent{Instance: name}, now); got != want {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
	if s.Matches(&store.AlertEvent{Instance: `SQL-B-07\REPORTING`}, now.Add(2*time.Hour)) {
		t.Error("an ended silence still matches")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func keys(m map[string]store.Alert) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestPruneAlerts: old alerts whose deliveries are over go; one still due
// stays however old.
func TestPruneAlerts(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	for _, k := range []string{"old/sent", "old/due"} {
		if err := db.EnqueueAlerts(ctx, store.AlertEvent{Key: k, Kind: store.AlertRTOBreach, Title: k}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	if _, err := db.RouteAlerts(ctx, 10, func(a *store.Alert) []store.AlertDelivery {
		return []store.AlertDelivery{{Channel: "c", Mode: store.ModeNow, NextAt: now}}
	}); err != nil {
		t.Fatal(err)
	}
	as, _ := db.Alerts(ctx, store.AlertFilter{})
	for _, a := range as {
		if a.Key == "old/sent" {
			if err := db.MarkDeliveries(ctx, "c", []store.DeliveryResult{{AlertID: a.ID, State: store.DeliverySent}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	n, err := db.PruneAlerts(ctx, now.Add(time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("pruned %d, %v; want 1", n, err)
	}
	as, _ = db.Alerts(ctx, store.AlertFilter{})
	if len(as) != 1 || as[0].Key != "old/due" || as[0].Severity != store.SeverityInfo {
		t.Errorf("left: %+v", as)
	}
}
