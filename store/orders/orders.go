// Package orders holds the fleet's restores in memory, in order of time and
// of each measure (store.FleetOrders), for the restores list's pages, the
// overview and the compare page, the same on every engine: an engine hands
// Build the rows of one scan of its restore table and Update the rows its
// change log names, and keeps what Encode writes for the next start.
package orders

import (
	"cmp"
	"database/sql"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// Orders is the whole fleet's restores in memory, in order of time,
// of duration and of throughput (restores whose measure is unknown left out
// of that measure's order), with what the fleet-wide filters of the
// restores list test: kind, time, instance build, database and source
// server. It answers every page of the list not narrowed to an instance,
// the overview's counts and throughput trend and the compare page's build
// and period sides, so that no index of the restore table orders the whole
// fleet by those columns: such indexes cost a large import a sort each and
// took each new restore to a random page of each. It is built from one scan
// of the covering index restore_scan and three sorts in memory (37 bytes a
// restore and 4 an entry of each order), then kept up to date by
// Update from the restores' change log, which costs what changed (and
// a copy of the three orders) instead of a scan. A Orders never
// changes once made: an update makes a new one sharing what did not change.
// Measured gain (session 4): one index sorted instead of six, the history
// CSV import 29,600 -> 38,400 rows/s, every list page under 100 ms.
type Orders struct {
	byAt []int32 // restore ids, ascending by (at_utc, id)
	// bySource is byAt split by source server code: a list of the restores
	// of one source server (a server whose backups a few restores came
	// from, one day of its restores in a kind) walks that server's
	// restores, not the fleet's. 4 bytes a restore; an update copies the
	// lists it changes.
	bySource             [][]int32
	duration, throughput []int32 // restore ids, ascending by (measure, id)
	// By restore id, chunkLen ids a chunk (the orders hold only ids that
	// exist, so their chunks do): an update copies the chunks it changes
	// and shares the others with the orders it was made from.
	chunks []*orderChunk
	// The distinct instance builds (names[nameBuild][0] stands for NULL),
	// database names and source servers (names[nameSource][0] stands for
	// NULL), and their codes. Both only grow: an update that meets a new
	// name copies them first.
	names [3][]string
	codes *[3]map[string]uint32
	// counts are how many restores hold each code of names, by
	// dimension: a list filtered by one name alone (a source server, a
	// database, a build) is counted from them, not by testing every id
	// of the fleet (docs/benchmarks-log.md has the cost it spared). An
	// update copies them before it changes them.
	counts [3][]int64
	seq    int64 // the change log's position these orders reflect
	// kinds has bit k set when a restore of kindCode k was set in these
	// orders or those they were updated from (a bit may outlive its
	// restores: it only ever rules a kind out).
	kinds uint16
	// scanned is set on orders read from every restore (Build),
	// not updated or loaded: those a server keeps for its next start.
	scanned bool
}

// Scanned reports whether o was read from every restore, not updated from
// other orders or loaded from a snapshot (LoadOrders).
func (o *Orders) Scanned() bool { return o.scanned }

const (
	nameBuild = iota
	nameDatabase
	nameSource
)

const (
	chunkBits = 9
	chunkLen  = 1 << chunkBits
	chunkMask = chunkLen - 1
)

// orderChunk holds the per-restore columns of chunkLen consecutive ids: 37
// bytes a restore.
type orderChunk struct {
	kind     [chunkLen]uint8   // kindCode of the restore, 0 = none
	at       [chunkLen]int64   // at_utc (Unix ms)
	dur      [chunkLen]float64 // duration_s, NaN when unknown
	mibps    [chunkLen]float64 // logical MiB/s, NaN when unknown
	build    [chunkLen]uint32  // code in names[nameBuild]; 0 is NULL
	database [chunkLen]uint32  // code in names[nameDatabase]
	source   [chunkLen]uint32  // code in names[nameSource]; 0 is NULL
}

var kindCodes = map[store.Kind]uint8{store.KindFull: 1, store.KindDiff: 2, store.KindLog: 3, store.KindFile: 4, store.KindPage: 5, store.KindVerify: 6, store.KindRevert: 7,
	store.KindFullOrDiff: 8}

func (o *Orders) at(id int32) int64 { return o.chunks[id>>chunkBits].at[id&chunkMask] }

// MaxID bounds restore ids: the orders keep them as int32.
const MaxID = 1<<31 - 1

// Columns are what the orders keep of a restore (all NULL, in an
// update, for a restore that no longer exists).
const Columns = `kind, at_utc, duration_s, logical_mibps, instance_build, database_name, source_server`

// ColumnsOf is Columns, each prefixed with the table alias.
func ColumnsOf(alias string) string {
	parts := strings.Split(Columns, ", ")
	for i, c := range parts {
		parts[i] = alias + "." + c
	}
	return strings.Join(parts, ", ")
}

// ordersBuilder makes a Orders, from nothing or from another one
// whose chunks and names it shares until it changes them.
type ordersBuilder struct {
	o         *Orders
	ownNames  bool
	ownCounts bool
	ownChunks map[int]bool // nil: every chunk is the builder's own
	// The current row's columns, scanned in Columns' order.
	kind, build, database, source sql.RawBytes
	atUTC                         sql.NullInt64
	dur, mibps                    sql.NullFloat64
}

func newOrdersBuilder() *ordersBuilder {
	return &ordersBuilder{o: &Orders{names: [3][]string{{""}, nil, {""}},
		codes: &[3]map[string]uint32{{}, {}, {}}}, ownNames: true, ownCounts: true}
}

// scanDest are the destinations of Columns.
func (b *ordersBuilder) scanDest() []any {
	return []any{&b.kind, &b.atUTC, &b.dur, &b.mibps, &b.build, &b.database, &b.source}
}

func (b *ordersBuilder) intern(which int, raw []byte) uint32 {
	if c, ok := b.o.codes[which][string(raw)]; ok { // no allocation for the lookup
		return c
	}
	if !b.ownNames {
		// The orders this one was made from may still be read (and
		// updated again): their names are not written.
		b.o.codes = &[3]map[string]uint32{maps.Clone(b.o.codes[0]), maps.Clone(b.o.codes[1]), maps.Clone(b.o.codes[2])}
		for i := range b.o.names {
			b.o.names[i] = slices.Clip(b.o.names[i])
		}
		b.ownNames = true
	}
	c := uint32(len(b.o.names[which]))
	s := string(raw)
	b.o.codes[which][s] = c
	b.o.names[which] = append(b.o.names[which], s)
	return c
}

// chunk returns id's chunk, the builder's own, and id's place in it.
func (b *ordersBuilder) chunk(id int32) (*orderChunk, int) {
	o := b.o
	k := int(id >> chunkBits)
	if k >= len(o.chunks) {
		o.chunks = append(o.chunks, make([]*orderChunk, k+1-len(o.chunks))...)
	}
	switch c := o.chunks[k]; {
	case c == nil:
		o.chunks[k] = new(orderChunk)
		if b.ownChunks != nil {
			b.ownChunks[k] = true
		}
	case b.ownChunks != nil && !b.ownChunks[k]:
		cp := *c
		o.chunks[k] = &cp
		b.ownChunks[k] = true
	}
	return o.chunks[k], int(id & chunkMask)
}

// count adds d to the counts of the codes restore i of c holds.
func (b *ordersBuilder) count(c *orderChunk, i int, d int64) {
	if c.kind[i] == 0 {
		return
	}
	if !b.ownCounts {
		for k := range b.o.counts {
			b.o.counts[k] = slices.Clone(b.o.counts[k])
		}
		b.ownCounts = true
	}
	for k, code := range [3]uint32{nameBuild: c.build[i], nameDatabase: c.database[i], nameSource: c.source[i]} {
		if n := int(code) + 1; n > len(b.o.counts[k]) {
			b.o.counts[k] = append(b.o.counts[k], make([]int64, n-len(b.o.counts[k]))...)
		}
		b.o.counts[k][code] += d
	}
}

// set writes the scanned row as restore id's columns, or clears them when
// the restore no longer exists (kind NULL).
func (b *ordersBuilder) set(id int32) {
	c, i := b.chunk(id)
	b.count(c, i, -1)
	defer b.count(c, i, 1)
	if b.kind == nil {
		c.kind[i], c.at[i], c.dur[i], c.mibps[i], c.build[i], c.database[i], c.source[i] = 0, 0, 0, 0, 0, 0, 0
		return
	}
	c.kind[i], c.at[i] = kindCodes[store.Kind(b.kind)], b.atUTC.Int64
	b.o.kinds |= 1 << c.kind[i]
	c.dur[i], c.mibps[i] = math.NaN(), math.NaN()
	if b.dur.Valid {
		c.dur[i] = b.dur.Float64
	}
	if b.mibps.Valid {
		c.mibps[i] = b.mibps.Float64
	}
	c.build[i], c.source[i] = 0, 0
	if b.build != nil {
		c.build[i] = b.intern(nameBuild, b.build)
	}
	c.database[i] = b.intern(nameDatabase, b.database)
	if b.source != nil {
		c.source[i] = b.intern(nameSource, b.source)
	}
}

// keyed is a restore id with its value in an order.
type keyed[K cmp.Ordered] struct {
	v  K
	id int32
}

func compareKeyed[K cmp.Ordered](a, b keyed[K]) int {
	if c := cmp.Compare(a.v, b.v); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// sortedIDs sorts ks by (value, id) and returns their ids.
func sortedIDs[K cmp.Ordered](ks []keyed[K]) []int32 {
	slices.SortFunc(ks, compareKeyed[K])
	ids := make([]int32, len(ks))
	for i, k := range ks {
		ids[i] = k.id
	}
	return ids
}

// Rows are an engine's rows of a restore id (int64) and Columns:
// *sql.Rows and pgx.Rows both are.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Build makes the fleet's orders from rows, every restore of ids at most
// maxID (read before the scan, with seq, the change log's position: what
// the scan sees beyond it comes again in the next update, which sets each
// restore it names to what it then is).
func Build(seq, maxID int64, rows Rows) (*Orders, error) {
	if maxID > MaxID {
		return nil, store.Errorf(store.EUNAVAILABLE, "restore ids beyond 2^31: the list's orders are unavailable")
	}
	b := newOrdersBuilder()
	b.o.seq, b.o.scanned = seq, true
	b.o.chunks = make([]*orderChunk, 0, maxID>>chunkBits+1)
	var durations, throughputs []keyed[float64]
	dest := append([]any{new(int64)}, b.scanDest()...)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		id := int32(*dest[0].(*int64))
		b.set(id)
		b.o.byAt = append(b.o.byAt, id)
		if b.dur.Valid {
			durations = append(durations, keyed[float64]{b.dur.Float64, id})
		}
		if b.mibps.Valid {
			throughputs = append(throughputs, keyed[float64]{b.mibps.Float64, id})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// The orders PageRestores' ORDER BY column, id gives.
	o := b.o
	slices.SortFunc(o.byAt, func(a, b int32) int {
		if c := cmp.Compare(o.at(a), o.at(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	o.duration, o.throughput = sortedIDs(durations), sortedIDs(throughputs)
	o.splitSources()
	return o, nil
}

// splitSources makes bySource from byAt and the source counts.
func (o *Orders) splitSources() {
	o.bySource = make([][]int32, len(o.names[nameSource]))
	for code, n := range o.counts[nameSource] {
		o.bySource[code] = make([]int32, 0, n)
	}
	for _, id := range o.byAt {
		code := o.chunks[id>>chunkBits].source[id&chunkMask]
		o.bySource[code] = append(o.bySource[code], id)
	}
}

// match is f's filter over restore ids; it is nil when f names a kind,
// database or source no restore has (no id matches: callers stop there).
func (o *Orders) match(f store.RestoreFilter) func(id int32) bool {
	r, ok := o.resolve(f)
	if !ok {
		return nil
	}
	return o.matcher(r)
}

// matcher is the filter r over restore ids.
func (o *Orders) matcher(r resolved) func(id int32) bool {
	kind, from, to, builds, database, source := r.kind, r.from, r.to, r.builds, r.database, r.source
	return func(id int32) bool {
		c, i := o.chunks[id>>chunkBits], id&chunkMask
		return (kind == 0 || c.kind[i] == kind) && c.at[i] >= from && c.at[i] < to && (builds == nil || builds[c.build[i]]) &&
			(database < 0 || c.database[i] == uint32(database)) && (source < 0 || c.source[i] == uint32(source))
	}
}

// resolved is a filter in the orders' codes.
type resolved struct {
	kind             uint8
	from, to         int64
	builds           []bool // by build code, when a build is asked for
	database, source int    // codes, -1: any
}

// resolve turns f into codes; ok is false when f names a kind, database or
// source no restore has.
func (o *Orders) resolve(f store.RestoreFilter) (resolved, bool) {
	f = f.Normal()
	var kind uint8
	if f.Kind != "" {
		if kind = kindCodes[f.Kind]; kind == 0 || !o.mayHave(kind) {
			return resolved{}, false
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
		names := o.names[nameBuild]
		builds = make([]bool, len(names))
		for c, b := range names[1:] {
			builds[c+1] = store.BuildMatches(b, f.Build)
		}
	}
	database, source := -1, -1
	if f.Database != "" {
		if database = slices.Index(o.names[nameDatabase], f.Database); database < 0 {
			return resolved{}, false
		}
	}
	if f.Source != "" {
		if source = slices.Index(o.names[nameSource][1:], f.Source); source < 0 {
			return resolved{}, false
		}
		source++
	}
	return resolved{kind: kind, from: from, to: to, builds: builds, database: database, source: source}, true
}

// nameTotal is how many restores match r when r is one name alone (a
// build, a database or a source server: no kind, no time), from the
// counts; ok is false for any other filter.
func (o *Orders) nameTotal(r resolved) (total int, ok bool) {
	if r.kind != 0 || r.from != math.MinInt64 || r.to != math.MaxInt64 {
		return 0, false
	}
	count := func(k, code int) int {
		if code < len(o.counts[k]) {
			return int(o.counts[k][code])
		}
		return 0
	}
	switch {
	case r.builds != nil && r.database < 0 && r.source < 0:
		for code, in := range r.builds {
			if in {
				total += count(nameBuild, code)
			}
		}
		return total, true
	case r.builds == nil && r.database >= 0 && r.source < 0:
		return count(nameDatabase, r.database), true
	case r.builds == nil && r.database < 0 && r.source >= 0:
		return count(nameSource, r.source), true
	}
	return 0, false
}

// Databases returns the database names of the fleet's restores (and of
// restores since deleted: names only grow), not to be modified.
func (o *Orders) Databases() []string { return o.names[nameDatabase] }

// mayHave says whether a restore of kind code k may be in the orders: a
// list filtered to a kind the fleet has none of (an estate of log shipping
// and full restores has no differential) would otherwise test every id.
func (o *Orders) mayHave(k uint8) bool { return o.kinds&(1<<k) != 0 }

// Page returns the ids of one page of the restores matching f (Limit and
// Offset apply) in the list's order, and how many match, counted up to
// countCap (0: all). f must be Fleetwide.
func (o *Orders) Page(f store.RestoreFilter, countCap int) (ids []int64, total int, exact bool) {
	order := o.byAt
	switch f.Sort {
	case "duration":
		order = o.duration
	case "throughput":
		order = o.throughput
	}
	r, ok := o.resolve(f)
	if !ok {
		return nil, 0, true
	}
	match := o.matcher(r)
	if r.source >= 0 && f.Sort == "at" {
		order = o.sourceOrder(r.source)
	}
	skip := max(f.Offset, 0)
	// In time order (which holds every restore), one name alone is
	// counted from the counts: the walk stops at the page's last id.
	// The walk also stops once it has met every match (a build no
	// instance runs: at once).
	if known, ok := o.nameTotal(r); ok && f.Sort == "at" && f.Limit > 0 {
		met := 0
		for k := 0; k < len(order) && met < known; k++ {
			i := k
			if !f.Asc {
				i = len(order) - 1 - k
			}
			if id := order[i]; match(id) {
				if met++; met > skip {
					ids = append(ids, int64(id))
					if len(ids) == f.Limit {
						break
					}
				}
			}
		}
		if countCap > 0 && known > countCap {
			return ids, countCap, false
		}
		return ids, known, true
	}
	// In time order, a time filter is a range of positions: a day's list
	// of a 10 M fleet looks at the day's restores, not at all of them.
	lo, hi := 0, len(order)
	if f.Sort == "at" {
		if !f.From.IsZero() {
			lo = o.firstAtIn(order, f.From)
		}
		if !f.To.IsZero() {
			hi = max(o.firstAtIn(order, f.To), lo)
		}
	}
	for k := range hi - lo {
		i := lo + k
		if !f.Asc {
			i = hi - 1 - k
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
// RelativeSpeeds reads for a side of a comparison. f must be Fleetwide
// (its order and offset do not apply).
func (o *Orders) Measured(f store.RestoreFilter) []int64 {
	match := o.match(f)
	if match == nil {
		return nil
	}
	var ids []int64
	for i := len(o.byAt) - 1; i >= 0 && (f.Limit <= 0 || len(ids) < f.Limit); i-- {
		if id := o.byAt[i]; match(id) && o.chunks[id>>chunkBits].mibps[id&chunkMask] > 0 {
			ids = append(ids, int64(id))
		}
	}
	return ids
}

// Span returns the times of the oldest and the newest restore (zero when
// there is none).
func (o *Orders) Span() (first, last time.Time) {
	if len(o.byAt) == 0 {
		return time.Time{}, time.Time{}
	}
	return store.UnixMs(o.at(o.byAt[0])), store.UnixMs(o.at(o.byAt[len(o.byAt)-1]))
}

// firstAt returns the position in byAt of the first restore at or after t.
func (o *Orders) firstAt(t time.Time) int { return o.firstAtIn(o.byAt, t) }

// firstAtIn returns the position in order (byAt or a part of it) of the
// first restore at or after t.
func (o *Orders) firstAtIn(order []int32, t time.Time) int {
	i, _ := slices.BinarySearchFunc(order, t.UnixMilli(), func(id int32, ms int64) int { return cmp.Compare(o.at(id), ms) })
	return i
}

// sourceOrder is the time order of the restores of source code c.
func (o *Orders) sourceOrder(c int) []int32 {
	if c < len(o.bySource) {
		return o.bySource[c]
	}
	return nil
}

// between returns the positions in byAt of the restores in [from, to).
func (o *Orders) between(from, to time.Time) (lo, hi int) {
	lo = o.firstAt(from)
	return lo, max(o.firstAt(to), lo)
}

// Count counts the restores that finished in [from, to).
func (o *Orders) Count(from, to time.Time) int64 {
	lo, hi := o.between(from, to)
	return int64(hi - lo)
}

// Throughputs returns the logical MiB/s of the restores of one kind that
// finished in [from, to), oldest first, where it is known and positive.
func (o *Orders) Throughputs(kind store.Kind, from, to time.Time) []store.TimeValue {
	code := kindCodes[kind]
	lo, hi := o.between(from, to)
	var out []store.TimeValue
	for _, id := range o.byAt[lo:hi] {
		c, i := o.chunks[id>>chunkBits], id&chunkMask
		if c.kind[i] == code && c.mibps[i] > 0 {
			out = append(out, store.TimeValue{At: store.UnixMs(c.at[i]), Value: c.mibps[i]})
		}
	}
	return out
}
