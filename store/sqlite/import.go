package sqlite

import (
	"context"
	"fmt"
	"math"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/row"
)

// Import is a Sink that writes records to the warehouse in batches, one
// transaction per batch, so a crash leaves the warehouse as it was before or
// after a committed batch, and re-running the import adds only what is missing.
type Import struct {
	db        *DB
	ctx       context.Context
	batch     []record
	batchSize int
	// committing carries the result of the batch being committed in the
	// background while the caller parses the next one; spare is that
	// batch's slice, reused once it is done.
	committing chan error
	spare      []record
	failed     error // a failed commit: nothing after it is committed
	summary    store.ImportSummary
	instances  map[string]int64
	touched    map[int64]string
	runID      int64
	// occurrence counts identical client-output restores per file (logKey).
	occurrence row.Occurrences
	maxRej     int
	// push, when set, is marked applied by the commit Commit makes.
	push *store.PushMark
}

// MarkPush makes Commit mark the collector's batch p applied, with its
// runs, in the transaction of the last batch it commits.
func (im *Import) MarkPush(p store.PushMark) { im.push = &p }

// NewImport starts an import of one file (or live pass) from source.
func (db *DB) NewImport(ctx context.Context, source, file string) (store.Import, error) {
	res, err := db.write.ExecContext(ctx, `INSERT INTO import_run (source, file, started_at) VALUES (?, ?, ?)`,
		source, file, db.now().UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("store: start import: %w", err)
	}
	id, _ := res.LastInsertId()
	return &Import{db: db, ctx: ctx, batchSize: store.BatchSize, runID: id, maxRej: 100000,
		summary:   store.ImportSummary{Source: source, File: file},
		instances: map[string]int64{}, touched: map[int64]string{}, occurrence: row.Occurrences{}}, nil
}

// WholeInOne makes the import commit everything it is handed in one
// transaction, at Commit, instead of every store.BatchSize records: for a
// collector's push (at most 20,000 records), so that a crash mid-apply
// shows none of its restores rather than some until the collector resends
// (issue 40). Call it before handing records.
func (im *Import) WholeInOne() { im.batchSize = math.MaxInt }

// History implements Sink.
func (im *Import) History(h store.HistoryRow) error { return im.add(&h, h.Origin) }

// LogRestore implements Sink.
func (im *Import) LogRestore(l store.LogRestore) error { return im.add(&l, l.Origin) }

// Host implements Sink.
func (im *Import) Host(h store.HostSnapshot) error { return im.add(&h, h.Origin) }

// BackupSet implements Sink. A set adds no fact to derive restores from:
// it marks no instance for reconciliation.
func (im *Import) BackupSet(b store.BackupSet) error { return im.add(&b, b.Origin) }

// Reject implements Sink.
func (im *Import) Reject(r store.Reject) {
	if len(im.summary.Rejects) < im.maxRej {
		im.summary.Rejects = append(im.summary.Rejects, r)
	}
}

// Handed returns how many records were handed in so far and the rejects
// kept so far (the summary's slice: read it, do not keep it across calls).
// Call it from the goroutine that feeds the import: a loader feeding many
// files into one import counts each file's share with it.
func (im *Import) Handed() (read int64, rejects []store.Reject) {
	return im.summary.Read, im.summary.Rejects
}

// record is what an import batches: each record validates itself.
type record interface {
	Validate() error
}

// encodedHistory is a history row with its facts array, encoded by add on
// the parser's goroutine rather than by the committer.
type encodedHistory struct {
	*store.HistoryRow
	facts string
}

// add validates rec (which came from o) and batches it.
func (im *Import) add(rec record, o store.Origin) error {
	im.summary.Read++
	row.Normalise(rec) // one server is one instance whichever reader named it
	if err := rec.Validate(); err != nil {
		im.Reject(store.Reject{File: o.File, Line: o.Line, Reason: err.Error()})
		return nil
	}
	if h, ok := rec.(*store.HistoryRow); ok {
		rec = &encodedHistory{h, string(row.AppendHistoryFacts(make([]byte, 0, 384), h))}
	}
	im.batch = append(im.batch, rec)
	if len(im.batch) >= im.batchSize {
		return im.flushBehind()
	}
	return nil
}

// flushBehind hands the full batch to a goroutine that commits it while the
// caller goes on parsing, after the previous batch's commit has finished:
// batches still commit one at a time and in order, each in its own
// transaction. Its error comes back from the next add, Flush or Close.
func (im *Import) flushBehind() error {
	if err := im.wait(); err != nil {
		return err
	}
	b := im.batch
	im.batch = im.spare[:0]
	im.spare = b
	done := make(chan error, 1)
	im.committing = done
	go func() { done <- im.commit(b, false) }()
	return nil
}

// wait waits for the batch committing in the background, if any.
func (im *Import) wait() error {
	if im.committing != nil {
		if err := <-im.committing; err != nil && im.failed == nil {
			im.failed = err
		}
		im.committing = nil
		clear(im.spare)
	}
	return im.failed
}

// Flush commits the pending batch, after any batch still committing.
func (im *Import) Flush() error {
	if err := im.wait(); err != nil {
		return err
	}
	return im.commitPending(false)
}

// commitPending commits the pending batch, marking the push if final.
func (im *Import) commitPending(final bool) error {
	if err := im.commit(im.batch, final); err != nil {
		return err
	}
	clear(im.batch)
	im.batch = im.batch[:0]
	return nil
}

// commit writes one batch in one transaction. It runs on one goroutine at
// a time; what it updates (the counts, the instance and touched maps) the
// caller reads only after wait.
func (im *Import) commit(batch []record, final bool) error {
	mark := final && im.push != nil
	if len(batch) == 0 && !mark {
		return nil
	}
	tx, err := im.db.write.BeginTx(im.ctx, nil)
	if err != nil {
		return fmt.Errorf("store: import batch: %w", err)
	}
	defer tx.Rollback()
	w := &batchWriter{tx: tx, im: im, ctx: statementContext(im.ctx), members: row.Members{}}
	added0 := im.summary.Added
	count := func(added, read int) {
		im.summary.Added += int64(added)
		im.summary.Duplicates += int64(read - added)
	}
	for _, rec := range batch {
		var added bool
		switch r := rec.(type) {
		case *encodedHistory:
			n, k, err := w.history(r)
			if err != nil {
				return fmt.Errorf("store: import batch: %w", err)
			}
			count(n, k)
			continue
		case *store.LogRestore:
			n, k, err := w.logRestore(r)
			if err != nil {
				return fmt.Errorf("store: import batch: %w", err)
			}
			count(n, k)
			continue
		case *store.HostSnapshot:
			added, err = w.host(r)
		case *store.BackupSet:
			added, err = w.backupSet(r)
		}
		if err != nil {
			return fmt.Errorf("store: import batch: %w", err)
		}
		if added {
			count(1, 1)
		} else {
			count(0, 1)
		}
	}
	if err := w.flushMembers(); err != nil {
		return fmt.Errorf("store: import batch: %w", err)
	}
	for _, flush := range []func() (int, int, error){w.flushHistory, w.flushLogs} {
		n, k, err := flush()
		if err != nil {
			return fmt.Errorf("store: import batch: %w", err)
		}
		count(n, k)
	}
	for id, at := range w.dirty {
		var from any // NULL: the whole instance
		if at != wholeInstance {
			from = at
		}
		if _, err := tx.ExecContext(w.ctx, `UPDATE instance SET dirty = dirty + 1,
			dirty_from = CASE WHEN dirty = 0 THEN ?1 WHEN dirty_from IS NULL OR ?1 IS NULL THEN NULL ELSE MIN(dirty_from, ?1) END
			WHERE id = ?2`, from, id); err != nil {
			return fmt.Errorf("store: import batch: %w", err)
		}
	}
	if err := w.close(); err != nil {
		return err
	}
	if mark {
		p := im.push
		marked, err := im.db.recordPush(w.ctx, tx, p.Collector, p.Batch, im.summary.Read, im.summary.Added, p.Runs)
		if err != nil {
			return fmt.Errorf("store: record push %s/%s: %w", p.Collector, p.Batch, err)
		}
		if !marked {
			// Another apply of the batch marked it first: what this one
			// counted as added is that one's.
			im.summary.Duplicates += im.summary.Added - added0
			im.summary.Added = added0
			return nil
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: import batch: commit: %w", err)
	}
	return nil
}

// CommitAndReconcile commits, then reconciles every instance marked dirty
// (not only this import's): what a test or a one-off tool wants. The
// program's imports go through ingest.Loader, which commits any number of
// imports and derives once. A failed import still reconciles what it
// committed.
func (im *Import) CommitAndReconcile() (store.ImportSummary, error) {
	return store.CommitAndReconcile(im.ctx, im, im.db)
}

// Commit commits what is pending, records the run and returns the summary.
// It derives nothing: the instances it touched stay marked dirty until the
// next DB.Reconcile, which ingest.Loader runs once after a whole run's files.
func (im *Import) Commit() (store.ImportSummary, error) {
	ferr := im.wait()
	if ferr == nil {
		ferr = im.commitPending(true)
	}
	for id, name := range im.touched {
		im.summary.Instances = append(im.summary.Instances, name)
		im.summary.InstanceIDs = append(im.summary.InstanceIDs, id)
	}
	errText := ""
	if ferr != nil {
		errText = ferr.Error()
	}
	_, _ = im.db.write.ExecContext(context.WithoutCancel(im.ctx), `UPDATE import_run SET finished_at = ?, read = ?, added = ?, duplicates = ?, rejected = ?, error = ? WHERE id = ?`,
		im.db.now().UnixMilli(), im.summary.Read, im.summary.Added, im.summary.Duplicates, len(im.summary.Rejects), nullString(errText), im.runID)
	return im.summary, ferr
}
