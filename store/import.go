package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// ImportSummary is what an import reports (SPEC §3.2).
type ImportSummary struct {
	Source     string
	File       string
	Read       int64 // records handed in (restores, history rows, snapshots)
	Added      int64
	Duplicates int64
	Rejects    []Reject
	Instances  []string
	// InstanceIDs are the instances whose facts changed, for the analysis
	// that follows an import.
	InstanceIDs []int64
	// Untimed is how many log records of these instances are kept without
	// a restore because nothing dates them (DB.Untimed says which and how to
	// date them). Close fills it, after deriving; Commit cannot know it yet
	// (DB.UntimedIn, after DB.Reconcile).
	Untimed int64
}

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
	summary    ImportSummary
	instances  map[string]int64
	touched    map[int64]string
	runID      int64
	// occurrence counts identical client-output restores per file (logKey).
	occurrence map[string]int
	maxRej     int
}

// BatchSize is the number of records an Import commits at once.
const BatchSize = 5000

// NewImport starts an import of one file (or live pass) from source.
func (db *DB) NewImport(ctx context.Context, source, file string) (*Import, error) {
	res, err := db.write.ExecContext(ctx, `INSERT INTO import_run (source, file, started_at) VALUES (?, ?, ?)`,
		source, file, db.now().UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("store: start import: %w", err)
	}
	id, _ := res.LastInsertId()
	return &Import{db: db, ctx: ctx, batchSize: BatchSize, runID: id, maxRej: 100000,
		summary:   ImportSummary{Source: source, File: file},
		instances: map[string]int64{}, touched: map[int64]string{}}, nil
}

// History implements Sink.
func (im *Import) History(h HistoryRow) error { return im.add(&h) }

// LogRestore implements Sink.
func (im *Import) LogRestore(l LogRestore) error { return im.add(&l) }

// Host implements Sink.
func (im *Import) Host(h HostSnapshot) error { return im.add(&h) }

// Reject implements Sink.
func (im *Import) Reject(r Reject) {
	if len(im.summary.Rejects) < im.maxRej {
		im.summary.Rejects = append(im.summary.Rejects, r)
	}
}

// Handed returns how many records were handed in so far and the rejects
// kept so far (the summary's slice: read it, do not keep it across calls).
// Call it from the goroutine that feeds the import: a loader feeding many
// files into one import counts each file's share with it.
func (im *Import) Handed() (read int64, rejects []Reject) {
	return im.summary.Read, im.summary.Rejects
}

// record is what an import batches: each record validates itself and says
// where it came from.
type record interface {
	Validate() error
	origin() Origin
}

func (h *HistoryRow) origin() Origin   { return h.Origin }
func (l *LogRestore) origin() Origin   { return l.Origin }
func (h *HostSnapshot) origin() Origin { return h.Origin }

func (im *Import) add(rec record) error {
	im.summary.Read++
	normaliseNames(rec) // one server is one instance whichever reader named it
	if err := rec.Validate(); err != nil {
		o := rec.origin()
		im.Reject(Reject{File: o.File, Line: o.Line, Reason: err.Error()})
		return nil
	}
	if h, ok := rec.(*HistoryRow); ok {
		// Encoded here, on the parser's goroutine, not the committer's.
		h.facts = string(appendHistoryFacts(make([]byte, 0, 384), h))
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
	go func() { done <- im.commit(b) }()
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
	if err := im.commit(im.batch); err != nil {
		return err
	}
	clear(im.batch)
	im.batch = im.batch[:0]
	return nil
}

// commit writes one batch in one transaction. It runs on one goroutine at
// a time; what it updates (the counts, the instance and touched maps) the
// caller reads only after wait.
func (im *Import) commit(batch []record) error {
	if len(batch) == 0 {
		return nil
	}
	tx, err := im.db.write.BeginTx(im.ctx, nil)
	if err != nil {
		return fmt.Errorf("store: import batch: %w", err)
	}
	defer tx.Rollback()
	w := &batchWriter{tx: tx, im: im}
	count := func(added, read int) {
		im.summary.Added += int64(added)
		im.summary.Duplicates += int64(read - added)
	}
	for _, rec := range batch {
		var added bool
		switch r := rec.(type) {
		case *HistoryRow:
			n, k, err := w.history(r)
			if err != nil {
				return fmt.Errorf("store: import batch: %w", err)
			}
			count(n, k)
			continue
		case *LogRestore:
			added, err = w.logRestore(r)
		case *HostSnapshot:
			added, err = w.host(r)
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
	n, k, err := w.flushHistory()
	if err != nil {
		return fmt.Errorf("store: import batch: %w", err)
	}
	count(n, k)
	for id := range w.dirty {
		if _, err := tx.ExecContext(im.ctx, `UPDATE instance SET dirty = dirty + 1 WHERE id = ?`, id); err != nil {
			return fmt.Errorf("store: import batch: %w", err)
		}
	}
	if err := w.close(); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: import batch: commit: %w", err)
	}
	return nil
}

// Close commits and derives: Commit, then DB.Reconcile of every instance
// marked dirty (not only this import's). A failed import still reconciles
// what it committed.
func (im *Import) Close() (ImportSummary, error) {
	sum, err := im.Commit()
	if rerr := im.db.Reconcile(im.ctx); err == nil {
		err = rerr
	}
	if err == nil {
		sum.Untimed, err = im.db.UntimedIn(im.ctx, sum.InstanceIDs)
	}
	return sum, err
}

// Commit commits what is pending, records the run and returns the summary.
// It derives nothing: the instances it touched stay marked dirty until the
// next DB.Reconcile, which ingest.Loader runs once after a whole run's files.
func (im *Import) Commit() (ImportSummary, error) {
	ferr := im.Flush()
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

type batchWriter struct {
	tx    *sql.Tx
	im    *Import
	dirty map[int64]bool
	stmts map[string]*sql.Stmt

	histArgs []any // queued history rows, historyCols values each
	histInst []instRef
}

func (w *batchWriter) stmt(q string) (*sql.Stmt, error) {
	if s, ok := w.stmts[q]; ok {
		return s, nil
	}
	s, err := w.tx.PrepareContext(w.im.ctx, q)
	if err != nil {
		return nil, err
	}
	if w.stmts == nil {
		w.stmts = map[string]*sql.Stmt{}
	}
	w.stmts[q] = s
	return s, nil
}

func (w *batchWriter) close() error {
	for _, s := range w.stmts {
		s.Close()
	}
	return nil
}

// instanceID finds or creates the instance row. Instance names compare
// case-insensitively, as SQL Server's do.
func (w *batchWriter) instanceID(name string) (int64, error) {
	name = strings.TrimSpace(name)
	key := strings.ToLower(name)
	if id, ok := w.im.instances[key]; ok {
		return id, nil
	}
	var id int64
	err := w.tx.QueryRowContext(w.im.ctx, `SELECT id FROM instance WHERE name = ?`, name).Scan(&id)
	if err == sql.ErrNoRows {
		err = w.tx.QueryRowContext(w.im.ctx, `INSERT INTO instance (name, created_at) VALUES (?, ?) RETURNING id`,
			name, w.im.db.now().UnixMilli()).Scan(&id)
	}
	if err != nil {
		return 0, fmt.Errorf("instance %q: %w", name, err)
	}
	w.im.instances[key] = id
	return id, nil
}

func (w *batchWriter) touch(id int64, name string) {
	if w.dirty == nil {
		w.dirty = map[int64]bool{}
	}
	w.dirty[id] = true
	w.im.touched[id] = name
}

const insertHistoryHead = `INSERT INTO history_row (instance_id, restore_history_id, restore_local, facts, origin) VALUES `

const historyCols = 5

// historyPerInsert is how many history rows one INSERT carries: modernc's
// SQLite spends less per row in one statement of many rows than in many
// statements.
const historyPerInsert = 32

var historyInsertCache sync.Map // rows -> statement text

func insertHistorySQL(n int) string {
	if q, ok := historyInsertCache.Load(n); ok {
		return q.(string)
	}
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", historyCols), ",") + ")"
	q := insertHistoryHead + strings.TrimSuffix(strings.Repeat(one+",", n), ",") +
		" ON CONFLICT (instance_id, restore_history_id, restore_local) DO NOTHING"
	historyInsertCache.Store(n, q)
	return q
}

// history queues h for a multi-row insert and, when a statement is full,
// writes it; it returns how many rows the write added and how many it
// carried.
func (w *batchWriter) history(h *HistoryRow) (added, carried int, err error) {
	id, err := w.instanceID(h.Instance)
	if err != nil {
		return 0, 0, err
	}
	w.histArgs = append(w.histArgs, id, historyKey(h), ms(h.RestoreDate), h.facts, h.Origin.String())
	w.histInst = append(w.histInst, instRef{id, h.Instance})
	if len(w.histInst) < historyPerInsert {
		return 0, 0, nil
	}
	return w.flushHistory()
}

// flushHistory writes the queued history rows. Duplicates are skipped by the
// UNIQUE key; when only some rows of a statement were new, every instance of
// the statement is marked for reconciliation (reconciling an unchanged
// instance changes nothing).
func (w *batchWriter) flushHistory() (added, carried int, err error) {
	n := len(w.histInst)
	if n == 0 {
		return 0, 0, nil
	}
	var res sql.Result
	if n == historyPerInsert {
		var s *sql.Stmt
		if s, err = w.stmt(insertHistorySQL(n)); err == nil {
			res, err = s.ExecContext(w.im.ctx, w.histArgs...)
		}
	} else {
		res, err = w.tx.ExecContext(w.im.ctx, insertHistorySQL(n), w.histArgs...)
	}
	if err != nil {
		return 0, 0, err
	}
	k, _ := res.RowsAffected()
	if k > 0 {
		for _, r := range w.histInst {
			w.touch(r.id, r.name)
		}
	}
	w.histArgs, w.histInst = w.histArgs[:0], w.histInst[:0]
	return int(k), n, nil
}

type instRef struct {
	id   int64
	name string
}

// logKey identifies a log restore across re-imports and sources that print the
// same log (the ERRORLOG file, its archive after a cycle, xp_readerrorlog).
// Times are cut to centiseconds: the file has two fractional digits, the
// datetime that xp_readerrorlog returns has three.
//
// Client output shares one completion stamp (or --at) across the statements
// of a batch, so two identical statements of one file are told apart by
// occurrence, the nth of that content in its file: the same output saved
// twice (restore-output.txt and "restore-output (1).txt") is one restore, and
// re-importing a file adds nothing. A restore with no time at all is told
// apart by its position in its file.
func (im *Import) logKey(instanceID int64, l *LogRestore) string {
	h := sha256.New()
	src := l.Origin.Source
	if src.ErrorLog() {
		src = SourceErrorLog
	}
	fmt.Fprintf(h, "%d\x00%s\x00%s\x00%s\x00%d\x00%d\x00%s\x00%s\x00%t\x00%s\x00%d\x00%.3f",
		instanceID, src, l.Database, l.Kind, l.MessageID, l.CompletedAt.UnixMilli()/10,
		l.FirstLSN, l.LastLSN, l.Has3014, l.Statement, l.Pages, l.Seconds)
	switch {
	case l.CompletedAt.IsZero():
		fmt.Fprintf(h, "\x00%s\x00%d", l.Origin.File, l.Origin.Line)
	case l.Origin.Source == SourceMessages:
		base := string(h.Sum(nil))
		if im.occurrence == nil {
			im.occurrence = map[string]int{}
		}
		k := l.Origin.File + "\x00" + base
		n := im.occurrence[k]
		im.occurrence[k] = n + 1
		fmt.Fprintf(h, "\x00#%d", n)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

const insertLog = `INSERT INTO log_restore (instance_id, dedupe_key, source, database_name, kind, message_id,
 completed_local, utc_offset, first_lsn, last_lsn, device_count, device_type, devices, has_3014, statement, pages,
 seconds, mbps, upper_bound_s, buffer, phases, recovery, origin)
 VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (dedupe_key) DO NOTHING`

func (w *batchWriter) logRestore(l *LogRestore) (bool, error) {
	id, err := w.instanceID(l.Instance)
	if err != nil {
		return false, err
	}
	s, err := w.stmt(insertLog)
	if err != nil {
		return false, err
	}
	var completed any
	if !l.CompletedAt.IsZero() {
		completed = ms(l.CompletedAt)
	}
	var buffer, phases, recovery any
	if l.Buffer != nil {
		buffer = jsonText(l.Buffer)
	}
	if len(l.Phases) > 0 {
		phases = jsonText(l.Phases)
	}
	if l.Recovery != nil {
		recovery = jsonText(l.Recovery)
	}
	res, err := s.ExecContext(w.im.ctx, id, w.im.logKey(id, l), l.Origin.Source, l.Database, string(l.Kind), l.MessageID,
		completed, nullInt(l.UTCOffset), nullString(l.FirstLSN), nullString(l.LastLSN), nullZero(int64(l.DeviceCount)),
		nullString(l.DeviceType), jsonText(nonNil(l.Devices)), l.Has3014, nullString(l.Statement), nullZero(l.Pages),
		nullFloat(l.Seconds, l.Has3014), nullFloat(l.MBps, l.Has3014), nullFloat(l.UpperBoundS, l.UpperBoundS > 0),
		buffer, phases, recovery, l.Origin.String())
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	if n > 0 {
		w.touch(id, l.Instance)
	}
	return n > 0, nil
}

const insertHost = `INSERT INTO host_snapshot (instance_id, observed_local, utc_offset, source, content_hash, version,
 level, update_level, update_ref, edition, os, hypervisor, manufacturer, model, sockets, cores, memory_mb, ifi,
 trace_flags, modules, extra, origin)
 VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (instance_id, observed_local, source) DO NOTHING`

func (w *batchWriter) host(h *HostSnapshot) (bool, error) {
	id, err := w.instanceID(h.Instance)
	if err != nil {
		return false, err
	}
	hash := hostHash(h)
	if h.Origin.Source == SourceLive {
		// A live snapshot is kept only when something changed since the
		// previous one, so a year of passes does not store a year of copies.
		var last string
		err := w.tx.QueryRowContext(w.im.ctx, `SELECT content_hash FROM host_snapshot WHERE instance_id = ? AND source = 'live'
			AND observed_local <= ? ORDER BY observed_local DESC LIMIT 1`, id, ms(h.ObservedAt)).Scan(&last)
		if err == nil && last == hash {
			return false, nil
		}
	}
	s, err := w.stmt(insertHost)
	if err != nil {
		return false, err
	}
	res, err := s.ExecContext(w.im.ctx, id, ms(h.ObservedAt), nullInt(h.UTCOffset), h.Origin.Source, hash,
		nullString(h.Version), nullString(h.Level), nullString(h.UpdateLevel), nullString(h.UpdateRef), nullString(h.Edition),
		nullString(h.OS), nullBool(h.Hypervisor), nullString(h.Manufacturer), nullString(h.Model), h.Sockets, h.Cores,
		h.MemoryMB, nullBool(h.IFI), jsonText(nonNil(h.TraceFlags)), jsonText(nonNil(h.Modules)), jsonText(nonNilMap(h.Extra)),
		h.Origin.String())
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	if n > 0 {
		w.touch(id, h.Instance)
	}
	return n > 0, nil
}

func hostHash(h *HostSnapshot) string {
	c := *h
	c.ObservedAt = time.Time{}
	c.Origin = Origin{}
	b, _ := json.Marshal(c)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// SetDefaultOffset records the UTC offset (minutes) to assume for an instance
// whose sources state none, and marks it for reconciliation.
func (db *DB) SetDefaultOffset(ctx context.Context, instance string, minutes int) error {
	instance = InstanceName(instance)
	_, err := db.write.ExecContext(ctx, `INSERT INTO instance (name, default_utc_offset, dirty, created_at) VALUES (?, ?, 1, ?)
		ON CONFLICT (name) DO UPDATE SET default_utc_offset = excluded.default_utc_offset, dirty = instance.dirty + 1`,
		instance, minutes, db.now().UnixMilli())
	if err != nil {
		return fmt.Errorf("store: set offset of %s: %w", instance, err)
	}
	return nil
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullBool(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

func nullInt(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func nullZero(v int64) any {
	if v == 0 {
		return nil
	}
	return v
}

func nullFloat(v float64, ok bool) any {
	if !ok {
		return nil
	}
	return v
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
