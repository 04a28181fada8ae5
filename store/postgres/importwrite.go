package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/row"
)

// wholeInstance as a dirty mark's time: derive all of the instance.
const wholeInstance = math.MinInt64

// batchWriter writes one batch of an import inside its transaction.
type batchWriter struct {
	ctx context.Context
	tx  pgx.Tx
	im  *Import
	// dirty: instance -> the earliest local time of a fact added
	// (wholeInstance: not one time); touched: the names of those
	// instances, for the summary once the batch is committed.
	dirty   map[int64]int64
	touched map[int64]string
	members row.Members
	hist    rowQueue
	logs    rowQueue
	// added and carried count the records written and those that were
	// duplicates already stored.
	added, carried int64
}

// rowQueue is one table's rows waiting for a multi-row INSERT.
type rowQueue struct {
	args []any
	rows []queuedRow
}

type queuedRow struct {
	id   int64
	name string
	at   int64
}

// Rows per multi-row INSERT: well inside PostgreSQL's 65,535 parameters.
const (
	historyPerInsert = 500
	logPerInsert     = 200
)

func (w *batchWriter) write(rec any) error {
	var err error
	switch r := rec.(type) {
	case *encodedHistory:
		err = w.history(r)
	case *store.LogRestore:
		err = w.logRestore(r)
	case *store.HostSnapshot:
		err = w.host(r)
	case *store.BackupSet:
		err = w.backupSet(r)
	case nothing:
	}
	return err
}

// finish writes what is queued, the AG memberships and the dirty marks.
func (w *batchWriter) finish() error {
	if err := w.flush(&w.hist, insertHistoryHead, historyCols, historyTail); err != nil {
		return err
	}
	if err := w.flush(&w.logs, insertLogHead, logCols, logTail); err != nil {
		return err
	}
	if err := w.flushMembers(); err != nil {
		return err
	}
	// In id order: batches of concurrent imports lock the rows alike.
	for _, id := range slices.Sorted(maps.Keys(w.dirty)) {
		at := w.dirty[id]
		var from *int64 // NULL: the whole instance
		if at != wholeInstance {
			from = &at
		}
		if _, err := w.tx.Exec(w.ctx, `UPDATE instance SET dirty = dirty + 1,
			dirty_from = CASE WHEN dirty = 0 THEN $1::bigint WHEN dirty_from IS NULL OR $1::bigint IS NULL THEN NULL
				ELSE LEAST(dirty_from, $1::bigint) END
			WHERE id = $2`, from, id); err != nil {
			return err
		}
		w.im.touched[id] = w.touched[id]
	}
	return nil
}

// instanceID finds or creates the instance row; names compare without case
// (the column is citext). A new instance is created and committed at once,
// outside the batch's transaction: two imports' batches creating the same
// instances in different orders would otherwise wait for each other.
func (w *batchWriter) instanceID(name string) (int64, error) {
	name = strings.TrimSpace(name)
	key := strings.ToLower(name)
	if id, ok := w.im.instances[key]; ok {
		return id, nil
	}
	var id int64
	pool := w.im.db.pool
	err := pool.QueryRow(w.ctx, `SELECT id FROM instance WHERE name = $1`, name).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		err = pool.QueryRow(w.ctx, `INSERT INTO instance (name, created_at) VALUES ($1, $2)
			ON CONFLICT (name) DO NOTHING RETURNING id`, name, w.im.db.now().UnixMilli()).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) { // created by another import meanwhile
			err = pool.QueryRow(w.ctx, `SELECT id FROM instance WHERE name = $1`, name).Scan(&id)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("instance %q: %w", name, err)
	}
	w.im.instances[key] = id
	return id, nil
}

// touch marks the instance for derivation from local time at on.
func (w *batchWriter) touch(id int64, name string, at int64) {
	if w.dirty == nil {
		w.dirty, w.touched = map[int64]int64{}, map[int64]string{}
	}
	if cur, ok := w.dirty[id]; !ok || at < cur {
		w.dirty[id] = at
	}
	w.touched[id] = name
}

// flush writes q's rows in INSERTs of at most per rows. Duplicates are
// skipped by the table's unique key; when some rows of a statement were
// new, every row's instance is marked for derivation from that row's time.
func (w *batchWriter) flush(q *rowQueue, head string, cols int, tail string) error {
	if len(q.rows) == 0 {
		return nil
	}
	tag, err := w.tx.Exec(w.ctx, multiRowSQL(head, cols, len(q.rows), tail), q.args...)
	if err != nil {
		return err
	}
	if n := tag.RowsAffected(); n > 0 {
		w.added += n
		for _, r := range q.rows {
			w.touch(r.id, r.name, r.at)
		}
	}
	w.carried += int64(len(q.rows))
	clear(q.args)
	q.args, q.rows = q.args[:0], q.rows[:0]
	return nil
}

var multiRowCache sync.Map // head, cols, n, tail -> statement

// multiRowSQL returns head, n rows of cols numbered placeholders and tail.
func multiRowSQL(head string, cols, n int, tail string) string {
	key := head + "\x00" + strconv.Itoa(n) + "\x00" + tail
	if q, ok := multiRowCache.Load(key); ok {
		return q.(string)
	}
	var b strings.Builder
	b.WriteString(head)
	for r := range n {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for c := range cols {
			if c > 0 {
				b.WriteByte(',')
			}
			b.WriteString("$" + strconv.Itoa(r*cols+c+1))
		}
		b.WriteByte(')')
	}
	b.WriteString(tail)
	multiRowCache.Store(key, b.String())
	return b.String()
}

const (
	insertHistoryHead = `INSERT INTO history_row (instance_id, restore_history_id, restore_local, facts, origin, part_month) VALUES `
	historyCols       = 6
	historyTail       = ` ON CONFLICT (instance_id, restore_history_id, restore_local, part_month) DO NOTHING`

	insertLogHead = `INSERT INTO log_restore (instance_id, dedupe_key, source, database_name, kind, message_id,
 completed_local, utc_offset, first_lsn, last_lsn, device_count, device_type, devices, has_3014, statement, pages,
 seconds, mbps, upper_bound_s, buffer, phases, recovery, origin, part_month) VALUES `
	logCols = 24
	logTail = ` ON CONFLICT (instance_id, dedupe_key, part_month) DO NOTHING`
)

func (w *batchWriter) history(h *encodedHistory) error {
	id, err := w.instanceID(h.Instance)
	if err != nil {
		return err
	}
	at := h.RestoreDate.UnixMilli()
	w.hist.args = append(w.hist.args, id, row.HistoryKey(h.HistoryRow), at, h.facts, h.Origin.String(), monthOf(at))
	w.hist.rows = append(w.hist.rows, queuedRow{id, h.Instance, at})
	if len(w.hist.rows) < historyPerInsert {
		return nil
	}
	return w.flush(&w.hist, insertHistoryHead, historyCols, historyTail)
}

func (w *batchWriter) logRestore(l *store.LogRestore) error {
	id, err := w.instanceID(l.Instance)
	if err != nil {
		return err
	}
	var completed *int64
	if !l.CompletedAt.IsZero() {
		c := l.CompletedAt.UnixMilli()
		completed = &c
	}
	var buffer, phases, recovery *string
	if l.Buffer != nil {
		buffer = nullText(jsonText(l.Buffer))
	}
	if len(l.Phases) > 0 {
		phases = nullText(jsonText(l.Phases))
	}
	if l.Recovery != nil {
		recovery = nullText(jsonText(l.Recovery))
	}
	w.logs.args = append(w.logs.args, id, row.LogKey(w.im.seen, id, l), string(l.Origin.Source), l.Database, string(l.Kind),
		int64(l.MessageID), completed, intPtr(l.UTCOffset), nullText(l.FirstLSN), nullText(l.LastLSN), nonZero(int64(l.DeviceCount)),
		nullText(l.DeviceType), row.StringsJSON(l.Devices), flag(l.Has3014), nullText(l.Statement), nonZero(l.Pages),
		floatIf(l.Seconds, l.Has3014), floatIf(l.MBps, l.Has3014), floatIf(l.UpperBoundS, l.UpperBoundS > 0),
		buffer, phases, recovery, l.Origin.String(), monthOfNull(completed))
	// Client output and Restore-DbaDatabase rows pair with restores by
	// content, not by time; an undated record by nothing yet.
	at := int64(wholeInstance)
	if completed != nil && l.Origin.Source.ErrorLog() {
		at = *completed
	}
	w.logs.rows = append(w.logs.rows, queuedRow{id, l.Instance, at})
	if len(w.logs.rows) < logPerInsert {
		return nil
	}
	return w.flush(&w.logs, insertLogHead, logCols, logTail)
}

func (w *batchWriter) host(h *store.HostSnapshot) error {
	id, err := w.instanceID(h.Instance)
	if err != nil {
		return err
	}
	w.carried++
	hash := row.HostHash(h)
	observed := h.ObservedAt.UnixMilli()
	if h.Origin.Source == store.SourceLive {
		// A live snapshot is kept only when something changed since the
		// previous one.
		var last string
		err := w.tx.QueryRow(w.ctx, `SELECT content_hash FROM host_snapshot WHERE instance_id = $1 AND source = 'live'
			AND observed_local <= $2 ORDER BY observed_local DESC LIMIT 1`, id, observed).Scan(&last)
		if err == nil && last == hash {
			return nil
		}
	}
	tag, err := w.tx.Exec(w.ctx, `INSERT INTO host_snapshot (instance_id, observed_local, utc_offset, source, content_hash,
		version, level, update_level, update_ref, edition, os, hypervisor, manufacturer, model, sockets, cores, memory_mb, ifi,
		trace_flags, modules, extra, origin)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22)
		ON CONFLICT (instance_id, observed_local, source) DO NOTHING`,
		id, observed, intPtr(h.UTCOffset), string(h.Origin.Source), hash, nullText(h.Version), nullText(h.Level),
		nullText(h.UpdateLevel), nullText(h.UpdateRef), nullText(h.Edition), nullText(h.OS), flagPtr(h.Hypervisor),
		nullText(h.Manufacturer), nullText(h.Model), h.Sockets, h.Cores, h.MemoryMB, flagPtr(h.IFI),
		jsonText(nonNil(h.TraceFlags)), jsonText(nonNil(h.Modules)), jsonText(nonNilMap(h.Extra)), h.Origin.String())
	if err != nil || tag.RowsAffected() == 0 {
		return err
	}
	w.added++
	if h.AGsRead {
		if err := w.currentMembers(id, h); err != nil {
			return err
		}
	}
	// A snapshot changes the host facts of the restores after it, and
	// those before it too when it is the first to state an offset.
	at := int64(wholeInstance)
	var earlier bool
	if err := w.tx.QueryRow(w.ctx, `SELECT EXISTS (SELECT 1 FROM host_snapshot WHERE instance_id = $1 AND observed_local < $2
		AND (utc_offset IS NOT NULL OR $3::bigint IS NULL))`, id, observed, intPtr(h.UTCOffset)).Scan(&earlier); err != nil {
		return err
	}
	if earlier {
		at = observed
	}
	w.touch(id, h.Instance, at)
	return nil
}

// Values in the warehouse's column forms: flags are BIGINT 0/1, absent
// values NULL.

func flag(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func flagPtr(b *bool) *int64 {
	if b == nil {
		return nil
	}
	v := flag(*b)
	return &v
}

func intPtr(p *int) *int64 {
	if p == nil {
		return nil
	}
	v := int64(*p)
	return &v
}

func nullText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nonZero(v int64) *int64 {
	if v == 0 {
		return nil
	}
	return &v
}

func floatIf(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	return &v
}
