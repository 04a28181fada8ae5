package ingest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/restorewatch/restorewatch/store"
)

// feed hands n history rows, a reject after every tenth and a backup set
// after every 25th to g, as parsers would, and stops at the first error.
func feed(g *gate, n int) (int, error) {
	for i := range n {
		if err := g.History(store.HistoryRow{Instance: "A", RestoreHistoryID: int64(i)}); err != nil {
			return i, err
		}
		if i%10 == 9 {
			g.Reject(store.Reject{Line: i})
		}
		if i%25 == 24 {
			if err := g.BackupSet(store.BackupSet{Instance: "A"}); err != nil {
				return i, err
			}
		}
	}
	return n, nil
}

// A parser that runs ahead of its file's hash: what it hands in before the
// verdict waits in the gate, then reaches the sink in the order it came,
// rejects and backup sets among the rows, exactly once; after a verdict that the file was
// imported before, nothing reaches the sink and the parse is stopped.
func TestGateHoldsUntilTheVerdict(t *testing.T) {
	for _, n := range []int{5, gateHold + 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ch := make(chan verdict, 1)
			var c store.Collect
			g := &gate{sink: &c, ch: ch}
			go func() {
				// Past gateHold records the gate waits for this.
				ch <- verdict{fingerprint: "f"}
			}()
			if n <= gateHold {
				if got, err := feed(g, n); err != nil || got != n {
					t.Fatalf("fed %d of %d: %v", got, n, err)
				}
			} else if _, err := feed(g, n); err != nil {
				t.Fatal(err)
			}
			v, err := g.close()
			if err != nil || v.fingerprint != "f" {
				t.Fatalf("close: %+v, %v", v, err)
			}
			if len(c.Histories) != n || len(c.Rejects) != n/10 || len(c.BackupSets) != n/25 {
				t.Fatalf("sink got %d rows, %d rejects and %d backup sets, want %d, %d and %d",
					len(c.Histories), len(c.Rejects), len(c.BackupSets), n, n/10, n/25)
			}
			for i, h := range c.Histories {
				if h.RestoreHistoryID != int64(i) {
					t.Fatalf("row %d is %d: out of order", i, h.RestoreHistoryID)
				}
			}
		})
	}
	t.Run("unchanged", func(t *testing.T) {
		ch := make(chan verdict, 1)
		var c store.Collect
		g := &gate{sink: &c, ch: ch}
		if _, err := feed(g, 100); err != nil {
			t.Fatal(err)
		}
		ch <- verdict{fingerprint: "f", unchanged: true}
		got, err := feed(g, 100)
		if !errors.Is(err, errUnchanged) || got != 0 {
			t.Fatalf("after the verdict: fed %d, %v; want 0 and errUnchanged", got, err)
		}
		if v, err := g.close(); err != nil || !v.unchanged {
			t.Fatalf("close: %+v, %v", v, err)
		}
		if len(c.Histories)+len(c.Rejects)+len(c.BackupSets) != 0 {
			t.Fatalf("sink got %d rows, %d rejects and %d backup sets of a file imported before",
				len(c.Histories), len(c.Rejects), len(c.BackupSets))
		}
	})
}
