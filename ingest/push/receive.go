package push

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/store"
)

// Result is the server's acknowledgement of a batch.
type Result struct {
	Batch string `json:"batch"`
	// Status is "applied", or "duplicate" for a batch applied before
	// (acknowledged again, not applied again).
	Status  string `json:"status"`
	Records int64  `json:"records"`
	Added   int64  `json:"added"`
}

// Acknowledgement statuses.
const (
	Applied   = "applied"
	Duplicate = "duplicate"
)

// Receiver applies pushed batches to the warehouse, one at a time, through
// an ingest.Loader: the central server stays the single writer, and a
// pass's records are stored, derived and analysed as a local collector's
// pass is. Deriving rebuilds all the restores of an instance (seconds for a
// large one, SCALE.md), so a pass split into several batches is derived
// once, after its last batch.
type Receiver struct {
	db  store.Warehouse
	opt ingest.LoaderOptions
	log *slog.Logger
	mu  sync.Mutex     // one batch at a time; guards l
	l   *ingest.Loader // the instances stored since the last derivation
	// slots bounds the pushes holding a decoded batch (decoding, waiting
	// for mu, applying): batches are applied one at a time, so without it
	// concurrent pushes would each hold theirs in memory while they wait.
	slots chan struct{}
}

// Decoding is how many pushes may hold a decoded batch at once: one being
// applied, one ready behind it. Others wait, holding only their
// connection, until a slot frees or their request ends.
const Decoding = 2

// slotWait bounds the wait for a slot: the body is read only once one is
// free, and the server's read timeout (30 s) must not cut it off while the
// push waits, which would look like a malformed batch. Past it the answer
// is 503, which the collector retries with back-off.
const slotWait = 10 * time.Second

// NewReceiver returns a receiver writing to db.
func NewReceiver(db store.Warehouse, opt ingest.LoaderOptions, log *slog.Logger) *Receiver {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Receiver{db: db, opt: opt, log: log, l: ingest.NewLoader(db, opt), slots: make(chan struct{}, Decoding)}
}

// Collector returns the name of the collector whose valid token token is.
func (r *Receiver) Collector(ctx context.Context, token string) (string, error) {
	return r.db.CollectorForToken(ctx, token)
}

// applyTimeout bounds applying one batch. The request's own context is not
// used for it: a collector that gives up waiting sends the batch again, and
// the work done meanwhile is better finished than thrown away.
const applyTimeout = 5 * time.Minute

// Push decodes a batch from collector and applies it, unless a batch of
// that id was applied before. A malformed batch is EINVALID and nothing of
// it is applied; so is a batch beyond a limit (wrapping ErrTooLarge). A
// batch that writes an instance the collector may not write (see
// sqlite.DB.AuthorizePush) is EFORBIDDEN and nothing of it is applied.
func (r *Receiver) Push(ctx context.Context, collector string, body io.Reader) (Result, error) {
	wait := time.NewTimer(slotWait)
	defer wait.Stop()
	select {
	case r.slots <- struct{}{}:
		defer func() { <-r.slots }()
	case <-wait.C:
		return Result{}, store.Errorf(store.EUNAVAILABLE, "push: the server is busy applying other batches; send it again later")
	case <-ctx.Done():
		return Result{}, store.Errorf(store.EUNAVAILABLE, "push: the server is busy applying other batches: %v", ctx.Err())
	}
	b, err := Decode(body)
	if err != nil {
		return Result{}, err
	}
	res := Result{Batch: b.Batch, Records: int64(b.Records)}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), applyTimeout)
	defer cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	done, err := r.db.PushApplied(wctx, collector, b.Batch)
	if err != nil {
		return Result{}, err
	}
	if done {
		res.Status = Duplicate
		return res, nil
	}
	if err := r.db.AuthorizePush(wctx, collector, b.Instances()); err != nil {
		return Result{}, err
	}
	runs := b.Runs()
	if b.Records > 0 && len(runs) == b.Records {
		// Run records only: nothing to import or derive.
		if err := r.db.RecordPush(wctx, collector, b.Batch, int64(b.Records), 0, runs...); err != nil {
			return Result{}, err
		}
		res.Status = Applied
		return res, nil
	}
	if b.Tags != nil && b.Name != "" {
		if err := r.db.SetInstanceTags(wctx, b.Name, b.Tags); err != nil {
			return Result{}, err
		}
	}
	// The records, the batch's mark and its runs in one transaction.
	sum, err := r.l.Push(wctx, b.Source, collector+"/"+b.Name, store.PushMark{Collector: collector, Batch: b.Batch, Runs: runs}, b.Feed)
	if err != nil {
		return Result{}, err
	}
	if !b.More {
		// A collector that stops mid-pass leaves its instance marked dirty:
		// the next derivation (its next pass, any import) takes it too.
		if _, err := r.l.Derive(wctx); err != nil {
			// The facts are in and the next derivation finishes the work,
			// as after an import whose analysis failed.
			r.log.Error("push: derivation or analysis failed", "collector", collector, "batch", b.Batch, "error", err.Error())
		}
	}
	res.Status, res.Added = Applied, sum.Added
	return res, nil
}
