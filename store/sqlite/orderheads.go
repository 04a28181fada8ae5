package sqlite

// The heads of the fleet's orders (store.OrderHeads): the first headLen
// entries of each order of the restores list, kept beside the orders'
// snapshot as part -1 of its generation (the orders' own parts count from
// 1, and their readers never read below). A server that starts answers the
// unfiltered list's first pages from them at once, where the snapshot
// takes a few hundred MiB to load (490 MiB at 10 M restores: 1 s on a
// quiet machine, 6-16 s on a loaded one; issue 42).

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/restorewatch/restorewatch/store"
)

// headsMagic starts the heads' body; a change of their layout changes it.
const headsMagic = "restorewatch heads 1\n"

// headLen is how many entries of each order are kept: ten pages of the
// list (web's pageSize), 12 bytes each. A variable so that a test's small
// warehouse fits in its heads whole.
var headLen = 1000

// headsMaxChanges is the most changes LoadOrderHeads reads from the log to
// bring the heads up to date; further behind, the orders answer (a server
// saves its orders at most ordersSaveLag changes behind, an import's
// keep.Refresh at most keep.OrdersLag).
var headsMaxChanges int64 = 100_000

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

// OrderHeads are the heads of the fleet's orders at a position of the
// restore change log (store.OrderHeads).
type OrderHeads struct {
	seq   int64
	heads [len(headSorts)]orderHead
	// lost is how many restores changed since the heads' totals were
	// counted: each may have left an order, so an order's length is at
	// least its head's total less lost (0: the totals are exact).
	lost int64
}

// head returns the head of f's order, nil when none is kept.
func (h *OrderHeads) head(f store.RestoreFilter) *orderHead {
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
func (h *OrderHeads) Answers(f store.RestoreFilter, countCap int) bool {
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
func (h *OrderHeads) Page(f store.RestoreFilter, countCap int) (ids []int64, total int, exact bool) {
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

// headsOf takes the heads of o.
func headsOf(o *RestoreOrders) *OrderHeads {
	h := &OrderHeads{seq: o.seq}
	for i, s := range headSorts {
		order, value := o.byAt, func(id int32) float64 { return float64(o.at(id)) }
		switch s.sort {
		case "duration":
			order, value = o.duration, func(id int32) float64 { return o.chunks[id>>chunkBits].dur[id&chunkMask] }
		case "throughput":
			order, value = o.throughput, func(id int32) float64 { return o.chunks[id>>chunkBits].mibps[id&chunkMask] }
		}
		n := min(len(order), headLen)
		oh := orderHead{asc: s.asc, entries: make([]headEntry, n), total: int64(len(order)), whole: len(order) <= headLen}
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

// encode is the heads' body.
func (h *OrderHeads) encode() []byte {
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

// decodeHeads reads a body encode wrote, refusing (errSnapshot) one whose
// heads are not what headsOf takes: entries out of order, a whole head
// of another length than its order's.
func decodeHeads(body []byte) (*OrderHeads, error) {
	read := false
	r := &snapReader{next: func() ([]byte, error) {
		if read {
			return nil, errSnapshot
		}
		read = true
		return body, nil
	}}
	if magic, err := r.bytes(); err != nil || string(magic) != headsMagic {
		return nil, errors.Join(errSnapshot, err)
	}
	h := &OrderHeads{seq: r.varint()}
	for i, s := range headSorts {
		oh := orderHead{asc: s.asc, total: r.varint(), whole: r.varint() == 1}
		n := r.length(12)
		if r.err != nil || n > headLen || int64(n) > oh.total || oh.whole && int64(n) != oh.total {
			return nil, errSnapshot
		}
		b := r.take(12 * n)
		if b == nil && n > 0 {
			return nil, r.failure()
		}
		oh.entries = make([]headEntry, n)
		for k := range oh.entries {
			e := headEntry{math.Float64frombits(binary.LittleEndian.Uint64(b[12*k:])), int32(binary.LittleEndian.Uint32(b[12*k+8:]))}
			if e.id < 0 || math.IsNaN(e.v) || k > 0 && oh.compare(oh.entries[k-1], e) >= 0 {
				return nil, errSnapshot
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

// LoadOrderHeads returns the heads kept with the newest complete snapshot
// of the orders (SaveOrders), brought up to date with the change log: nil
// when there are none (no snapshot, one saved before heads were kept, or
// one of a position the log has not reached) or when the log cannot say
// what changed since, or too much did (headsMaxChanges). It reads a few
// KiB and what changed, not the orders.
func (db *DB) LoadOrderHeads(ctx context.Context) (store.OrderHeads, error) {
	h, err := db.loadOrderHeads(ctx)
	if h == nil { // no typed nil in the interface
		return nil, err
	}
	return h, err
}

// loadOrderHeads is LoadOrderHeads on the heads' own type.
func (db *DB) loadOrderHeads(ctx context.Context) (*OrderHeads, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("store: load order heads: %w", err)
	}
	defer tx.Rollback()
	snap, ok, err := newestSnapshot(ctx, tx)
	if err != nil || !ok {
		return nil, err
	}
	var body []byte
	err = tx.QueryRowContext(ctx, `SELECT body FROM order_snapshot WHERE gen = ? AND part = -1`, snap.gen).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: load order heads: %w", err)
	}
	h, err := decodeHeads(body)
	if err != nil || h.seq != snap.seq {
		return nil, nil
	}
	seq, changes, readable, err := changesSince(ctx, tx, h.seq)
	switch {
	case err != nil:
		return nil, fmt.Errorf("store: load order heads: %w", err)
	case seq == h.seq:
		return h, nil
	case !readable || changes > headsMaxChanges:
		return nil, nil
	}
	if ok, err := h.update(ctx, tx); err != nil || !ok {
		return nil, err
	}
	h.seq = seq
	// A small fleet's orders are counted again (a list shows their exact
	// length up to 10,000 restores): the count reads at most a few
	// hundred thousand entries of an index.
	if h.heads[0].total-h.lost <= headsRecount {
		var n, dur, mibps int64
		if err := tx.QueryRowContext(ctx, `SELECT count(*), count(duration_s), count(logical_mibps) FROM restore`).Scan(&n, &dur, &mibps); err != nil {
			return nil, fmt.Errorf("store: load order heads: %w", err)
		}
		for i, s := range headSorts {
			h.heads[i].total = map[string]int64{"at": n, "duration": dur, "throughput": mibps}[s.sort]
		}
		h.lost = 0
	}
	return h, nil
}

// headsRecount is the most restores the heads' totals are counted again
// for after changes (more: they are known to be more than a list's count
// shows, or the orders answer).
var headsRecount int64 = 100_000

// update applies the changes logged since h.seq to h, in place; false
// when a restore id is beyond the orders' (they are then rebuilt, and say
// why).
func (h *OrderHeads) update(ctx context.Context, tx *sql.Tx) (bool, error) {
	rows, err := changedRestores(ctx, tx, h.seq, "kind, at_utc, duration_s, logical_mibps")
	if err != nil {
		return false, fmt.Errorf("store: load order heads: %w", err)
	}
	defer rows.Close()
	type now struct {
		exists     bool
		at         int64
		dur, mibps sql.NullFloat64
	}
	touched := map[int32]now{}
	for rows.Next() {
		var id int64
		var kind sql.NullString
		var at sql.NullInt64
		var n now
		if err := rows.Scan(&id, &kind, &at, &n.dur, &n.mibps); err != nil {
			return false, fmt.Errorf("store: load order heads: %w", err)
		}
		if id > ordersMaxID || id < 0 {
			return false, nil
		}
		n.exists, n.at = kind.Valid, at.Int64
		touched[int32(id)] = n
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("store: load order heads: %w", err)
	}
	for i, s := range headSorts {
		oh := &h.heads[i]
		var adds []headEntry
		for id, n := range touched {
			e := headEntry{float64(n.at), id}
			switch {
			case !n.exists:
				continue
			case s.sort == "duration" && n.dur.Valid:
				e.v = n.dur.Float64
			case s.sort == "throughput" && n.mibps.Valid:
				e.v = n.mibps.Float64
			case s.sort != "at":
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
	return true, nil
}
