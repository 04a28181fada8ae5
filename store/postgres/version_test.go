package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// TestDataVersionSharedNeverStale: DataVersion's query is shared by
// concurrent callers, yet a call made after a write always sees it, however
// many other callers are asking at the same time.
func TestDataVersionSharedNeverStale(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := db.DataVersion(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	for i := range 30 {
		before, err := db.DataVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.SetDefaultOffset(ctx, fmt.Sprintf("SQL%02d", i), 60); err != nil {
			t.Fatal(err)
		}
		after, err := db.DataVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if after == before {
			t.Fatalf("instance %d added, version still %s", i, after)
		}
	}
	// A caller gone before its answer fails no later one.
	gone, cancel := context.WithCancel(ctx)
	cancel()
	_, _ = db.DataVersion(gone)
	if _, err := db.DataVersion(ctx); err != nil {
		t.Errorf("after a cancelled caller: %v", err)
	}
}
