package postgres_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/ingest/push"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/postgres"
	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
)

// pushBody is a push batch as a collector sends it: n log restores of
// SQL-A-01 and the pass's run record.
func pushBody(t *testing.T, batch string, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	enc := json.NewEncoder(gz)
	put := func(v any) {
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	put(push.Header{Version: push.Version, Batch: batch, Source: "live", Name: "SQL-A-01", Records: n + 1})
	t0 := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	off := 0
	for i := range n {
		put(map[string]any{"log": store.LogRestore{Instance: "SQL-A-01", Database: "Sales", Kind: store.KindLog, MessageID: 4356,
			CompletedAt: t0.Add(time.Duration(i) * 15 * time.Minute), UTCOffset: &off, Has3014: true, Statement: "RESTORE LOG",
			Pages: 1000, Seconds: 2, MBps: 3.9, Origin: store.Origin{Source: store.SourceLive, File: "xp_readerrorlog", Line: i + 1}}})
	}
	fin := t0.Add(24 * time.Hour)
	put(map[string]any{"run": store.CollectorRun{Instance: "SQL-A-01", Started: fin.Add(-time.Minute), Finished: &fin,
		Status: store.RunOK, Rows: map[string]int64{"errorlog": int64(n)}}})
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPushFailedMidApplyThenResent (issue 41, "a push applied in one
// transaction"): a push whose apply fails midway (the server refuses its
// run record, after its restores were written in the same transaction)
// leaves nothing: no restore, no run, not marked applied; the collector's
// resend applies it whole, with its run once, and a third send is a
// duplicate.
func TestPushFailedMidApplyThenResent(t *testing.T) {
	ctx := context.Background()
	u := pgtest.URL(t)
	db, err := postgres.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.CreateCollectorToken(ctx, "zone-a", "SQL-A-*"); err != nil {
		t.Fatal(err)
	}
	// The first run record written fails, once: a sequence is not rolled
	// back with the transaction that advanced it.
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE SEQUENCE fail_once;
		CREATE FUNCTION fail_run() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF nextval('fail_once') = 1 THEN RAISE EXCEPTION 'injected: the server died mid-apply'; END IF; RETURN NEW; END $$;
		CREATE TRIGGER fail_run BEFORE INSERT ON collector_run FOR EACH ROW EXECUTE FUNCTION fail_run()`); err != nil {
		t.Fatal(err)
	}
	const batch, n = "0123456789abcdef0123456789abcdef", 40
	recv := push.NewReceiver(db, ingest.LoaderOptions{}, nil)
	if _, err := recv.Push(ctx, "zone-a", bytes.NewReader(pushBody(t, batch, n))); err == nil {
		t.Fatal("the push that failed mid-apply reported success")
	}
	count := func(q string) int64 {
		t.Helper()
		var v int64
		if err := conn.QueryRow(ctx, q).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if logs, runs := count(`SELECT count(*) FROM log_restore`), count(`SELECT count(*) FROM collector_run`); logs != 0 || runs != 0 {
		t.Fatalf("after the failed apply: %d log restores, %d runs stored; want none", logs, runs)
	}
	if applied, err := db.PushApplied(ctx, "zone-a", batch); err != nil || applied {
		t.Fatalf("the failed batch is marked applied (%v)", err)
	}
	res, err := recv.Push(ctx, "zone-a", bytes.NewReader(pushBody(t, batch, n)))
	if err != nil || res.Status != push.Applied || res.Added != n {
		t.Fatalf("the resend: %+v, %v; want applied, %d added", res, err, n)
	}
	res, err = recv.Push(ctx, "zone-a", bytes.NewReader(pushBody(t, batch, n)))
	if err != nil || res.Status != push.Duplicate {
		t.Fatalf("a third send: %+v, %v; want a duplicate", res, err)
	}
	if runs, err := db.Runs(ctx, "SQL-A-01", 10); err != nil || len(runs) != 1 {
		t.Errorf("runs after a failure and a resend: %d (%v), want 1", len(runs), err)
	}
	if rs, n2, err := db.ListRestores(ctx, store.RestoreFilter{Instance: "SQL-A-01"}); err != nil || n2 != n {
		t.Errorf("restores after the resend: %d listed of %d (%v), want %d", len(rs), n2, err, n)
	}
}
