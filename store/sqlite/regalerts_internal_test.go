package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/finding"
)

// TestEnqueueWatchAlert: a watch's alert is keyed by its series and
// restore, once each way, in the caller's transaction.
func TestEnqueueWatchAlert(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	if err := db.SetInstanceTags(ctx, "SQL01", nil); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		tx, err := db.write.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{store.AlertWatchOpened, store.AlertWatchClosed} {
			if err := enqueueAlert(ctx, tx, finding.WatchEvent(k, "SQL01", "Sales", store.KindFull, "regression", 77, time.Now(), 0.4,
				"Sales on SQL01: last restore 2.5× its usual time — watching")); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	as, err := db.Alerts(ctx, store.AlertFilter{})
	if err != nil || len(as) != 2 || as[1].Key != "watch_opened/SQL01/Sales/full/77" || as[0].Key != "watch_closed/SQL01/Sales/full/77" ||
		as[1].Link != "/restores/77" || as[1].Severity != store.SeverityInfo {
		t.Fatalf("watch alerts: %+v %v", as, err)
	}
}
