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
