package orders

// The heads of the fleet's orders (store.OrderHeads): the first HeadLen
// entries of each order of the restores list, kept beside the orders'
// snapshot as part -1 of its generation (the orders' own parts count from
// 1, and their readers never read below). A server that starts answers the
// unfiltered list's first pages from them at once, where the snapshot
// takes a few hundred MiB to load (490 MiB at 10 M restores: 1 s on a
// quiet machine, 6-16 s on a loaded one; issue 42). Each engine reads the
// body of part -1 and the rows its change log names (as for Update); the
// heads themselves are the same on every engine.

import (
	"cmp"
	"encoding/binary"
	"errors"
	"math"
	"slices"

	"github.com/restorewatch/restorewatch/store"
)

// headsMagic starts the heads' body; a change of their layout changes it.
const headsMagic = "restorewatch heads 1\n"

// HeadLen is how many entries of each order are kept: ten pages of the
// list (web's pageSize), 12 bytes each. A variable so that a test's small
// warehouse fits in its heads whole.
var HeadLen = 1000

// HeadsMaxChanges is the most changes an engine's LoadOrderHeads reads
// from the log to bring the heads up to date; further behind, the orders
// answer (a server saves its orders at most ordersSaveLag changes behind,
// an import's keep.Refresh at most keep.OrdersLag).
var HeadsMaxChanges int64 = 100_000

// HeadsRecount is the most restores the heads' totals are counted again
// for after changes (Recounts; more: they are known to be more than a
// list's count shows, or the orders answer).
var HeadsRecount int64 = 100_000

// headSorts are the orders a head is kept of, in the heads' order.
var headSorts = [...]struct {
	sort string
	asc  bool
}{{"at", false}, {"at", true}, {"duration", false}, {"duration", true}, {"throughput", false}, {"throughput", true}}

// headEntry is a restore id with its value in an order: the time in Unix
// ms (exact in a float64 until the year 287,000) or the measure.
type headEntry struct {
	v  float64
	id int32
}

// orderHead is the first entries of one order, in the list's order.
type orderHead struct {
	asc     bool
	entries []headEntry
	total   int64 // the order's length when the head was taken
	whole   bool  // entries are the whole order (and stay so)
}

// compare orders entries as the list does: by value then id, both
// descending unless asc.
func (h *orderHead) compare(a, b headEntry) int {
	c := cmp.Compare(a.v, b.v)
	if c == 0 {
		c = cmp.Compare(a.id, b.id)
	}
	if !h.asc {
		c = -c
	}
	return c
}

// Heads are the heads of the fleet's orders at a position of the restore
// change log (store.OrderHeads).
type Heads struct {
	seq   int64
	heads [len(headSorts)]orderHead
	// lost is how many restores changed since the heads' totals were
	// counted: each may have left an order, so an order's length is at
	// least its head's total less lost (0: the totals are exact).
	lost int64
}

// Seq is the position in the restore change log the heads reflect.
func (h *Heads) Seq() int64 { return h.seq }

// Lost is how many restores changed since the heads' totals were counted
// (0: the totals are exact).
func (h *Heads) Lost() int64 { return h.lost }

// head returns the head of f's order, nil when none is kept.
func (h *Heads) head(f store.RestoreFilter) *orderHead {
	for i, s := range headSorts {
		if s.sort == f.Sort && s.asc == f.Asc {
			return &h.heads[i]
		}
	}
	return nil
}

// Answers reports whether Page answers f counted up to countCap exactly as
// the orders would: f is store.RestoreFilter.Plain and its page lies in
// the head (or the head is the whole order), and the order's length is
// known, or surely more than countCap (the count shown is then countCap,
// not exact).
func (h *Heads) Answers(f store.RestoreFilter, countCap int) bool {
	oh := h.head(f)
	if !f.Plain() || oh == nil {
		return false
	}
	if oh.whole {
		return true
	}
	return f.Limit > 0 && max(f.Offset, 0)+f.Limit <= len(oh.entries) && (h.lost == 0 || countCap > 0 && oh.total-h.lost > int64(countCap))
}

// Page returns the ids of one page of f's order and how many restores it
// holds, counted up to countCap, for an f the heads answer (Answers).
func (h *Heads) Page(f store.RestoreFilter, countCap int) (ids []int64, total int, exact bool) {
	oh := h.head(f)
	if oh == nil {
		return nil, 0, true
	}
	es := oh.entries
	from := min(max(f.Offset, 0), len(es))
	to := len(es)
	if f.Limit > 0 {
		to = min(from+f.Limit, len(es))
	}
	for _, e := range es[from:to] {
		ids = append(ids, int64(e.id))
	}
	total = len(es)
	if !oh.whole {
		total = int(oh.total)
		if h.lost > 0 {
			total = countCap + 1 // surely more (Answers)
		}
	}
	if countCap > 0 && total > countCap {
		return ids, countCap, false
	}
	return ids, total, true
}

// HeadsOf takes the heads of o.
func HeadsOf(o *Orders) *Heads {
	h := &Heads{seq: o.seq}
	for i, s := range headSorts {
		order, value := o.byAt, func(id int32) float64 { return float64(o.at(id)) }
		switch s.sort {
		case "duration":
			order, value = o.duration, func(id int32) float64 { return o.chunks[id>>chunkBits].dur[id&chunkMask] }
		case "throughput":
			order, value = o.throughput, func(id int32) float64 { return o.chunks[id>>chunkBits].mibps[id&chunkMask] }
		}
		n := min(len(order), HeadLen)
		oh := orderHead{asc: s.asc, entries: make([]headEntry, n), total: int64(len(order)), whole: len(order) <= HeadLen}
		for k := range n {
			id := order[k]
			if !s.asc {
				id = order[len(order)-1-k]
			}
			oh.entries[k] = headEntry{value(id), id}
		}
		h.heads[i] = oh
	}
	return h
}

// Encode is the heads' body, which an engine keeps as part -1 of the
// orders' snapshot.
func (h *Heads) Encode() []byte {
	b := binary.AppendVarint([]byte(nil), int64(len(headsMagic)))
	b = append(b, headsMagic...)
	b = binary.AppendVarint(b, h.seq)
	for _, oh := range h.heads {
		whole := int64(0)
		if oh.whole {
			whole = 1
		}
		b = binary.AppendVarint(b, oh.total)
		b = binary.AppendVarint(b, whole)
		b = binary.AppendVarint(b, int64(len(oh.entries)))
		for _, e := range oh.entries {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.v))
			b = binary.LittleEndian.AppendUint32(b, uint32(e.id))
		}
	}
	return b
}

// DecodeHeads reads a body Encode wrote, refusing (ErrSnapshot) one whose
// heads are not what HeadsOf takes: entries out of order, a whole head
// of another length than its order's.
func DecodeHeads(body []byte) (*Heads, error) {
	read := false
	r := &snapReader{next: func() ([]byte, error) {
		if read {
			return nil, ErrSnapshot
		}
		read = true
		return body, nil
	}}
	if magic, err := r.bytes(); err != nil || string(magic) != headsMagic {
		return nil, errors.Join(ErrSnapshot, err)
	}
	h := &Heads{seq: r.varint()}
	for i, s := range headSorts {
		oh := orderHead{asc: s.asc, total: r.varint(), whole: r.varint() == 1}
		n := r.length(12)
		if r.err != nil || n > HeadLen || int64(n) > oh.total || oh.whole && int64(n) != oh.total {
			return nil, ErrSnapshot
		}
		b := r.take(12 * n)
		if b == nil && n > 0 {
			return nil, r.failure()
		}
		oh.entries = make([]headEntry, n)
		for k := range oh.entries {
			e := headEntry{math.Float64frombits(binary.LittleEndian.Uint64(b[12*k:])), int32(binary.LittleEndian.Uint32(b[12*k+8:]))}
			if e.id < 0 || math.IsNaN(e.v) || k > 0 && oh.compare(oh.entries[k-1], e) >= 0 {
				return nil, ErrSnapshot
			}
			oh.entries[k] = e
		}
		h.heads[i] = oh
	}
	if err := r.failure(); err != nil {
		return nil, err
	}
	return h, nil
}

// Update brings h, in place, to the change log's position seq by rows:
// every restore the log names since h's position, as it is now (id and
// Columns, the columns NULL for a restore that no longer exists: the rows
// Update reads). False when a restore id is beyond MaxID (the orders are
// then rebuilt, and say why); h is then as it was.
func (h *Heads) Update(seq int64, rows Rows) (bool, error) {
	b := newOrdersBuilder() // only its scan destinations
	dest := append([]any{new(int64)}, b.scanDest()...)
	type now struct {
		exists     bool
		at         float64
		dur, mibps float64 // NaN when unknown
	}
	touched := map[int32]now{}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return false, err
		}
		id := *dest[0].(*int64)
		if id > MaxID || id < 0 {
			return false, nil
		}
		n := now{exists: b.kind != nil, at: float64(b.atUTC.Int64), dur: math.NaN(), mibps: math.NaN()}
		if b.dur.Valid {
			n.dur = b.dur.Float64
		}
		if b.mibps.Valid {
			n.mibps = b.mibps.Float64
		}
		touched[int32(id)] = n
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	for i, s := range headSorts {
		oh := &h.heads[i]
		var adds []headEntry
		for id, n := range touched {
			e := headEntry{n.at, id}
			switch s.sort {
			case "duration":
				e.v = n.dur
			case "throughput":
				e.v = n.mibps
			}
			if !n.exists || math.IsNaN(e.v) {
				continue
			}
			// Past the head's last entry, a restore may have others of
			// the order before it that the head does not hold.
			if oh.whole || len(oh.entries) > 0 && oh.compare(e, oh.entries[len(oh.entries)-1]) < 0 {
				adds = append(adds, e)
			}
		}
		kept := slices.DeleteFunc(slices.Clone(oh.entries), func(e headEntry) bool {
			_, gone := touched[e.id]
			return gone
		})
		oh.entries = slices.SortedFunc(slices.Values(append(kept, adds...)), oh.compare)
	}
	h.lost += int64(len(touched))
	h.seq = seq
	return true, nil
}

// Recounts reports whether the heads' totals, inexact after an Update,
// are worth counting again (SetTotals): a small fleet's orders (a list
// shows their exact length up to 10,000 restores), whose count reads at
// most a few hundred thousand entries of an index.
func (h *Heads) Recounts() bool {
	return h.lost > 0 && h.heads[0].total-h.lost <= HeadsRecount
}

// SetTotals sets the orders' lengths as counted now, at the heads'
// position: every restore, those whose duration is known and those whose
// throughput is.
func (h *Heads) SetTotals(restores, withDuration, withThroughput int64) {
	for i, s := range headSorts {
		h.heads[i].total = map[string]int64{"at": restores, "duration": withDuration, "throughput": withThroughput}[s.sort]
	}
	h.lost = 0
}
