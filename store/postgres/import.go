package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/row"
)

// Import is a store.Import on PostgreSQL: records validated as they come,
// written in batches of store.BatchSize, one transaction each (or all in one,
// WholeInOne), with multi-row INSERT … ON CONFLICT DO NOTHING on the same
// keys as store/sqlite's, so re-importing a file adds nothing. Each batch
// marks the instances it added facts to dirty, in its own transaction, for
// the next Reconcile.
type Import struct {
	db        *DB
	ctx       context.Context
	batch     []any
	batchSize int
	failed    error // a failed commit: nothing after it is committed
	summary   store.ImportSummary
	instances map[string]int64 // lower-case name -> id
	touched   map[int64]string
	seen      row.Occurrences
	runID     int64
	// push, when set, is marked applied by the last commit (final).
	push  *store.PushMark
	final bool
}

// errPushApplied rolls back the commit of a push another apply marked
// first.
var errPushApplied = errors.New("push batch applied already")

// maxRejects bounds the rejects an import keeps (as store/sqlite's).
const maxRejects = 100000

// NewImport starts an import of one file (or live pass) from source.
func (db *DB) NewImport(ctx context.Context, source, file string) (store.Import, error) {
	var id int64
	if err := db.pool.QueryRow(ctx, `INSERT INTO import_run (source, file, started_at) VALUES ($1, $2, $3) RETURNING id`,
		source, file, db.now().UnixMilli()).Scan(&id); err != nil {
		return nil, fmt.Errorf("store: start import: %w", err)
	}
	return &Import{db: db, ctx: ctx, batchSize: store.BatchSize, runID: id,
		summary:   store.ImportSummary{Source: source, File: file},
		instances: map[string]int64{}, touched: map[int64]string{}, seen: row.Occurrences{}}, nil
}

// WholeInOne makes the import commit everything at Commit, in one
// transaction: a push shows all of its restores or none.
func (im *Import) WholeInOne() { im.batchSize = math.MaxInt }

// MarkPush makes Commit mark the collector's batch p applied, with its
// runs, in the transaction of its last commit.
func (im *Import) MarkPush(p store.PushMark) { im.push = &p }

// History implements store.Sink.
func (im *Import) History(h store.HistoryRow) error { return im.add(&h, h.Origin) }

// LogRestore implements store.Sink.
func (im *Import) LogRestore(l store.LogRestore) error { return im.add(&l, l.Origin) }

// Host implements store.Sink.
func (im *Import) Host(h store.HostSnapshot) error { return im.add(&h, h.Origin) }

// BackupSet implements store.Sink; a set marks no instance for derivation.
func (im *Import) BackupSet(b store.BackupSet) error { return im.add(&b, b.Origin) }

// Reject implements store.Sink.
func (im *Import) Reject(r store.Reject) {
	if len(im.summary.Rejects) < maxRejects {
		im.summary.Rejects = append(im.summary.Rejects, r)
	}
}

// Handed returns how many records were handed in so far and the rejects
// kept so far.
func (im *Import) Handed() (read int64, rejects []store.Reject) {
	return im.summary.Read, im.summary.Rejects
}

// encodedHistory is a history row with its facts array.
type encodedHistory struct {
	*store.HistoryRow
	facts string
}

// add validates rec (which came from o) and batches it.
func (im *Import) add(rec interface{ Validate() error }, o store.Origin) error {
	im.summary.Read++
	row.Normalise(rec)
	if err := rec.Validate(); err != nil {
		im.Reject(store.Reject{File: o.File, Line: o.Line, Reason: err.Error()})
		return nil
	}
	var b any = rec
	if h, ok := rec.(*store.HistoryRow); ok {
		b = &encodedHistory{h, string(row.AppendHistoryFacts(make([]byte, 0, 384), h))}
	}
	im.batch = append(im.batch, b)
	if len(im.batch) >= im.batchSize {
		return im.Flush()
	}
	return nil
}

// nothing is a record that writes nothing: it makes Commit open the
// transaction that marks a push.
type nothing struct{}

// Flush commits the pending batch.
func (im *Import) Flush() error {
	if im.failed != nil {
		return im.failed
	}
	if err := im.commit(im.batch); err != nil {
		im.failed = err
		return err
	}
	clear(im.batch)
	im.batch = im.batch[:0]
	return nil
}

// commit writes one batch in one transaction.
func (im *Import) commit(batch []any) error {
	if len(batch) == 0 {
		return nil
	}
	var added, carried int64
	err := pgx.BeginFunc(im.ctx, im.db.pool, func(tx pgx.Tx) error {
		w := &batchWriter{ctx: im.ctx, tx: tx, im: im, members: row.Members{}}
		for _, rec := range batch {
			if err := w.write(rec); err != nil {
				return err
			}
		}
		if err := w.finish(); err != nil {
			return err
		}
		added, carried = w.added, w.carried
		if im.push != nil && im.final {
			p := im.push
			marked, err := im.db.recordPush(im.ctx, tx, p.Collector, p.Batch, im.summary.Read, im.summary.Added+added, p.Runs)
			if err != nil {
				return fmt.Errorf("record push %s/%s: %w", p.Collector, p.Batch, err)
			}
			if !marked {
				return errPushApplied
			}
		}
		return nil
	})
	if errors.Is(err, errPushApplied) {
		im.summary.Duplicates += carried
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: import batch: %w", err)
	}
	// Counted once the batch is committed: a failed batch added nothing.
	im.summary.Added += added
	im.summary.Duplicates += carried - added
	return nil
}

// Commit commits what is pending, records the run and returns the summary.
// It derives nothing: the instances it touched stay dirty until Reconcile.
func (im *Import) Commit() (store.ImportSummary, error) {
	im.final = true
	if im.push != nil && len(im.batch) == 0 && im.failed == nil {
		// A push of nothing but rejects is still marked.
		im.batch = append(im.batch, nothing{})
	}
	ferr := im.Flush()
	for id, name := range im.touched {
		im.summary.Instances = append(im.summary.Instances, name)
		im.summary.InstanceIDs = append(im.summary.InstanceIDs, id)
	}
	var errText *string
	if ferr != nil {
		s := ferr.Error()
		errText = &s
	}
	_, _ = im.db.pool.Exec(context.WithoutCancel(im.ctx), `UPDATE import_run SET finished_at = $1, read = $2, added = $3,
		duplicates = $4, rejected = $5, error = $6 WHERE id = $7`,
		im.db.now().UnixMilli(), im.summary.Read, im.summary.Added, im.summary.Duplicates, len(im.summary.Rejects), errText, im.runID)
	return im.summary, ferr
}

// CommitAndReconcile commits, then derives every instance marked dirty
// (store.CommitAndReconcile).
func (im *Import) CommitAndReconcile() (store.ImportSummary, error) {
	return store.CommitAndReconcile(im.ctx, im, im.db)
}
