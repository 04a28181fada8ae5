package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/derive"
	"github.com/restorewatch/restorewatch/store/row"
)

// reconcileLimits bound reconciliation. It commits several instances per
// transaction: one commit per instance rewrote the same index pages to the
// WAL once per instance, which was most of a large import's time. A
// transaction ends after txTime or txRows derived restores, whichever comes
// first, so another writer (the collector, a second import) never waits
// longer than that behind it, well inside the busy timeout. Derivation runs
// ahead of the writer by at most instances instances and (but for one)
// restores restores: the writer's pauses (a commit and its checkpoint, a
// slow instance) are absorbed by that queue instead of stalling the
// derivers, and restores bounds the memory an instance of a whole
// derivation's thousands of restores holds.
type reconcileLimits struct {
	txTime              time.Duration
	txRows              int
	instances, restores int
}

var defaultReconcileLimits = reconcileLimits{txTime: time.Second, txRows: 200000, instances: 64, restores: 50000}

// Reconcile rebuilds the restores of every instance whose raw facts changed
// since it was last reconciled. It derives everything from the raw tables, so
// the result does not depend on the order in which sources were imported, and
// a crash between an import's commit and its reconciliation is repaired by the
// next call (the instance stays marked dirty).
func (db *DB) Reconcile(ctx context.Context) error {
	if err := db.checkDerivation(ctx); err != nil {
		return err
	}
	// Whatever a crashed bulk reconciliation left dropped comes back first.
	if err := db.restoreIndexes(ctx); err != nil {
		return err
	}
	rows, err := db.write.QueryContext(ctx, `SELECT id FROM instance WHERE dirty > 0 ORDER BY id`)
	if err != nil {
		return fmt.Errorf("store: reconcile: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("store: reconcile: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if len(ids) > 0 {
		bulk, err := db.bulkWorth(ctx)
		if err != nil {
			return fmt.Errorf("store: reconcile: %w", err)
		}
		if bulk {
			if err := db.dropIndexes(ctx); err != nil {
				return fmt.Errorf("store: reconcile: drop indexes: %w", err)
			}
		}
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	ahead := db.deriveAhead(actx, ids)
	done := 0
	var nextID int64 // carried from batch to batch: see restoreWriter
	for more := len(ids) > 0; more; {
		var err error
		if more, err = db.reconcileBatch(ctx, ahead, &done, len(ids), &nextID); err != nil {
			cancel()
			for range ahead {
			}
			// Build the indexes again even so: the dirty instances wait
			// for the next Reconcile, the pages should not.
			_ = db.restoreIndexes(context.WithoutCancel(ctx))
			return err
		}
	}
	return db.restoreIndexes(ctx)
}

// derivedInstance is one instance's derivation, made from one snapshot of
// its raw facts and stored restores. version is the instance's dirty
// counter in that snapshot, gen its derived counter.
type derivedInstance struct {
	id, version, gen int64
	out              derive.Instance
	err              error
	// What to write: the positions in out.Restores of new and changed
	// restores, whether each is new (fresh, beside changed), and the stored
	// ones no longer derived (diffRestores).
	changed []int
	fresh   []bool
	stale   []staleRestore
	// from is the local time from which out replaces the instance's
	// restores (by anchor), wholeInstance for all of them; votes are
	// out's restore_date votes by day; windowable is what a whole
	// derivation found (a window leaves it as it was: true).
	from       int64
	votes      dayVotes
	windowable bool
}

// deriveAhead reads and derives the instances on the read pool, one
// snapshot each, while the writer writes the previous ones, on a goroutine
// per core (at most 4): the derivers also compare with the stored
// restores, so that the writer, usually the pipeline's narrowest step,
// only writes (on 2 cores one deriver or two made no measurable
// difference before they took that comparison over). The instances come
// out in the order of ids, at most db.reconcile's bounds ahead of the
// writer, and the writer numbers new restores in that order (restoreWriter),
// so they get the same ids whatever the timing. Every import increments an
// instance's dirty counter in the transaction that adds its facts, so the
// writer clears the counter only when it still holds the version derived
// here; facts committed in between leave the instance dirty for the next
// Reconcile (the one that import's Close runs).
func (db *DB) deriveAhead(ctx context.Context, ids []int64) <-chan derivedInstance {
	workers := max(min(runtime.GOMAXPROCS(0), len(ids), 4), 1)
	ch := make(chan derivedInstance)
	slots := make([]chan derivedInstance, len(ids))
	for i := range slots {
		slots[i] = make(chan derivedInstance, 1)
	}
	type job struct {
		i  int
		id int64
	}
	next := make(chan job)
	var (
		mu                 sync.Mutex
		room               = sync.NewCond(&mu)
		instances, derived int // ahead of the writer
	)
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		room.Broadcast()
		mu.Unlock()
	})
	go func() {
		defer close(next)
		defer stop() // the only one that waits for room
		for i, id := range ids {
			mu.Lock()
			for (instances >= db.reconcile.instances || derived >= db.reconcile.restores) && ctx.Err() == nil {
				room.Wait()
			}
			instances++
			mu.Unlock()
			select {
			case next <- job{i, id}:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range workers {
		go func() {
			q, err := db.snapshotConn(ctx)
			if err == nil {
				defer q.close()
			}
			for j := range next {
				d := derivedInstance{id: j.id, err: err}
				if err == nil {
					d = db.deriveInstance(ctx, q, j.id)
				}
				mu.Lock()
				derived += len(d.out.Restores)
				mu.Unlock()
				slots[j.i] <- d // buffered: never blocks
			}
		}()
	}
	go func() {
		defer close(ch)
		for i := range slots {
			var d derivedInstance
			select {
			case d = <-slots[i]:
			case <-ctx.Done():
				return
			}
			mu.Lock()
			instances--
			derived -= len(d.out.Restores)
			room.Broadcast()
			mu.Unlock()
			select {
			case ch <- d:
			case <-ctx.Done():
				return
			}
			if d.err != nil {
				return
			}
		}
	}()
	return ch
}

// deriveInstance derives instance id in one snapshot of q (nil: a
// connection of its own).
func (db *DB) deriveInstance(ctx context.Context, q *snapshotConn, id int64) derivedInstance {
	d := derivedInstance{id: id, from: wholeInstance}
	if d.err = ctx.Err(); d.err != nil {
		return d
	}
	ctx = statementContext(ctx)
	if q == nil {
		if q, d.err = db.snapshotConn(ctx); d.err != nil {
			return d
		}
		defer q.close()
	}
	if d.err = q.begin(ctx); d.err != nil {
		return d
	}
	defer q.end(ctx)
	var from, def sql.NullInt64
	var canWindow bool
	var semantics string
	if err := q.QueryRowContext(ctx, `SELECT dirty, derived, dirty_from, windowable, restore_date_semantics, default_utc_offset
		FROM instance WHERE id = ?`, id).
		Scan(&d.version, &d.gen, &from, &canWindow, &semantics, &def); err == sql.ErrNoRows {
		return derivedInstance{id: id} // deleted since
	} else if err != nil || d.version == 0 {
		d.err = err
		return d // or reconciled since
	}
	if from.Valid && canWindow {
		out, votes, start, ok, err := db.deriveWindow(ctx, q, id, def, from.Int64, semantics)
		if err != nil {
			d.err = err
			return d
		}
		if ok {
			d.from, d.out, d.votes, d.windowable = start, out, votes, true
			db.windows.Add(1)
		}
	}
	if d.from == wholeInstance {
		in, err := loadFacts(ctx, q, id, def, wholeInstance, noBound)
		if err != nil {
			d.err = err
			return d
		}
		d.out = derive.Derive(in)
		d.votes = votesOf(d.out.Restores)
		d.windowable = windowable(in) && len(d.out.Untimed) == 0
	}
	// The rows are made, and compared with the stored ones, here on the
	// deriving goroutine: the writer's goroutine is the busier one.
	for i := range d.out.Restores {
		r := &d.out.Restores[i]
		r.Row = native(row.Values(r, id))
	}
	d.changed, d.fresh, d.stale, d.err = diffRestores(ctx, q, id, &d.out, d.from)
	return d
}

// checkDerivation marks every instance dirty when the warehouse's restores
// were derived by another derivation version (or none recorded it).
func (db *DB) checkDerivation(ctx context.Context) error {
	var v string
	err := db.write.QueryRowContext(ctx, `SELECT value FROM setting WHERE key = 'derivation_version'`).Scan(&v)
	if err == nil && v == derive.Version {
		return nil
	}
	if err != nil && err != sql.ErrNoRows {
		return fmt.Errorf("store: reconcile: %w", err)
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: reconcile: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE instance SET dirty = dirty + 1, dirty_from = NULL`); err != nil {
		return fmt.Errorf("store: reconcile: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO setting (key, value) VALUES ('derivation_version', ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, derive.Version); err != nil {
		return fmt.Errorf("store: reconcile: %w", err)
	}
	return tx.Commit()
}

// ReconcileAll rebuilds every instance's restores from scratch.
func (db *DB) ReconcileAll(ctx context.Context) error {
	if _, err := db.write.ExecContext(ctx, `UPDATE instance SET dirty = dirty + 1, dirty_from = NULL`); err != nil {
		return fmt.Errorf("store: reconcile all: %w", err)
	}
	return db.Reconcile(ctx)
}

// statementContext is ctx for short statements that check ctx themselves
// between units of work (an instance's derivation or writing, an import's
// batch, an instance's findings, a file's lookup): modernc's driver watches
// a cancellable context with a goroutine of its own for every statement,
// and a day of 10,000 instances runs some 150,000 short statements in its
// derivation and as many in its import and analysis; those goroutines'
// scheduling cost the writer more than a second of a 2-core machine. Where
// the unit is a transaction begun with ctx itself, cancelling still ends it
// at its next statement (database/sql rolls it back).
func statementContext(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

// reconcileIdle is how long a reconcile transaction waits for the next
// derived instance before it commits what it has: the write lock is held
// for writing, not for deriving on the other core.
const reconcileIdle = 50 * time.Millisecond

// reconcileBatch writes derived instances from ahead in one transaction,
// until the transaction's time or row budget is spent or the next instance
// is slow to come, and says whether more wait. The transaction begins only
// once the first instance is derived. nextID carries the writer's next
// restore id from one batch to the next.
func (db *DB) reconcileBatch(ctx context.Context, ahead <-chan derivedInstance, done *int, total int, nextID *int64) (more bool, err error) {
	d, ok := <-ahead
	if !ok {
		return false, nil
	}
	cancel := ctx
	ctx = statementContext(ctx)
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store: reconcile: %w", err)
	}
	defer tx.Rollback()
	w := &restoreWriter{tx: tx, ctx: ctx, nextID: *nextID}
	defer w.close()
	idle := time.NewTimer(reconcileIdle)
	defer idle.Stop()
	start, rows := time.Now(), 0
	for ok {
		if d.err != nil {
			return false, fmt.Errorf("store: reconcile instance %d: %w", d.id, d.err)
		}
		if err := cancel.Err(); err != nil {
			return false, fmt.Errorf("store: reconcile: %w", err)
		}
		k, err := writeInstance(ctx, tx, w, d)
		if err != nil {
			return false, fmt.Errorf("store: reconcile instance %d: %w", d.id, err)
		}
		rows += k
		*done++
		db.Report(store.Progress{Phase: store.PhaseDerive, Done: *done, Total: total})
		if time.Since(start) >= db.reconcile.txTime || rows >= db.reconcile.txRows {
			break
		}
		idle.Reset(reconcileIdle)
		select {
		case d, ok = <-ahead:
		case <-idle.C:
			ok = false // commit now; the next batch waits outside a transaction
		}
	}
	if err := w.flush(); err != nil {
		return false, fmt.Errorf("store: reconcile: %w", err)
	}
	if err := recordRestoreChanges(ctx, tx, w.upserted, w.deleted); err != nil {
		return false, fmt.Errorf("store: reconcile: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("store: reconcile: commit: %w", err)
	}
	*nextID = w.nextID
	return true, nil
}

// writeInstance writes one instance's derivation inside tx and returns how
// many restores it derived (the transaction's budget counts those), 0 when
// another process overtook its snapshot.
func writeInstance(ctx context.Context, tx *sql.Tx, w *restoreWriter, d derivedInstance) (int, error) {
	if d.version == 0 {
		return 0, nil // deleted or reconciled before it was read
	}
	// Claim the instance, and mark it in the same statement: another
	// process's Reconcile may have reconciled it since it was derived (the
	// writer lock serialises us); then what was compared with the
	// snapshot's restores no longer holds, and whatever made it dirty again
	// is that import's to derive. Cleared only if no import added facts
	// since the snapshot. The findings are now stale: the analysis is
	// marked pending in the same transaction, so a crash before it runs
	// leaves the mark.
	res, err := tx.ExecContext(ctx, `UPDATE instance SET restore_date_semantics = ?, semantics_samples = ?,
		dirty = CASE WHEN dirty = ? THEN 0 ELSE dirty END, dirty_from = CASE WHEN dirty = ? THEN NULL ELSE dirty_from END,
		windowable = ?, analysis_pending = analysis_pending + 1, derived = derived + 1
		WHERE id = ? AND dirty != 0 AND derived = ?`,
		d.out.Semantics, d.out.SemanticsN, d.version, d.version, d.windowable, d.id, d.gen)
	if err != nil {
		return 0, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return 0, err
	}
	if err := w.apply(&d); err != nil {
		return 0, err
	}
	if d.from == wholeInstance {
		if _, err := tx.ExecContext(ctx, `DELETE FROM untimed_record WHERE instance_id = ?`, d.id); err != nil {
			return 0, err
		}
		for src, n := range d.out.Untimed {
			if _, err := tx.ExecContext(ctx, `INSERT INTO untimed_record (instance_id, source, records) VALUES (?, ?, ?)`,
				d.id, src, n); err != nil {
				return 0, err
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM derive_vote WHERE instance_id = ? AND day >= ?`,
		d.id, derive.FloorDiv(d.from, dayMS)); err != nil {
		return 0, err
	}
	for day, c := range d.votes {
		if _, err := tx.ExecContext(ctx, `INSERT INTO derive_vote (instance_id, day, start_votes, end_votes) VALUES (?, ?, ?, ?)`,
			d.id, day, c[0], c[1]); err != nil {
			return 0, err
		}
	}
	return len(d.out.Restores), nil
}
