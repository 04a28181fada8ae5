package store

// The restores list and a restore's evidence, for the dashboard.

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// PageRestores returns one page of the restores matching f (Limit and
// Offset apply) and how many match, counted up to countCap (exact reports
// whether the count stopped short). Sorting by duration or throughput leaves
// out the restores whose measure is unknown. The dashboard answers every
// filter but an instance's from RestoreOrders instead: without an instance,
// this is a scan of the table (no index orders the whole fleet, since
// migration 0013).
func (db *DB) PageRestores(ctx context.Context, f RestoreFilter, countCap int) (rs []Restore, total int, exact bool, err error) {
	where, args, err := db.pageWhere(ctx, f)
	if err != nil || where == "none" {
		return nil, 0, true, err
	}
	// An order by a measure is a sort of what the filter selects.
	order := "r.at_utc"
	switch f.Sort {
	case "duration":
		order, where = "r.duration_s", where+" AND r.duration_s IS NOT NULL"
	case "throughput":
		order, where = "r.logical_mibps", where+" AND r.logical_mibps IS NOT NULL"
	}
	cnt := `SELECT COUNT(*) FROM (SELECT 1 FROM restore r WHERE ` + where
	if countCap > 0 {
		cnt += fmt.Sprintf(" LIMIT %d", countCap+1)
	}
	if err := db.read.QueryRowContext(ctx, cnt+`)`, args...).Scan(&total); err != nil {
		return nil, 0, false, fmt.Errorf("store: count restores: %w", err)
	}
	exact = true
	if countCap > 0 && total > countCap {
		total, exact = countCap, false
	}
	dir := " DESC"
	if f.Asc {
		dir = " ASC"
	}
	// The page's ids first, from the index alone (a deep OFFSET then skips
	// index entries, not table rows), then those rows in full.
	q := `SELECT r.id FROM restore r WHERE ` + where + ` ORDER BY ` + order + dir + `, r.id` + dir
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d OFFSET %d", f.Limit, max(f.Offset, 0))
	}
	ids, err := db.ids(ctx, q, args...)
	if err != nil || len(ids) == 0 {
		return nil, total, exact, err
	}
	rs, err = db.restoresByID(ctx, ids)
	if err != nil {
		return nil, 0, false, err
	}
	return rs, total, exact, nil
}

// restoresByID reads the restores with the given ids in full, in the
// order of ids.
func (db *DB) restoresByID(ctx context.Context, ids []int64) ([]Restore, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+restoreColumns+` FROM restore r JOIN instance i ON i.id = r.instance_id
		WHERE r.id IN (`+strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")+`)`, int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("store: page restores: %w", err)
	}
	defer rows.Close()
	byID := make(map[int64]Restore, len(ids))
	for rows.Next() {
		r, err := scanRestore(rows)
		if err != nil {
			return nil, fmt.Errorf("store: page restores: %w", err)
		}
		byID[r.ID] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: page restores: %w", err)
	}
	rs := make([]Restore, 0, len(ids))
	for _, id := range ids {
		if r, ok := byID[id]; ok {
			rs = append(rs, r)
		}
	}
	return rs, nil
}

// RestoresAfter returns at most f.Limit restores matching f in series order
// (instance, database, kind, time, id: EachRestore's order), starting after
// the restore whose id is after (0: from the first). It is a keyset page:
// each page is an index seek on restore_series, however deep.
func (db *DB) RestoresAfter(ctx context.Context, f RestoreFilter, after int64) ([]Restore, error) {
	where, args, err := db.pageWhere(ctx, f)
	if err != nil || where == "none" {
		return nil, err
	}
	// Terms other than the instance are kept off every index ("+"): the
	// order is restore_series', so walking it beats sorting what another
	// index finds.
	where = plusTerms.Replace(where)
	if f.Instance != "" && f.Database != "" {
		where = strings.Replace(where, "+r.database_name", "r.database_name", 1)
	}
	if after > 0 {
		var inst int64
		var dbName, kind string
		var at int64
		err := db.read.QueryRowContext(ctx, `SELECT instance_id, database_name, kind, at_utc FROM restore WHERE id = ?`, after).
			Scan(&inst, &dbName, &kind, &at)
		if err == sql.ErrNoRows {
			return nil, Errorf(EINVALID, "cursor %d names no restore (it may have been removed since); start again without a cursor", after)
		} else if err != nil {
			return nil, fmt.Errorf("store: restores after: %w", err)
		}
		where += ` AND (r.instance_id, r.database_name, r.kind, r.at_utc) >= (?, ?, ?, ?)
			AND NOT (r.instance_id = ? AND r.database_name = ? AND r.kind = ? AND r.at_utc = ? AND r.id <= ?)`
		args = append(args, inst, dbName, kind, at, inst, dbName, kind, at, after)
	}
	q := `SELECT r.id FROM restore r WHERE ` + where + ` ORDER BY r.instance_id, r.database_name, r.kind, r.at_utc, r.id`
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	ids, err := db.ids(ctx, q, args...)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	return db.restoresByID(ctx, ids)
}

// plusTerms turns pageWhere's column references (other than the instance's)
// into expressions no index serves.
var plusTerms = strings.NewReplacer("r.database_name", "+r.database_name", "r.kind", "+r.kind", "r.at_utc", "+r.at_utc",
	"r.instance_build", "+r.instance_build", "r.source_server", "+r.source_server")

func (db *DB) ids(ctx context.Context, q string, args ...any) ([]int64, error) {
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: page restores: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: page restores: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// pageWhere builds the condition of PageRestores without the instance join:
// the instance's name is resolved to its id first, so the count walks the
// restore_series index, and the build prefix becomes a range (the
// comparison RestoreOrders makes too). It returns "none" when the named
// instance does not exist.
func (db *DB) pageWhere(ctx context.Context, f RestoreFilter) (string, []any, error) {
	conds := []string{"1"}
	var args []any
	if f.Instance != "" {
		var id int64
		err := db.read.QueryRowContext(ctx, `SELECT id FROM instance WHERE name = ?`, f.Instance).Scan(&id)
		if err == sql.ErrNoRows {
			return "none", nil, nil
		} else if err != nil {
			return "", nil, fmt.Errorf("store: page restores: %w", err)
		}
		conds, args = append(conds, "r.instance_id = ?"), append(args, id)
	}
	add := func(cond string, v ...any) { conds, args = append(conds, cond), append(args, v...) }
	if f.Database != "" {
		add("r.database_name = ?", f.Database)
	}
	if f.Kind != "" {
		add("r.kind = ?", string(f.Kind))
	}
	if !f.From.IsZero() {
		add("r.at_utc >= ?", f.From.UnixMilli())
	}
	if !f.To.IsZero() {
		add("r.at_utc < ?", f.To.UnixMilli())
	}
	switch {
	case strings.Count(f.Build, ".") == 3:
		// A whole version: equality.
		add("r.instance_build = ?", f.Build)
	case f.Build != "":
		// Every string with the prefix sorts in [prefix, prefix+U+10FFFF).
		add("r.instance_build >= ? AND r.instance_build < ?", f.Build, f.Build+"\U0010FFFF")
	}
	if f.Source != "" {
		add("r.source_server = ?", f.Source)
	}
	if len(f.IDs) > 0 {
		add("r.id IN ("+strings.TrimSuffix(strings.Repeat("?,", len(f.IDs)), ",")+")", int64Args(f.IDs)...)
	}
	return strings.Join(conds, " AND "), args, nil
}

func int64Args(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// RestoreDetail is one restore with the raw facts it was derived from, so its
// page can cite every piece of evidence.
type RestoreDetail struct {
	Restore
	// Local wall-clock readings of the instance, as its sources printed them.
	StartedLocal, FinishedLocal, RestoreDateLocal *time.Time
	History                                       *HistoryFact
	Logs                                          []LogFact // the completion line first, then client output
}

// HistoryFact is the msdb restorehistory row behind a restore.
type HistoryFact struct {
	RestoreHistoryID                               int64
	RestoreDate                                    time.Time // local
	UserName, RestoreType, BackupType              string
	SourceMachine, FirstLSN, LastLSN, KeyAlgorithm string
	BackupStart, BackupFinish                      *time.Time // local, on the source server's clock
	Source, Origin                                 string
}

// LogFact is an error-log or client-output record behind a restore.
type LogFact struct {
	Source, Origin, Statement, DeviceType string
	MessageID                             int
	Completed                             *time.Time // local
	UTCOffset                             *int64     // minutes
	Has3014                               bool
	Pages                                 *int64
	Seconds, MBps, UpperBoundS            *float64
	Buffer                                *BufferConfig
	Phases                                []Phase
	Recovery                              *RecoveryTiming
}

// GetRestoreDetail returns one restore with its evidence.
func (db *DB) GetRestoreDetail(ctx context.Context, id int64) (*RestoreDetail, error) {
	r, err := db.GetRestore(ctx, id)
	if err != nil {
		return nil, err
	}
	d := &RestoreDetail{Restore: *r}
	var started, finished, rdate, hid, lid, mid sql.NullInt64
	if err := db.read.QueryRowContext(ctx, `SELECT started_local, finished_local, restore_date_local, history_id, log_id,
		extra_log_id FROM restore WHERE id = ?`, id).Scan(&started, &finished, &rdate, &hid, &lid, &mid); err != nil {
		return nil, fmt.Errorf("store: restore detail: %w", err)
	}
	d.StartedLocal, d.FinishedLocal, d.RestoreDateLocal = nTime(started), nTime(finished), nTime(rdate)
	if hid.Valid {
		var h HistoryFact
		var at int64
		var raw string
		if err := db.read.QueryRowContext(ctx, `SELECT restore_history_id, restore_local, facts, origin
			FROM history_row WHERE id = ?`, hid.Int64).Scan(&h.RestoreHistoryID, &at, &raw, &h.Origin); err != nil {
			return nil, fmt.Errorf("store: restore detail: %w", err)
		}
		if h.RestoreHistoryID < 0 {
			h.RestoreHistoryID = 0 // historyKey's synthetic id: the source gave none
		}
		var f historyFacts
		if err := f.decode(raw); err != nil {
			return nil, fmt.Errorf("store: restore detail: history row %d: %w", hid.Int64, err)
		}
		h.UserName, h.RestoreType, h.BackupType, h.SourceMachine = f.user, f.rtype, f.backupType, f.srcMachine
		h.FirstLSN, h.LastLSN, h.KeyAlgorithm, h.Source = f.firstLSN, f.lastLSN, f.keyAlg, f.source
		h.RestoreDate, h.BackupStart, h.BackupFinish = time.UnixMilli(at).UTC(), nTime(f.backupStart), nTime(f.backupFinish)
		d.History = &h
	}
	for _, l := range []sql.NullInt64{lid, mid} {
		if !l.Valid {
			continue
		}
		f, err := db.logFact(ctx, l.Int64)
		if err != nil {
			return nil, err
		}
		d.Logs = append(d.Logs, f)
	}
	return d, nil
}

func (db *DB) logFact(ctx context.Context, id int64) (LogFact, error) {
	var f LogFact
	var completed, off, pages sql.NullInt64
	var secs, mbps, upper sql.NullFloat64
	var buffer, phases, recovery sql.NullString
	err := db.read.QueryRowContext(ctx, `SELECT source, origin, COALESCE(statement,''), COALESCE(device_type,''), message_id,
		completed_local, utc_offset, has_3014, pages, seconds, mbps, upper_bound_s, buffer, phases, recovery
		FROM log_restore WHERE id = ?`, id).Scan(&f.Source, &f.Origin, &f.Statement, &f.DeviceType, &f.MessageID,
		&completed, &off, &f.Has3014, &pages, &secs, &mbps, &upper, &buffer, &phases, &recovery)
	if err != nil {
		return f, fmt.Errorf("store: restore detail: %w", err)
	}
	f.Completed, f.UTCOffset, f.Pages = nTime(completed), nInt(off), nInt(pages)
	f.Seconds, f.MBps, f.UpperBoundS = nFloat(secs), nFloat(mbps), nFloat(upper)
	if buffer.Valid {
		f.Buffer = &BufferConfig{}
		_ = json.Unmarshal([]byte(buffer.String), f.Buffer)
	}
	if phases.Valid {
		_ = json.Unmarshal([]byte(phases.String), &f.Phases)
	}
	if recovery.Valid {
		f.Recovery = &RecoveryTiming{}
		_ = json.Unmarshal([]byte(recovery.String), f.Recovery)
	}
	return f, nil
}

// RestoreOrders is the whole fleet's restores in memory, in order of time,
// of duration and of throughput (restores whose measure is unknown left out
// of that measure's order), with what the fleet-wide filters of the
// restores list test: kind, time, instance build, database and source
// server. It answers every page of the list not narrowed to an instance,
// the overview's counts and throughput trend and the compare page's build
// and period sides, so that no index of the restore table orders the whole
// fleet by those columns: such indexes cost a large import a sort each
// (about 8 s of every million restores, BENCHMARKS.md) and took each new
// restore to a random page of each. It is built from one scan of the
// covering index restore_scan and three sorts in memory (about 3 s and
// 45 MB for a million restores) and meant to be cached until the data
// changes.
type RestoreOrders struct {
	byAt                 []int32 // restore ids, ascending by (at_utc, id)
	duration, throughput []int32 // restore ids, ascending by (measure, id)
	// By restore id (the orders hold only ids that exist).
	kind     []uint8   // kindCode of the restore, 0 = none
	at       []int64   // at_utc (Unix ms)
	mibps    []float64 // logical MiB/s, NaN when unknown
	build    []uint32  // index into builds; 0 is NULL
	database []uint32  // index into databases
	source   []uint32  // index into sources; 0 is NULL
	// The distinct instance builds (builds[0] stands for NULL), database
	// names and source servers (sources[0] stands for NULL).
	builds, databases, sources []string
}

var kindCodes = map[Kind]uint8{KindFull: 1, KindDiff: 2, KindLog: 3, KindFile: 4, KindPage: 5, KindVerify: 6, KindRevert: 7}

// RestoreOrders reads the fleet's orders.
func (db *DB) RestoreOrders(ctx context.Context) (*RestoreOrders, error) {
	var maxID int64
	if err := db.read.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM restore`).Scan(&maxID); err != nil {
		return nil, fmt.Errorf("store: restore orders: %w", err)
	}
	if maxID >= 1<<31 {
		return nil, Errorf(EUNAVAILABLE, "restore ids beyond 2^31: the list's orders are unavailable")
	}
	o := &RestoreOrders{kind: make([]uint8, maxID+1), at: make([]int64, maxID+1), mibps: make([]float64, maxID+1),
		build: make([]uint32, maxID+1), database: make([]uint32, maxID+1), source: make([]uint32, maxID+1),
		builds: []string{""}, sources: []string{""}}
	type measured struct {
		v  float64
		id int32
	}
	var durations, throughputs []measured
	buildCode := map[string]uint32{}
	dbCode := map[string]uint32{}
	sourceCode := map[string]uint32{}
	intern := func(codes map[string]uint32, names *[]string, b []byte) uint32 {
		if c, ok := codes[string(b)]; ok { // no allocation for the lookup
			return c
		}
		c := uint32(len(*names))
		s := string(b)
		codes[s] = c
		*names = append(*names, s)
		return c
	}
	// One pass over restore_scan, which covers these columns (the planner
	// picks it for a whole-table read; "+id" keeps the rowid range from
	// steering it to the table). Restores added after MAX(id) was read wait
	// for the next build.
	err := db.bulkRead(ctx, 8192, func(c *sql.Conn) error {
		rows, err := c.QueryContext(ctx, `SELECT id, kind, at_utc, duration_s, logical_mibps, instance_build, database_name,
			source_server FROM restore WHERE +id <= ?`, maxID)
		if err != nil {
			return err
		}
		defer rows.Close()
		var kind, build, dbName, source sql.RawBytes
		for rows.Next() {
			var id, at int64
			var dur, mibps sql.NullFloat64
			if err := rows.Scan(&id, &kind, &at, &dur, &mibps, &build, &dbName, &source); err != nil {
				return err
			}
			o.kind[id], o.at[id] = kindCodes[Kind(kind)], at
			if build != nil {
				o.build[id] = intern(buildCode, &o.builds, build)
			}
			o.database[id] = intern(dbCode, &o.databases, dbName)
			if source != nil {
				o.source[id] = intern(sourceCode, &o.sources, source)
			}
			o.mibps[id] = math.NaN()
			if dur.Valid {
				durations = append(durations, measured{dur.Float64, int32(id)})
			}
			if mibps.Valid {
				o.mibps[id] = mibps.Float64
				throughputs = append(throughputs, measured{mibps.Float64, int32(id)})
			}
			o.byAt = append(o.byAt, int32(id))
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: restore orders: %w", err)
	}
	// The orders PageRestores' ORDER BY column, id gives.
	slices.SortFunc(o.byAt, func(a, b int32) int {
		if c := cmp.Compare(o.at[a], o.at[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for _, m := range []struct {
		src []measured
		dst *[]int32
	}{{durations, &o.duration}, {throughputs, &o.throughput}} {
		slices.SortFunc(m.src, func(a, b measured) int {
			if c := cmp.Compare(a.v, b.v); c != 0 {
				return c
			}
			return cmp.Compare(a.id, b.id)
		})
		ids := make([]int32, len(m.src))
		for i, x := range m.src {
			ids[i] = x.id
		}
		*m.dst = ids
	}
	return o, nil
}

// Serves reports whether Page answers f: any order of the list's own (time,
// duration, throughput) filtered by anything but an instance or a list of
// ids.
func (RestoreOrders) Serves(f RestoreFilter) bool {
	return (f.Sort == "at" || f.Sort == "duration" || f.Sort == "throughput") && f.Instance == "" && len(f.IDs) == 0
}

// match is f's filter over restore ids; it is false for every id when f
// names a kind, build, database or source no restore has.
func (o *RestoreOrders) match(f RestoreFilter) func(id int32) bool {
	none := func(int32) bool { return false }
	var kind uint8
	if f.Kind != "" {
		if kind = kindCodes[f.Kind]; kind == 0 {
			return none
		}
	}
	from, to := int64(math.MinInt64), int64(math.MaxInt64)
	if !f.From.IsZero() {
		from = f.From.UnixMilli()
	}
	if !f.To.IsZero() {
		to = f.To.UnixMilli()
	}
	var builds []bool // by build code, when a build is asked for
	if f.Build != "" {
		builds = make([]bool, len(o.builds))
		for c, b := range o.builds[1:] {
			// pageWhere's conditions: a whole version is equality, any
			// other text a prefix, compared byte by byte as SQLite does.
			if strings.Count(f.Build, ".") == 3 {
				builds[c+1] = b == f.Build
			} else {
				builds[c+1] = b >= f.Build && b < f.Build+"\U0010FFFF"
			}
		}
	}
	database, source := -1, -1
	if f.Database != "" {
		if database = slices.Index(o.databases, f.Database); database < 0 {
			return none
		}
	}
	if f.Source != "" {
		if source = slices.Index(o.sources[1:], f.Source); source < 0 {
			return none
		}
		source++
	}
	return func(id int32) bool {
		return int(id) < len(o.kind) && (kind == 0 || o.kind[id] == kind) &&
			o.at[id] >= from && o.at[id] < to && (builds == nil || builds[o.build[id]]) &&
			(database < 0 || o.database[id] == uint32(database)) && (source < 0 || o.source[id] == uint32(source))
	}
}

// Page returns the ids of one page of the restores matching f (Limit and
// Offset apply) in PageRestores' order, and how many match, counted up to
// countCap (0: all). f must be one Serves accepts.
func (o *RestoreOrders) Page(f RestoreFilter, countCap int) (ids []int64, total int, exact bool) {
	order := o.byAt
	switch f.Sort {
	case "duration":
		order = o.duration
	case "throughput":
		order = o.throughput
	}
	match := o.match(f)
	skip := max(f.Offset, 0)
	n := len(order)
	for k := range n {
		i := k
		if !f.Asc {
			i = n - 1 - k
		}
		id := order[i]
		if !match(id) {
			continue
		}
		total++
		if total > skip && (f.Limit <= 0 || len(ids) < f.Limit) {
			ids = append(ids, int64(id))
		}
		if countCap > 0 && total > countCap && (f.Limit > 0 && len(ids) == f.Limit) {
			return ids, countCap, false
		}
	}
	if countCap > 0 && total > countCap {
		return ids, countCap, false
	}
	return ids, total, true
}

// Measured returns the ids of the newest restores matching f (at most
// f.Limit; 0: all) whose throughput is known, newest first: the restores
// RelativeSpeeds reads for a side of a comparison. f must be one Serves
// accepts (its order and offset do not apply).
func (o *RestoreOrders) Measured(f RestoreFilter) []int64 {
	match := o.match(f)
	var ids []int64
	for i := len(o.byAt) - 1; i >= 0 && (f.Limit <= 0 || len(ids) < f.Limit); i-- {
		if id := o.byAt[i]; match(id) && o.mibps[id] > 0 {
			ids = append(ids, int64(id))
		}
	}
	return ids
}

// Span returns the times of the oldest and the newest restore (zero when
// there is none).
func (o *RestoreOrders) Span() (first, last time.Time) {
	if len(o.byAt) == 0 {
		return time.Time{}, time.Time{}
	}
	return time.UnixMilli(o.at[o.byAt[0]]).UTC(), time.UnixMilli(o.at[o.byAt[len(o.byAt)-1]]).UTC()
}

// between returns the positions in byAt of the restores in [from, to).
func (o *RestoreOrders) between(from, to time.Time) (lo, hi int) {
	at := func(t time.Time) int {
		ms := t.UnixMilli()
		i, _ := slices.BinarySearchFunc(o.byAt, ms, func(id int32, ms int64) int { return cmp.Compare(o.at[id], ms) })
		return i
	}
	return at(from), max(at(to), at(from))
}

// Count counts the restores that finished in [from, to).
func (o *RestoreOrders) Count(from, to time.Time) int64 {
	lo, hi := o.between(from, to)
	return int64(hi - lo)
}

// Throughputs returns the logical MiB/s of the restores of one kind that
// finished in [from, to), oldest first, where it is known and positive.
func (o *RestoreOrders) Throughputs(kind Kind, from, to time.Time) []TimeValue {
	code := kindCodes[kind]
	lo, hi := o.between(from, to)
	var out []TimeValue
	for _, id := range o.byAt[lo:hi] {
		if o.kind[id] == code && o.mibps[id] > 0 {
			out = append(out, TimeValue{At: time.UnixMilli(o.at[id]).UTC(), Value: o.mibps[id]})
		}
	}
	return out
}

// RestoresByID returns the restores with the given ids, in that order
// (ids that name no restore are left out).
func (db *DB) RestoresByID(ctx context.Context, ids []int64) ([]Restore, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return db.restoresByID(ctx, ids)
}
