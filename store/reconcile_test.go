package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestDerivationVersion: restores derived by another derivation version are
// re-derived by the next Reconcile, and only then.
func TestDerivationVersion(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	im, err := db.NewImport(ctx, "test", "t")
	if err != nil {
		t.Fatal(err)
	}
	b := i64(100 << 20)
	if err := im.History(HistoryRow{Instance: "SQL01", RestoreHistoryID: 1, RestoreDate: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
		Database: "A", RestoreType: "D", BackupType: "D", BackupSize: b, Origin: Origin{Source: "history", File: "h.csv", Line: 2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := im.Close(); err != nil {
		t.Fatal(err)
	}
	tamper := func() {
		if _, err := db.write.ExecContext(ctx, `UPDATE restore SET duration_s = 999, content_hash = 1`); err != nil {
			t.Fatal(err)
		}
	}
	duration := func() (d *float64) {
		if err := db.write.QueryRowContext(ctx, `SELECT duration_s FROM restore`).Scan(&d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	tamper()
	if err := db.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if d := duration(); d == nil || *d != 999 {
		t.Fatalf("same derivation version: restore re-derived (duration %v)", d)
	}
	if _, err := db.write.ExecContext(ctx, `UPDATE setting SET value = 'old' WHERE key = 'derivation_version'`); err != nil {
		t.Fatal(err)
	}
	if err := db.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if d := duration(); d != nil {
		t.Errorf("after a derivation change: duration %v, want unknown (history alone has none)", *d)
	}
	var v string
	if err := db.write.QueryRowContext(ctx, `SELECT value FROM setting WHERE key = 'derivation_version'`).Scan(&v); err != nil || v != derivationVersion {
		t.Errorf("derivation_version = %q (%v), want %q", v, err, derivationVersion)
	}
}

func i64(v int64) *int64 { return &v }
