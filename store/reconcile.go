package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"
	"time"
)

// Reconciliation commits several instances per transaction: one commit per
// instance rewrote the same index pages to the WAL once per instance, which
// was most of a large import's time. A transaction ends after reconcileTxTime
// or reconcileTxRows derived restores, whichever comes first, so another
// writer (the collector, a second import) never waits longer than that
// behind it, well inside the busy timeout.
const (
	reconcileTxTime = time.Second
	reconcileTxRows = 200000
)

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
	for more := len(ids) > 0; more; {
		var err error
		if more, err = db.reconcileBatch(ctx, ahead, &done, len(ids)); err != nil {
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
// its raw facts. version is the instance's dirty counter in that snapshot.
type derivedInstance struct {
	id, version int64
	out         derived
	err         error
}

// deriveAhead reads and derives the instances on the read pool, one
// snapshot each, while the writer writes the previous ones: reading and
// deriving costs more than writing, so it runs on as many goroutines as
// there are cores (the writer's own work included, both stay busy). The
// instances come out in the order of ids, so new restores get their ids in
// the same order whatever the timing, at most window instances ahead of the
// writer. Every import increments an instance's dirty counter in the
// transaction that adds its facts, so the writer clears the counter only
// when it still holds the version derived here; facts committed in between
// leave the instance dirty for the next Reconcile (the one that import's
// Close runs).
func (db *DB) deriveAhead(ctx context.Context, ids []int64) <-chan derivedInstance {
	workers := max(min(runtime.GOMAXPROCS(0), len(ids), 4), 1)
	window := 2 * workers
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
	ahead := make(chan struct{}, window) // a token per instance derived but not yet handed on
	go func() {
		defer close(next)
		for i, id := range ids {
			select {
			case ahead <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case next <- job{i, id}:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range workers {
		go func() {
			for j := range next {
				d := derivedInstance{id: j.id}
				d.version, d.out, d.err = db.deriveInstance(ctx, j.id)
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
			<-ahead
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

func (db *DB) deriveInstance(ctx context.Context, id int64) (int64, derived, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, derived{}, err
	}
	defer tx.Rollback()
	var version int64
	if err := tx.QueryRowContext(ctx, `SELECT dirty FROM instance WHERE id = ?`, id).Scan(&version); err == sql.ErrNoRows {
		return 0, derived{}, nil // deleted since
	} else if err != nil || version == 0 {
		return 0, derived{}, err // or reconciled since
	}
	in, err := loadFacts(ctx, tx, id)
	if err != nil {
		return 0, derived{}, err
	}
	out := derive(in)
	// The rows are made here, on the deriving goroutine: the writer's
	// goroutine is the busier one.
	for i := range out.restores {
		d := &out.restores[i]
		d.row = native(d.values(id))
	}
	return version, out, nil
}

// derivationVersion names what derive and build produce. Bump it whenever a
// change there alters the restore rows derived from the same facts: the next
// Reconcile then re-derives every instance once, so an upgraded restorewatch
// never shows restores derived by the rules of an older one.
const derivationVersion = "5"

// checkDerivation marks every instance dirty when the warehouse's restores
// were derived by another derivation version (or none recorded it).
func (db *DB) checkDerivation(ctx context.Context) error {
	var v string
	err := db.write.QueryRowContext(ctx, `SELECT value FROM setting WHERE key = 'derivation_version'`).Scan(&v)
	if err == nil && v == derivationVersion {
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
	if _, err := tx.ExecContext(ctx, `UPDATE instance SET dirty = dirty + 1`); err != nil {
		return fmt.Errorf("store: reconcile: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO setting (key, value) VALUES ('derivation_version', ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, derivationVersion); err != nil {
		return fmt.Errorf("store: reconcile: %w", err)
	}
	return tx.Commit()
}

// ReconcileAll rebuilds every instance's restores from scratch.
func (db *DB) ReconcileAll(ctx context.Context) error {
	if _, err := db.write.ExecContext(ctx, `UPDATE instance SET dirty = dirty + 1`); err != nil {
		return fmt.Errorf("store: reconcile all: %w", err)
	}
	return db.Reconcile(ctx)
}

// reconcileIdle is how long a reconcile transaction waits for the next
// derived instance before it commits what it has: the write lock is held
// for writing, not for deriving on the other core.
const reconcileIdle = 50 * time.Millisecond

// reconcileBatch writes derived instances from ahead in one transaction,
// until the transaction's time or row budget is spent or the next instance
// is slow to come, and says whether more wait. The transaction begins only
// once the first instance is derived.
func (db *DB) reconcileBatch(ctx context.Context, ahead <-chan derivedInstance, done *int, total int) (more bool, err error) {
	d, ok := <-ahead
	if !ok {
		return false, nil
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store: reconcile: %w", err)
	}
	defer tx.Rollback()
	w := &restoreWriter{tx: tx, ctx: ctx}
	defer w.close()
	idle := time.NewTimer(reconcileIdle)
	defer idle.Stop()
	start, rows := time.Now(), 0
	for ok {
		if d.err != nil {
			return false, fmt.Errorf("store: reconcile instance %d: %w", d.id, d.err)
		}
		k, err := writeInstance(ctx, tx, w, d)
		if err != nil {
			return false, fmt.Errorf("store: reconcile instance %d: %w", d.id, err)
		}
		rows += k
		*done++
		db.Report(Progress{Phase: PhaseDerive, Done: *done, Total: total})
		if time.Since(start) >= reconcileTxTime || rows >= reconcileTxRows {
			break
		}
		idle.Reset(reconcileIdle)
		select {
		case d, ok = <-ahead:
		case <-idle.C:
			ok = false // commit now; the next batch waits outside a transaction
		}
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("store: reconcile: commit: %w", err)
	}
	return true, nil
}

// writeInstance writes one instance's derivation inside tx and returns how
// many restores it wrote.
func writeInstance(ctx context.Context, tx *sql.Tx, w *restoreWriter, d derivedInstance) (int, error) {
	// Claim the instance: another process's Reconcile may have reconciled
	// it since it was derived (the writer lock serialises us).
	var dirty int64
	if d.version == 0 {
		return 0, nil // deleted or reconciled before it was read
	}
	if err := tx.QueryRowContext(ctx, `SELECT dirty FROM instance WHERE id = ?`, d.id).Scan(&dirty); err == sql.ErrNoRows || err == nil && dirty == 0 {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	if err := w.write(d.id, d.out); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM untimed_record WHERE instance_id = ?`, d.id); err != nil {
		return 0, err
	}
	for src, n := range d.out.untimed {
		if _, err := tx.ExecContext(ctx, `INSERT INTO untimed_record (instance_id, source, records) VALUES (?, ?, ?)`,
			d.id, src, n); err != nil {
			return 0, err
		}
	}
	// Cleared only if no import added facts since the snapshot. The
	// findings are now stale: the analysis is marked pending in the same
	// transaction, so a crash before it runs leaves the mark.
	if _, err := tx.ExecContext(ctx, `UPDATE instance SET restore_date_semantics = ?, semantics_samples = ?,
		dirty = CASE WHEN dirty = ? THEN 0 ELSE dirty END, analysis_pending = analysis_pending + 1 WHERE id = ?`,
		d.out.semantics, d.out.semanticsN, d.version, d.id); err != nil {
		return 0, err
	}
	return len(d.out.restores), nil
}

// derived is the outcome of reconciliation for one instance.
type derived struct {
	restores   []derivedRestore
	semantics  string
	semanticsN int
	// untimed counts, by source, the log records that became no restore
	// because nothing places them in time: client output without a
	// completion stamp or --at, a Restore-DbaDatabase row that pairs with
	// no history row. They stay stored and are dated by a later import.
	untimed map[Source]int
}

type derivedRestore struct {
	key  int64
	h    *histFact
	l    *logFact // the error-log (or only) log record
	m    *logFact // client output merged into l
	x    *logFact // the Restore-DbaDatabase row paired with h
	r    Restore
	utcS int64 // at, ms UTC
	// The instants of the restore row's columns of the same names: an
	// int64, or nil for NULL.
	startedUTC, finishedUTC, startedLocal, finishedLocal, restoreDateLocal any
	// row is the restore row, native values in restoreCols order.
	row []any
}

func derive(f *facts) derived {
	var out derived
	// 0. History rows that describe one restore twice (an export without
	// restore_history_id beside one with it, or two renderings of it).
	gone := mergeHistory(f.history)
	// 1. Client output (messages, Agent) that repeats an error-log restore:
	// same database, pages and engine seconds. Restore-DbaDatabase rows
	// are placed by their history row alone (step 2b).
	var logs, clients, dbatools []*logFact
	for i := range f.logs {
		l := &f.logs[i]
		switch {
		case l.source.ErrorLog():
			logs = append(logs, l)
		case l.source == SourceDbatools:
			dbatools = append(dbatools, l)
		default:
			clients = append(clients, l)
		}
	}
	merged := map[*logFact]*logFact{}
	used := map[*logFact]bool{}
	for _, c := range clients {
		if !c.has3014 {
			continue
		}
		for _, l := range logs {
			if used[l] || !l.has3014 || !strings.EqualFold(l.db, c.db) || l.pages != c.pages ||
				math.Abs(l.seconds.Float64-c.seconds.Float64) > 0.0015 {
				continue
			}
			merged[l] = c
			used[l] = true
			used[c] = true
			break
		}
	}
	var unmatchedLogs []*logFact
	for i := range f.logs {
		l := &f.logs[i]
		if l.source != SourceDbatools && (!used[l] || merged[l] != nil) {
			unmatchedLogs = append(unmatchedLogs, l)
		}
	}
	// 2. History rows ↔ log restores; 2b. ↔ Restore-DbaDatabase rows.
	pairs := matchHistory(f.history, gone, unmatchedLogs)
	timed, unpaired := pairDbatools(f.history, gone, dbatools)
	if len(unpaired) > 0 {
		out.untimed = map[Source]int{SourceDbatools: len(unpaired)}
	}
	// 3. restore_date semantics, measured on pairs with engine seconds.
	var startVotes, endVotes int
	for hi, l := range pairs {
		h := &f.history[hi]
		if l == nil || !l.has3014 || !l.completed.Valid || l.seconds.Float64 < 10 {
			continue
		}
		end := l.completed.Int64
		start := end - int64(l.seconds.Float64*1000)
		if abs64(h.restore-start) < abs64(h.restore-end) {
			startVotes++
		} else {
			endVotes++
		}
	}
	out.semantics, out.semanticsN = "unknown", startVotes+endVotes
	if n := startVotes + endVotes; n >= 3 {
		if float64(startVotes) >= 0.8*float64(n) {
			out.semantics = "start"
		} else if float64(endVotes) >= 0.8*float64(n) {
			out.semantics = "end"
		}
	}
	tl := newTimeline(f)
	// A derivedRestore is 632 bytes: growing the slice by appending copied
	// each about twice (with the GC's write barriers), 1.5 s of CPU per
	// million restores.
	out.restores = make([]derivedRestore, 0, len(f.history)+len(unmatchedLogs))
	paired := map[*logFact]bool{}
	for hi := range f.history {
		h := &f.history[hi]
		if h.rtype == "V" || gone != nil && gone[hi] {
			continue
		}
		l := pairs[hi]
		if l != nil {
			paired[l] = true
		}
		d := build(h, l, merged[l], timed[hi], out.semantics, tl)
		if d != nil {
			out.restores = append(out.restores, *d)
		}
	}
	for _, l := range unmatchedLogs {
		if paired[l] {
			continue
		}
		d := build(nil, l, merged[l], nil, out.semantics, tl)
		if d != nil {
			out.restores = append(out.restores, *d)
			continue
		}
		if out.untimed == nil {
			out.untimed = map[Source]int{}
		}
		out.untimed[l.source]++
	}
	return out
}

// mergeHistory finds the history rows that repeat another row's restore and
// returns them marked (nil when there are none); the row kept takes the
// facts only the repeat states. A row without restore_history_id (id <= 0,
// see historyKey) repeats a row of the same destination database, restore
// type and backup set (historyIdentity) whose restore_date falls in the same
// second: culture renderings of dbatools' export keep whole seconds, the
// published export and the invariant recipe keep milliseconds. Two rows
// that both carry msdb's restore_history_id are two restores and never
// merge. The row kept is one with a restore_history_id, else one with
// milliseconds, else the first.
func mergeHistory(hist []histFact) []bool {
	type key struct {
		db, rtype, backup string
		sec               int64
	}
	keyOf := func(h *histFact) key {
		return key{strings.ToLower(h.db), h.rtype, backupIdentity(h.firstLSN, h.lastLSN, h.uuid, h.devices), floorDiv(h.restore, 1000)}
	}
	seconds := map[int64]bool{}
	for i := range hist {
		if hist[i].hid <= 0 {
			seconds[floorDiv(hist[i].restore, 1000)] = true
		}
	}
	if len(seconds) == 0 {
		return nil // every row has msdb's id: the common case costs one pass
	}
	var gone []bool
	kept := map[key]int{}
	for i := range hist {
		h := &hist[i]
		if !seconds[floorDiv(h.restore, 1000)] {
			continue
		}
		k := keyOf(h)
		j, ok := kept[k]
		if !ok {
			kept[k] = i
			continue
		}
		p := &hist[j]
		if p.hid > 0 && h.hid > 0 {
			continue
		}
		if gone == nil {
			gone = make([]bool, len(hist))
		}
		if h.hid > 0 || p.hid <= 0 && h.restore%1000 != 0 && p.restore%1000 == 0 {
			h.fill(&p.historyFacts)
			gone[j], kept[k] = true, i
		} else {
			p.fill(&h.historyFacts)
			gone[i] = true
		}
	}
	return gone
}

// fill sets the facts h leaves out from o, which describes the same restore.
func (h *historyFacts) fill(o *historyFacts) {
	for _, s := range [...]struct {
		dst *string
		src string
	}{{&h.user, o.user}, {&h.uuid, o.uuid},
		{&h.family, o.family}, {&h.srcServer, o.srcServer}, {&h.srcMachine, o.srcMachine}, {&h.srcDB, o.srcDB},
		{&h.backupType, o.backupType}, {&h.firstLSN, o.firstLSN}, {&h.lastLSN, o.lastLSN}, {&h.keyAlg, o.keyAlg}} {
		if *s.dst == "" {
			*s.dst = s.src
		}
	}
	for _, v := range [...]struct{ dst, src *sql.NullInt64 }{{&h.stopAt, &o.stopAt}, {&h.deviceCount, &o.deviceCount},
		{&h.backupStart, &o.backupStart}, {&h.backupFinish, &o.backupFinish}, {&h.backupSize, &o.backupSize},
		{&h.compressed, &o.compressed}, {&h.major, &o.major}, {&h.minor, &o.minor}, {&h.build, &o.build},
		{&h.mediaFamilies, &o.mediaFamilies}, {&h.deviceType, &o.deviceType}} {
		if !v.dst.Valid {
			*v.dst = *v.src
		}
	}
	for _, v := range [...]struct{ dst, src *sql.NullBool }{{&h.replace, &o.replace}, {&h.recovery, &o.recovery},
		{&h.copyOnly, &o.copyOnly}, {&h.checksums, &o.checksums}} {
		if !v.dst.Valid {
			*v.dst = *v.src
		}
	}
	if len(h.devices) == 0 {
		h.devices = o.devices
	}
	if len(h.destinations) == 0 {
		h.destinations = o.destinations
	}
}

// pairDbatools pairs Restore-DbaDatabase rows, which carry no time, LSN or
// backup type, with the history rows of their restores: the same
// destination database and the same backup files (as a set), and the same
// kind when dbatools kept the statement (otherwise the row says full, which
// is only a default). A row pairs only when exactly one history row not yet
// paired fits; rows are tried again until no more pair, so the outcome does
// not depend on their order. The rows that fit none, or several, are
// returned unpaired.
func pairDbatools(hist []histFact, gone []bool, rows []*logFact) (map[int]*logFact, []*logFact) {
	if len(rows) == 0 {
		return nil, nil
	}
	byFiles := map[string][]int{}
	for hi := range hist {
		h := &hist[hi]
		if h.rtype == "V" || gone != nil && gone[hi] {
			continue
		}
		k := strings.ToLower(h.db) + "\x01" + deviceSetKey(h.devices)
		byFiles[k] = append(byFiles[k], hi)
	}
	pairs := map[int]*logFact{}
	left := rows
	for more := true; more && len(left) > 0; {
		more = false
		var rest []*logFact
		for _, x := range left {
			fit, n := -1, 0
			for _, hi := range byFiles[strings.ToLower(x.db)+"\x01"+deviceSetKey(x.devices)] {
				if pairs[hi] != nil {
					continue
				}
				if k, _ := KindOfRestoreType(hist[hi].rtype); x.kind != KindFull && x.kind != k {
					continue
				}
				fit, n = hi, n+1
			}
			if n == 1 {
				pairs[fit], more = x, true
			} else {
				rest = append(rest, x)
			}
		}
		left = rest
	}
	return pairs, left
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// matchHistory pairs history rows with log restores: same destination
// database and kind, and the same first and last LSN when both sides have
// them; otherwise a completion time close to restore_date. Pairs are chosen
// nearest in time first, one-to-one.
func matchHistory(hist []histFact, gone []bool, logs []*logFact) map[int]*logFact {
	type cand struct {
		hi   int
		l    *logFact
		diff int64
		lsn  bool
	}
	byDB := map[string][]*logFact{}
	for _, l := range logs {
		if l.completed.Valid {
			k := strings.ToLower(l.db)
			byDB[k] = append(byDB[k], l)
		}
	}
	var cands []cand
	for hi := range hist {
		h := &hist[hi]
		hk, ok := KindOfRestoreType(h.rtype)
		if !ok || hk == KindVerify || gone != nil && gone[hi] {
			continue
		}
		for _, l := range byDB[strings.ToLower(h.db)] {
			if l.kind != hk {
				continue
			}
			diff := l.completed.Int64 - h.restore
			bothLSN := h.firstLSN != "" && h.lastLSN != "" && l.firstLSN != "" && l.lastLSN != ""
			if bothLSN {
				if h.firstLSN != l.firstLSN || h.lastLSN != l.lastLSN {
					continue
				}
				// restore_date is the start or the end of the statement; the
				// completion line is its end. A day covers a 16 TB restore.
				if diff < -int64(time.Hour/time.Millisecond) || diff > int64(72*time.Hour/time.Millisecond) {
					continue
				}
			} else {
				maxS := 3600.0
				if l.seconds.Valid {
					maxS = l.seconds.Float64
				}
				if diff < -120_000 || diff > int64(maxS*1000)+120_000 {
					continue
				}
			}
			cands = append(cands, cand{hi: hi, l: l, diff: abs64(diff), lsn: bothLSN})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].lsn != cands[j].lsn {
			return cands[i].lsn
		}
		return cands[i].diff < cands[j].diff
	})
	pairs := map[int]*logFact{}
	taken := map[*logFact]bool{}
	for _, c := range cands {
		if _, ok := pairs[c.hi]; ok || taken[c.l] {
			continue
		}
		pairs[c.hi] = c.l
		taken[c.l] = true
	}
	return pairs
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
