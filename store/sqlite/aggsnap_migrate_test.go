package sqlite_test

import (
	"context"
	"testing"

	"github.com/restorewatch/restorewatch/store/sqlite"
)

// TestAggregatesKeptUnderNULAreDropped: migration 0037 deletes the kept
// aggregates whose version an older release parted with NUL (no release
// reads them, and `rw migrate` could not copy them to PostgreSQL) and keeps
// the others.
func TestAggregatesKeptUnderNULAreDropped(t *testing.T) {
	ctx := context.Background()
	path, raw := oldWarehouse(t, 36)
	for _, a := range []struct{ name, version string }{
		{"figures", "keep/1/dev\x0033.36000.242.0.3000.100059.0"},
		{"cohorts", "keep/1/dev\x1f33.36000.242.0.3000.100059.0"},
	} {
		if _, err := raw.Exec(`INSERT INTO aggregate_snapshot (name, version, took_ms, saved_at, body) VALUES (?, ?, 5, 0, x'7b7d')`,
			a.name, a.version); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	as, err := db.Aggregates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range as {
		got = append(got, a.Name)
	}
	if len(got) != 1 || got[0] != "cohorts" {
		t.Errorf("kept aggregates after 0037: %v, want [cohorts]", got)
	}
}
