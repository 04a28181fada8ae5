package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/derive"
)

// TestDerivationVersion: restores derived by another derivation version are
// re-derived by the next Reconcile, and only then.
func TestDerivationVersion(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	im, err := db.NewImport(ctx, "test", "t")
	if err != nil {
		t.Fatal(err)
	}
	b := i64(100 << 20)
	if err := im.History(store.HistoryRow{Instance: "SQL01", RestoreHistoryID: 1, RestoreDate: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
		Database: "A", RestoreType: "D", BackupType: "D", BackupSize: b, Origin: store.Origin{Source: "history", File: "h.csv", Line: 2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := im.CommitAndReconcile(); err != nil {
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
	if err := db.write.QueryRowContext(ctx, `SELECT value FROM setting WHERE key = 'derivation_version'`).Scan(&v); err != nil || v != derive.Version {
		t.Errorf("derivation_version = %q (%v), want %q", v, err, derive.Version)
	}
}

func i64(v int64) *int64 { return &v }

// snapshotWarehouse is a warehouse of one instance, SQL01, with add, which
// imports history row hid (a full restore at hid o'clock) without
// reconciling, count, which counts the restores, and dirty, the instance's
// dirty counter.
type snapshotWarehouse struct {
	t  *testing.T
	db *DB
	id int64
}

func newSnapshotWarehouse(t *testing.T) *snapshotWarehouse {
	w := &snapshotWarehouse{t: t, db: openTestDB(t)}
	w.add(1)
	if err := w.db.write.QueryRow(`SELECT id FROM instance`).Scan(&w.id); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *snapshotWarehouse) add(hid int64) {
	w.t.Helper()
	im, err := w.db.NewImport(context.Background(), "test", "h.csv")
	if err != nil {
		w.t.Fatal(err)
	}
	if err := im.History(store.HistoryRow{Instance: "SQL01", RestoreHistoryID: hid, RestoreDate: time.Date(2024, 1, 2, int(hid), 0, 0, 0, time.UTC),
		Database: "A", RestoreType: "D", BackupType: "D", Origin: store.Origin{Source: "history", File: "h.csv", Line: int(hid) + 1}}); err != nil {
		w.t.Fatal(err)
	}
	if err := im.Flush(); err != nil { // committed, not yet reconciled
		w.t.Fatal(err)
	}
}

func (w *snapshotWarehouse) count() (n int) {
	w.t.Helper()
	if err := w.db.write.QueryRow(`SELECT count(*) FROM restore`).Scan(&n); err != nil {
		w.t.Fatal(err)
	}
	return n
}

func (w *snapshotWarehouse) dirty() (n int64) {
	w.t.Helper()
	if err := w.db.write.QueryRow(`SELECT dirty FROM instance WHERE id = ?`, w.id).Scan(&n); err != nil {
		w.t.Fatal(err)
	}
	return n
}

// snapshot derives the instance as Reconcile's derivers do.
func (w *snapshotWarehouse) snapshot() derivedInstance {
	w.t.Helper()
	d := w.db.deriveInstance(context.Background(), nil, w.id)
	if d.err != nil || d.version == 0 {
		w.t.Fatalf("derive: version %d, %v", d.version, d.err)
	}
	return d
}

// write writes d as Reconcile's writer does and returns how many restores
// it wrote.
func (w *snapshotWarehouse) write(d derivedInstance) int {
	w.t.Helper()
	ctx := context.Background()
	tx, err := w.db.write.BeginTx(ctx, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	rw := &restoreWriter{tx: tx, ctx: ctx}
	defer rw.close()
	n, err := writeInstance(ctx, tx, rw, d)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := rw.flush(); err != nil {
		w.t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		w.t.Fatal(err)
	}
	return n
}

// TestFactsAddedWhileDerivingStayDirty: restores derived from a snapshot do
// not clear the instance when an import added facts after that snapshot;
// the next Reconcile derives them.
func TestFactsAddedWhileDerivingStayDirty(t *testing.T) {
	w := newSnapshotWarehouse(t)
	d := w.snapshot() // the snapshot holds restore 1
	w.add(2)          // committed after the snapshot
	w.write(d)
	if n := w.dirty(); n == 0 {
		t.Fatalf("dirty = %d after writing a stale derivation, want still dirty", n)
	}
	if n := w.count(); n != 1 {
		t.Errorf("%d restores from the stale snapshot, want 1", n)
	}
	if err := w.db.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := w.count(); n != 2 {
		t.Errorf("%d restores after Reconcile, want 2", n)
	}
	if n := w.dirty(); n != 0 {
		t.Errorf("dirty = %d after Reconcile, want 0", n)
	}
}

// TestSnapshotOvertakenIsNotWritten: a derivation whose snapshot another
// reconciliation overtook (it wrote the instance's restores, then an import
// made the instance dirty again, to the same counter value the snapshot
// saw) writes nothing: what it compared with the stored restores no longer
// holds, and the instance stays dirty for the import's own Reconcile.
func TestSnapshotOvertakenIsNotWritten(t *testing.T) {
	w := newSnapshotWarehouse(t)
	if err := w.db.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.add(2)
	d := w.snapshot() // restores 1 and 2; dirty 1
	// Another process reconciles the instance.
	if err := w.db.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.add(3) // dirty 1 again
	if n := w.write(d); n != 0 {
		t.Errorf("the overtaken snapshot wrote %d restores, want none", n)
	}
	if n := w.dirty(); n == 0 {
		t.Fatal("the overtaken snapshot cleared the instance: restore 3 would wait for another import")
	}
	if err := w.db.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := w.count(); n != 3 {
		t.Errorf("%d restores after Reconcile, want 3", n)
	}
}

// TestReconcileAheadOfTheWriter: however far derivation may run ahead of
// the writer and wherever its transactions end (one instance and one
// restore ahead with a commit after every instance, or the defaults), the
// warehouse is the same, restore ids included: the writer numbers new
// restores in the order of instances. The facts arrive in two imports, so
// the second reconciliation writes new, changed and stale restores. Before
// the writer numbered them, ids followed which NULL pattern's statement
// was written first, and so where transactions ended: CI saw this test
// fail under load.
func TestReconcileAheadOfTheWriter(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 16))
	var facts []windowFact
	for i := range 12 {
		facts = append(facts, windowFacts(rng, fmt.Sprintf("SQL%02d", i), 6, 7)...)
	}
	state := func(limits reconcileLimits) []string {
		db := openTestDB(t)
		db.reconcile = limits
		for _, part := range [][]windowFact{facts[:len(facts)/2], facts[len(facts)/2:]} {
			importFacts(t, db, part)
			if err := db.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
		}
		out := derivedState(t, db)
		rows, err := db.write.Query(`SELECT id, natural_key FROM restore ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id, k int64
			if err := rows.Scan(&id, &k); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("id %d: restore %d", id, k))
		}
		return out
	}
	narrow := defaultReconcileLimits
	narrow.instances, narrow.restores, narrow.txRows = 1, 1, 1
	wide := state(defaultReconcileLimits)
	if len(wide) < 12*2 {
		t.Fatalf("only %d lines of state: the fleet derived nothing", len(wide))
	}
	if got := state(narrow); !slices.Equal(got, wide) {
		t.Errorf("one instance ahead, a commit each:\n%s\nthe default:\n%s", strings.Join(got, "\n"), strings.Join(wide, "\n"))
	}
}
