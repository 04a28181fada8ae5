package store

// The fleet's restores in memory, for the list's pages and the overview.

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"time"
)

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
	f = f.normal()
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
			builds[c+1] = buildMatches(b, f.Build)
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
