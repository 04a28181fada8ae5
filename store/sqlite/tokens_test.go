package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/sqlite"
)

func TestCollectorTokens(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	tok, err := db.CreateCollectorToken(ctx, "zone-b")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, "rwc_") || len(tok) != 47 {
		t.Fatalf("token %q: want rwc_ and 43 base64url characters", tok)
	}
	if _, err := db.CreateCollectorToken(ctx, "zone-b"); store.ErrorCode(err) != store.ECONFLICT {
		t.Errorf("second token for a valid name: %v, want a conflict", err)
	}
	if _, err := db.CreateCollectorToken(ctx, "zone b"); store.ErrorCode(err) != store.EINVALID {
		t.Errorf("name with a space: %v, want invalid", err)
	}
	name, err := db.CollectorForToken(ctx, tok)
	if err != nil || name != "zone-b" {
		t.Fatalf("CollectorForToken = %q, %v; want zone-b", name, err)
	}
	wrong := tok[:len(tok)-1] + "A"
	if wrong == tok {
		wrong = tok[:len(tok)-1] + "B"
	}
	if _, err := db.CollectorForToken(ctx, wrong); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("a wrong token: %v, want not found", err)
	}

	// Only the hash is stored: the token's text is nowhere in the file.
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n int
	if err := raw.QueryRow(`SELECT COUNT(*) FROM collector_token WHERE hash = ? OR name = ?`, tok, tok).Scan(&n); err != nil || n != 0 {
		t.Errorf("the token itself is stored (%d rows, %v)", n, err)
	}

	if err := db.RevokeCollectorToken(ctx, "zone-b"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CollectorForToken(ctx, tok); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("a revoked token: %v, want not found", err)
	}
	if err := db.RevokeCollectorToken(ctx, "zone-b"); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("revoking twice: %v, want not found", err)
	}
	list, err := db.CollectorTokens(ctx)
	if err != nil || len(list) != 1 || list[0].Revoked == nil {
		t.Fatalf("CollectorTokens = %+v, %v; want zone-b revoked", list, err)
	}
	// A revoked name takes a new token; the old one stays refused.
	tok2, err := db.CreateCollectorToken(ctx, "zone-b")
	if err != nil {
		t.Fatal(err)
	}
	if name, err := db.CollectorForToken(ctx, tok2); err != nil || name != "zone-b" {
		t.Errorf("the new token: %q, %v", name, err)
	}
	if _, err := db.CollectorForToken(ctx, tok); err == nil {
		t.Error("the revoked token works again after a new one was made")
	}
}

func TestPushBatchesRemembered(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if ok, err := db.PushApplied(ctx, "zone-b", "b1"); ok || err != nil {
		t.Fatalf("PushApplied before = %v, %v", ok, err)
	}
	for range 2 {
		if err := db.RecordPush(ctx, "zone-b", "b1", 10, 7); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := db.PushApplied(ctx, "ZONE-B", "b1"); !ok || err != nil {
		t.Errorf("PushApplied after = %v, %v; want true", ok, err)
	}
	if ok, _ := db.PushApplied(ctx, "zone-a", "b1"); ok {
		t.Error("another collector's batch id counts as applied")
	}
}
