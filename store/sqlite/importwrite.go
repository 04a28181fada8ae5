package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/row"
)

// batchWriter writes one batch of an import inside its transaction: the
// statements, the duplicate checks (the UNIQUE keys, logKey) and the
// instances each record touches.
type batchWriter struct {
	tx *sql.Tx
	im *Import
	// ctx is the statements' context: the import's, not cancellable
	// (statementContext). The transaction is begun with the import's own
	// context, so cancelling it still ends the batch at its next statement.
	ctx   context.Context
	dirty map[int64]int64 // instance -> the earliest local time of a fact added (wholeInstance: not one time)
	// members are the availability-group memberships the batch's backup
	// sets named (flushMembers).
	members row.Members
	stmts   map[string]*sql.Stmt

	hist rowQueue // history rows, historyCols values each
	logs rowQueue // log restores, logCols values each
}

// rowQueue is one table's rows queued for a multi-row INSERT: their values,
// and each row's instance and the local time from which it marks the
// instance for derivation.
type rowQueue struct {
	args []any
	rows []queuedRow
}

type queuedRow struct {
	id   int64
	name string
	at   int64
}

// flush writes the queued rows with the INSERT sqlFor(n) returns, full at
// per rows. Duplicates are skipped by the table's UNIQUE key; when some rows
// of a statement were new, every row's instance is marked for derivation
// from that row's time (an unchanged instance derived again changes
// nothing). It returns how many rows the write added and how many it
// carried.
func (w *batchWriter) flush(q *rowQueue, sqlFor func(int) string, per int) (added, carried int, err error) {
	n := len(q.rows)
	if n == 0 {
		return 0, 0, nil
	}
	k, err := w.insertRows(sqlFor(n), n == per, q.args)
	if err != nil {
		return 0, 0, err
	}
	if k > 0 {
		for _, r := range q.rows {
			w.touch(r.id, r.name, r.at)
		}
	}
	clear(q.args)
	q.args, q.rows = q.args[:0], q.rows[:0]
	return int(k), n, nil
}

func (w *batchWriter) stmt(q string) (*sql.Stmt, error) {
	if s, ok := w.stmts[q]; ok {
		return s, nil
	}
	s, err := w.tx.PrepareContext(w.ctx, q)
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
	err := w.tx.QueryRowContext(w.ctx, `SELECT id FROM instance WHERE name = ?`, name).Scan(&id)
	if err == sql.ErrNoRows {
		err = w.tx.QueryRowContext(w.ctx, `INSERT INTO instance (name, created_at) VALUES (?, ?) RETURNING id`,
			name, w.im.db.now().UnixMilli()).Scan(&id)
	}
	if err != nil {
		return 0, fmt.Errorf("instance %q: %w", name, err)
	}
	w.im.instances[key] = id
	return id, nil
}

// touch marks the instance for reconciliation from local time at on
// (wholeInstance: all of it).
func (w *batchWriter) touch(id int64, name string, at int64) {
	if w.dirty == nil {
		w.dirty = map[int64]int64{}
	}
	if cur, ok := w.dirty[id]; !ok || at < cur {
		w.dirty[id] = at
	}
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
	return multiRowSQL(&historyInsertCache, insertHistoryHead, historyCols, n,
		" ON CONFLICT (instance_id, restore_history_id, restore_local) DO NOTHING")
}

// multiRowSQL returns head, n rows of cols placeholders and tail: the text
// of a multi-row INSERT, built once per n in cache.
func multiRowSQL(cache *sync.Map, head string, cols, n int, tail string) string {
	if q, ok := cache.Load(n); ok {
		return q.(string)
	}
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", cols), ",") + ")"
	q := head + strings.TrimSuffix(strings.Repeat(one+",", n), ",") + tail
	cache.Store(n, q)
	return q
}

// insertRows runs a multi-row INSERT and returns the rows it added: a full
// statement (the size most are) prepared once per batch, a last partial one
// from its text.
func (w *batchWriter) insertRows(q string, full bool, args []any) (int64, error) {
	var res sql.Result
	var err error
	if full {
		var s *sql.Stmt
		if s, err = w.stmt(q); err == nil {
			res, err = s.ExecContext(w.ctx, args...)
		}
	} else {
		res, err = w.tx.ExecContext(w.ctx, q, args...)
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// history queues h for a multi-row insert and, when a statement is full,
// writes it; it returns how many rows the write added and how many it
// carried.
func (w *batchWriter) history(h *encodedHistory) (added, carried int, err error) {
	id, err := w.instanceID(h.Instance)
	if err != nil {
		return 0, 0, err
	}
	w.hist.args = append(w.hist.args, id, row.HistoryKey(h.HistoryRow), ms(h.RestoreDate), h.facts, h.Origin.String())
	w.hist.rows = append(w.hist.rows, queuedRow{id, h.Instance, ms(h.RestoreDate)})
	if len(w.hist.rows) < historyPerInsert {
		return 0, 0, nil
	}
	return w.flushHistory()
}

// flushHistory writes the queued history rows.
func (w *batchWriter) flushHistory() (added, carried int, err error) {
	return w.flush(&w.hist, insertHistorySQL, historyPerInsert)
}

const insertLogHead = `INSERT INTO log_restore (instance_id, dedupe_key, source, database_name, kind, message_id,
 completed_local, utc_offset, first_lsn, last_lsn, device_count, device_type, devices, has_3014, statement, pages,
 seconds, mbps, upper_bound_s, buffer, phases, recovery, origin) VALUES `

const logCols = 23

// logPerInsert is how many log restores one INSERT carries, as
// historyPerInsert: an error log's lines one statement each spent a third
// of their insert in the statement's own round (BENCHMARKS.md, "Session 9").
const logPerInsert = 16

var logInsertCache sync.Map // rows -> statement text

func insertLogSQL(n int) string {
	return multiRowSQL(&logInsertCache, insertLogHead, logCols, n, " ON CONFLICT (instance_id, dedupe_key) DO NOTHING")
}

// logRestore queues l for a multi-row insert and, when a statement is full,
// writes it; it returns how many rows the write added and how many it
// carried.
func (w *batchWriter) logRestore(l *store.LogRestore) (added, carried int, err error) {
	id, err := w.instanceID(l.Instance)
	if err != nil {
		return 0, 0, err
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
	w.logs.args = append(w.logs.args, id, row.LogKey(w.im.occurrence, id, l), l.Origin.Source, l.Database, string(l.Kind), l.MessageID,
		completed, nullInt(l.UTCOffset), nullString(l.FirstLSN), nullString(l.LastLSN), nullZero(int64(l.DeviceCount)),
		nullString(l.DeviceType), jsonText(nonNil(l.Devices)), l.Has3014, nullString(l.Statement), nullZero(l.Pages),
		nullFloat(l.Seconds, l.Has3014), nullFloat(l.MBps, l.Has3014), nullFloat(l.UpperBoundS, l.UpperBoundS > 0),
		buffer, phases, recovery, l.Origin.String())
	// Client output and Restore-DbaDatabase rows pair with restores by
	// content, not by time; an undated record by nothing yet.
	at := int64(wholeInstance)
	if c, ok := completed.(int64); ok && l.Origin.Source.ErrorLog() {
		at = c
	}
	w.logs.rows = append(w.logs.rows, queuedRow{id, l.Instance, at})
	if len(w.logs.rows) < logPerInsert {
		return 0, 0, nil
	}
	return w.flushLogs()
}

// flushLogs writes the queued log restores.
func (w *batchWriter) flushLogs() (added, carried int, err error) {
	return w.flush(&w.logs, insertLogSQL, logPerInsert)
}

const insertHost = `INSERT INTO host_snapshot (instance_id, observed_local, utc_offset, source, content_hash, version,
 level, update_level, update_ref, edition, os, hypervisor, manufacturer, model, sockets, cores, memory_mb, ifi,
 trace_flags, modules, extra, origin)
 VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (instance_id, observed_local, source) DO NOTHING`

func (w *batchWriter) host(h *store.HostSnapshot) (bool, error) {
	id, err := w.instanceID(h.Instance)
	if err != nil {
		return false, err
	}
	hash := row.HostHash(h)
	if h.Origin.Source == store.SourceLive {
		// A live snapshot is kept only when something changed since the
		// previous one, so a year of passes does not store a year of copies.
		var last string
		err := w.tx.QueryRowContext(w.ctx, `SELECT content_hash FROM host_snapshot WHERE instance_id = ? AND source = 'live'
			AND observed_local <= ? ORDER BY observed_local DESC LIMIT 1`, id, ms(h.ObservedAt)).Scan(&last)
		if err == nil && last == hash {
			return false, nil
		}
	}
	s, err := w.stmt(insertHost)
	if err != nil {
		return false, err
	}
	res, err := s.ExecContext(w.ctx, id, ms(h.ObservedAt), nullInt(h.UTCOffset), h.Origin.Source, hash,
		nullString(h.Version), nullString(h.Level), nullString(h.UpdateLevel), nullString(h.UpdateRef), nullString(h.Edition),
		nullString(h.OS), nullBool(h.Hypervisor), nullString(h.Manufacturer), nullString(h.Model), h.Sockets, h.Cores,
		h.MemoryMB, nullBool(h.IFI), jsonText(nonNil(h.TraceFlags)), jsonText(nonNil(h.Modules)), jsonText(nonNilMap(h.Extra)),
		h.Origin.String())
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	if n > 0 && h.AGsRead {
		if err := w.currentMembers(id, h); err != nil {
			return false, err
		}
	}
	if n > 0 {
		// A snapshot changes the host facts of the restores after it, and
		// those before it too when it is the first to state an offset
		// (derive's timeline falls back on the earliest stated offset).
		at := int64(wholeInstance)
		var earlier int
		err := w.tx.QueryRowContext(w.ctx, `SELECT EXISTS (SELECT 1 FROM host_snapshot WHERE instance_id = ? AND observed_local < ?
			AND (utc_offset IS NOT NULL OR ? IS NULL))`, id, ms(h.ObservedAt), nullInt(h.UTCOffset)).Scan(&earlier)
		if err != nil {
			return false, err
		}
		if earlier == 1 {
			at = ms(h.ObservedAt)
		}
		w.touch(id, h.Instance, at)
	}
	return n > 0, nil
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
