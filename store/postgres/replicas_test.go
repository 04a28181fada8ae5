package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/postgres"
	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
)

// replicas opens n warehouses on one database, as n serve replicas do.
func replicas(t *testing.T, u string, n int) []*postgres.DB {
	t.Helper()
	var out []*postgres.DB
	for range n {
		db, err := postgres.Open(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		out = append(out, db)
	}
	return out
}

// Several replicas on one database: what one writes the others read at
// once (their pages' caches key on DataVersion, read from the database),
// a batch pushed to two at once is recorded once, a delivery is claimed by
// one sender only, and an instance two zones claim at once goes to one.
func TestReplicasShareOneWarehouse(t *testing.T) {
	ctx := context.Background()
	u := pgtest.URL(t)
	rs := replicas(t, u, 3)
	a, b := rs[0], rs[1]

	v0, err := b.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SetInstanceTags(ctx, "SQL01", map[string]string{"env": "prod"}); err != nil {
		t.Fatal(err)
	}
	if v1, _ := b.DataVersion(ctx); v1 == v0 {
		t.Errorf("replica b's data version did not move after replica a's write (%s)", v1)
	}
	if is, err := b.ListInstances(ctx, ""); err != nil || len(is) != 1 || is[0].Tags["env"] != "prod" {
		t.Errorf("replica b lists %+v, %v: want replica a's instance", is, err)
	}

	// One batch pushed through every replica at once.
	if _, err := a.CreateCollectorToken(ctx, "zone-a"); err != nil {
		t.Fatal(err)
	}
	fin := time.Date(2026, 11, 30, 8, 1, 0, 0, time.UTC)
	run := store.CollectorRun{Instance: "SQL-A-01", Started: fin.Add(-time.Minute), Finished: &fin, Status: store.RunOK}
	var wg sync.WaitGroup
	errs := make(chan error, 3*4)
	for range 4 {
		for _, r := range rs {
			wg.Go(func() { errs <- r.RecordPush(ctx, "zone-a", "batch-1", 10, 7, run) })
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if runs, err := b.Runs(ctx, "SQL-A-01", 50); err != nil || len(runs) != 1 {
		t.Errorf("a batch pushed 12 times through 3 replicas left %d runs (%v), want 1", len(runs), err)
	}

	// Two zones claim one new instance through two replicas at once.
	if _, err := a.CreateCollectorToken(ctx, "zone-b"); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		inst := "NEW-" + string(rune('A'+i))
		results := make(chan error, 2)
		wg.Go(func() { results <- a.AuthorizePush(ctx, "zone-a", []string{inst}) })
		wg.Go(func() { results <- b.AuthorizePush(ctx, "zone-b", []string{inst}) })
		wg.Wait()
		close(results)
		won, refused := 0, 0
		for err := range results {
			switch {
			case err == nil:
				won++
			case store.ErrorCode(err) == store.EFORBIDDEN:
				refused++
			default:
				t.Fatalf("claim of %s: %v", inst, err)
			}
		}
		if won != 1 || refused != 1 {
			t.Errorf("claim of %s: %d won, %d refused; want one of each", inst, won, refused)
		}
	}

	// Deliveries claimed by several senders at once: each goes to one.
	var evs []store.AlertEvent
	for i := range 40 {
		evs = append(evs, store.AlertEvent{Key: "k" + string(rune('A'+i)), Kind: store.AlertRegressionConfirmed, Severity: "warning",
			Instance: "SQL01", Title: "slower", Summary: "2x", NextStep: "look", Since: fin})
	}
	if err := a.EnqueueAlerts(ctx, evs...); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if _, err := b.RouteAlerts(ctx, 100, func(*store.Alert) []store.AlertDelivery {
		return []store.AlertDelivery{{Channel: "mail", Mode: "now", NextAt: now.Add(-time.Second)}}
	}); err != nil {
		t.Fatal(err)
	}
	claimed := make(chan []store.Alert, 3*5)
	for range 5 {
		for _, r := range rs {
			wg.Go(func() {
				as, err := r.ClaimDeliveries(ctx, "mail", "now", now, now, time.Hour, 7)
				if err != nil {
					t.Error(err)
				}
				claimed <- as
			})
		}
	}
	wg.Wait()
	close(claimed)
	seen := map[int64]int{}
	for as := range claimed {
		for _, a := range as {
			seen[a.ID]++
		}
	}
	if len(seen) != 40 {
		t.Errorf("%d of 40 deliveries claimed", len(seen))
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("delivery of alert %d claimed %d times", id, n)
		}
	}
}

// A status change moves every replica's data version whatever the clock of
// the replica that made it: one whose clock is behind the newest status
// change's stamp must not leave the others' regression pages stale.
func TestStatusChangeMovesTheVersionWhateverTheClock(t *testing.T) {
	ctx := context.Background()
	u := pgtest.URL(t)
	rs := replicas(t, u, 2)
	a, b := rs[0], rs[1]
	migrateInto(t, analysedSQLite(t), a)
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Two regressions: the fixture's and a copy of it in another series.
	var first, second int64
	if err := conn.QueryRow(ctx, `SELECT min(id) FROM regression`).Scan(&first); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `INSERT INTO regression (instance_id, database_name, kind, direction, changed_at,
			baseline_mibps, current_mibps, ratio, baseline_n, current_n, p_value, first_seen, last_seen)
		SELECT instance_id, database_name || '_copy', kind, direction, changed_at,
			baseline_mibps, current_mibps, ratio, baseline_n, current_n, p_value, first_seen, last_seen
		FROM regression WHERE id = $1 RETURNING id`, first).Scan(&second); err != nil {
		t.Fatal(err)
	}
	// Another replica, its clock an hour ahead, acknowledged the copy.
	if _, err := conn.Exec(ctx, `UPDATE regression SET status = 'acknowledged', status_at = $1 WHERE id = $2`,
		time.Now().Add(time.Hour).UnixMilli(), second); err != nil {
		t.Fatal(err)
	}
	v0, err := b.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SetRegressionStatus(ctx, first, store.StatusAcknowledged, "looking"); err != nil {
		t.Fatal(err)
	}
	if v1, _ := b.DataVersion(ctx); v1 == v0 {
		t.Errorf("an acknowledgement stamped before the newest status change left replica b's version at %s", v1)
	}
}
