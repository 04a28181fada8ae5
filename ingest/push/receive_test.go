package push_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/ingest/push"
	"github.com/restorewatch/restorewatch/store"
)

// A pass of several batches is derived once, after its last batch: before
// it the instance's facts are stored and it is still marked for derivation.
func TestSplitPassDerivedAfterItsLastBatch(t *testing.T) {
	db, path := openDB(t)
	ctx := context.Background()
	dir := t.TempDir()
	cl, err := push.New(push.Options{URL: "http://localhost:1", Token: "rwc_x", Spool: dir})
	if err != nil {
		t.Fatal(err)
	}
	c := records(t)
	n := push.BatchRecords + len(c.LogRestores)
	_, err = cl.Records(ctx, "live", "SQLPROD01\\PROD", func(s store.Sink) error {
		for i := range n {
			l := c.LogRestores[i%len(c.LogRestores)]
			l.Origin.Line = i + 1
			if err := s.LogRestore(l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	files := spooled(t, dir)
	if len(files) != 2 {
		t.Fatalf("%d batches, want 2", len(files))
	}
	rcv := push.NewReceiver(db, ingest.LoaderOptions{}, nil)
	apply := func(p string) {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := rcv.Push(ctx, "zone-b", f); err != nil {
			t.Fatal(err)
		}
	}
	apply(files[0])
	if got := count(t, path, `SELECT COUNT(*) FROM instance WHERE dirty > 0`); got != 1 {
		t.Errorf("after the first batch %d instances wait for derivation, want 1", got)
	}
	if got := count(t, path, `SELECT COUNT(*) FROM restore`); got != 0 {
		t.Errorf("after the first batch %d restores are derived, want 0", got)
	}
	apply(files[1])
	if got := count(t, path, `SELECT COUNT(*) FROM instance WHERE dirty > 0`); got != 0 {
		t.Errorf("after the last batch %d instances wait for derivation", got)
	}
	if got := count(t, path, `SELECT COUNT(*) FROM restore`); got == 0 {
		t.Error("after the last batch no restore is derived")
	}
}

// Pushed to a real server over TLS: applied once; the same batch again is
// acknowledged without being applied; the same facts in a new batch add
// nothing; the spool is empty once acknowledged.
func TestPushAppliesOnceAndReplaysAddNothing(t *testing.T) {
	db, path := openDB(t)
	tok, err := db.CreateCollectorToken(context.Background(), "zone-b")
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := central(t, db)
	dir := t.TempDir()
	cl, err := push.New(push.Options{URL: ts.URL, Token: tok, Spool: dir, CAFile: caFile(t, ts)})
	if err != nil {
		t.Fatal(err)
	}
	c := records(t)
	if _, err := cl.Records(context.Background(), "live", "SQLPROD01\\PROD", feed(c)); err != nil {
		t.Fatal(err)
	}
	batch := spooled(t, dir)[0]
	saved, err := os.ReadFile(batch)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.SendAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, _ := cl.Pending(); n != 0 {
		t.Errorf("%d batches left after the server acknowledged them", n)
	}
	restores := count(t, path, `SELECT COUNT(*) FROM restore`)
	logs := count(t, path, `SELECT COUNT(*) FROM log_restore`)
	if restores != len(c.LogRestores) || logs != len(c.LogRestores) {
		t.Fatalf("central holds %d restores from %d log records, want %d", restores, logs, len(c.LogRestores))
	}
	if sets := count(t, path, `SELECT COUNT(*) FROM backup_set`); sets != len(c.BackupSets) {
		t.Fatalf("central holds %d backup sets, want the pass's %d", sets, len(c.BackupSets))
	}

	// The acknowledgement was lost: the collector sends the same file again.
	res := post(t, ts, tok, saved)
	first, err := push.Decode(bytes.NewReader(saved))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != push.Duplicate || res.Batch != first.Batch {
		t.Errorf("replayed batch: %+v, want a duplicate of %s", res, first.Batch)
	}
	// The same facts collected again (watermarks lost) in a new batch.
	if _, err := cl.Records(context.Background(), "live", "SQLPROD01\\PROD", feed(c)); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(spooled(t, dir)[0])
	res = post(t, ts, tok, again)
	if res.Status != push.Applied || res.Added != 0 {
		t.Errorf("the same facts in a new batch: %+v, want applied adding 0", res)
	}
	if got := count(t, path, `SELECT COUNT(*) FROM restore`); got != restores {
		t.Errorf("restores %d after replays, want %d", got, restores)
	}
	if got := count(t, path, `SELECT COUNT(*) FROM log_restore`); got != logs {
		t.Errorf("log records %d after replays, want %d", got, logs)
	}
	if got := count(t, path, `SELECT COUNT(*) FROM backup_set`); got != len(c.BackupSets) {
		t.Errorf("backup sets %d after replays, want %d", got, len(c.BackupSets))
	}
	if got := count(t, path, `SELECT COUNT(*) FROM push_batch`); got != 2 {
		t.Errorf("%d batches remembered, want 2", got)
	}
}

// A revoked, wrong or missing token is refused from the headers alone:
// the server never reads the body, a whole valid batch.
func TestRefusedBeforeTheBodyIsRead(t *testing.T) {
	db, path := openDB(t)
	ctx := context.Background()
	tok, err := db.CreateCollectorToken(ctx, "zone-b")
	if err != nil {
		t.Fatal(err)
	}
	ts, reads := central(t, db)
	cl, err := push.New(push.Options{URL: ts.URL, Token: tok, Spool: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Records(ctx, "live", "A", feed(records(t))); err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(spooledOne(t, cl))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeCollectorToken(ctx, "zone-b"); err != nil {
		t.Fatal(err)
	}
	for _, presented := range []string{tok, "rwc_" + strings.Repeat("A", 43), ""} {
		code, _ := postStatus(t, ts, presented, bytes.NewReader(body), int64(len(body)))
		if code != http.StatusUnauthorized {
			t.Errorf("token %.8q…: %d, want 401", presented, code)
		}
	}
	if n := reads.Load(); n != 0 {
		t.Errorf("the server read refused bodies %d times", n)
	}
	if got := count(t, path, `SELECT COUNT(*) FROM push_batch`); got != 0 {
		t.Errorf("%d batches applied with refused tokens", got)
	}
	// The same body with a valid token is read and applied: the spy sees
	// reads when there are some.
	tok2, _ := db.CreateCollectorToken(ctx, "zone-b")
	if code, res := postStatus(t, ts, tok2, bytes.NewReader(body), int64(len(body))); code != http.StatusOK || res.Status != push.Applied {
		t.Fatalf("valid token: %d %+v", code, res)
	}
	if reads.Load() == 0 {
		t.Error("the spy saw no read of an applied body")
	}
}
