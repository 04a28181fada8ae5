package orders

import (
	"encoding/binary"
	"errors"
	"math"
)

// A snapshot is the orders as a stream of parts an engine keeps (in its
// order_snapshot table) between runs of the server: building them reads
// every restore, loading them reads a few hundred MiB of blobs.

// snapshotMagic starts a snapshot's stream; a change of the orders' layout
// changes it, and a snapshot of another layout is ignored (rebuilt).
const snapshotMagic = "restorewatch orders 1\n"

// SnapshotPart is the size past which the stream is cut into a new part
// (a variable so that tests cut small warehouses' orders into several).
var SnapshotPart = 4 << 20

// ErrSnapshot marks a snapshot that cannot be read as orders.
var ErrSnapshot = errors.New("not a readable snapshot of the orders")

// OrdersSeq is the position in the restore change log that o reflects:
// a snapshot saved at one position need not be saved again.
func (o *Orders) OrdersSeq() int64 { return o.seq }

// Encode writes o's stream, handing each part to cut as it fills: the
// orders' own columns and lists; bySource and the names' codes are made
// again from them on loading. o is only read.
func (o *Orders) Encode(cut func(part []byte) error) error {
	w := &snapWriter{cut: cut}
	o.encode(w)
	return w.close()
}

// Decode reads the stream Encode wrote, its parts handed by next (which
// returns ErrSnapshot past the last), and how many parts it read. A
// stream that cannot be read as orders is ErrSnapshot.
func Decode(next func() ([]byte, error)) (*Orders, int64, error) {
	r := &snapReader{next: next}
	o, err := decodeOrders(r)
	return o, r.parts, err
}

func (o *Orders) encode(w *snapWriter) {
	w.bytes([]byte(snapshotMagic))
	w.varint(o.seq)
	w.varint(int64(o.kinds))
	for _, names := range o.names {
		w.varint(int64(len(names)))
		for _, s := range names {
			w.bytes([]byte(s))
		}
	}
	for _, counts := range o.counts {
		w.varint(int64(len(counts)))
		for _, n := range counts {
			w.varint(n)
		}
	}
	w.varint(int64(len(o.chunks)))
	for _, c := range o.chunks {
		if c == nil {
			w.varint(0)
			continue
		}
		w.varint(1)
		w.buf = append(w.buf, c.kind[:]...)
		for i := range chunkLen {
			w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(c.at[i]))
		}
		for i := range chunkLen {
			w.buf = binary.LittleEndian.AppendUint64(w.buf, math.Float64bits(c.dur[i]))
		}
		for i := range chunkLen {
			w.buf = binary.LittleEndian.AppendUint64(w.buf, math.Float64bits(c.mibps[i]))
		}
		for _, col := range []*[chunkLen]uint32{&c.build, &c.database, &c.source} {
			for _, v := range col {
				w.buf = binary.LittleEndian.AppendUint32(w.buf, v)
			}
		}
		w.mayCut()
	}
	for _, order := range [][]int32{o.byAt, o.duration, o.throughput} {
		w.ids(order)
	}
}

// decodeOrders reads a stream encode wrote, checking that every id and code
// it holds points where it must, so that a damaged snapshot is refused
// (ErrSnapshot) and never read out of range later.
func decodeOrders(r *snapReader) (*Orders, error) {
	if magic, err := r.bytes(); err != nil || string(magic) != snapshotMagic {
		return nil, errors.Join(ErrSnapshot, err)
	}
	o := &Orders{codes: &[3]map[string]uint32{}}
	o.seq = r.varint()
	o.kinds = uint16(r.varint())
	for k := range o.names {
		n := r.length(1)
		o.names[k] = make([]string, 0, n)
		o.codes[k] = make(map[string]uint32, n)
		for range n {
			b, err := r.bytes()
			if err != nil {
				return nil, err
			}
			o.codes[k][string(b)] = uint32(len(o.names[k]))
			o.names[k] = append(o.names[k], string(b))
		}
	}
	for k := range o.counts {
		n := r.length(1)
		if n > len(o.names[k]) {
			return nil, ErrSnapshot
		}
		o.counts[k] = make([]int64, n)
		for i := range o.counts[k] {
			o.counts[k][i] = r.varint()
		}
	}
	o.chunks = make([]*orderChunk, r.length(1))
	const chunkBytes = chunkLen * (1 + 3*8 + 3*4)
	for k := range o.chunks {
		if r.varint() == 0 {
			continue
		}
		b := r.take(chunkBytes)
		if b == nil {
			return nil, r.failure()
		}
		c := new(orderChunk)
		copy(c.kind[:], b)
		b = b[chunkLen:]
		for i := range chunkLen {
			c.at[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
			c.dur[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*(chunkLen+i):]))
			c.mibps[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*(2*chunkLen+i):]))
		}
		b = b[3*8*chunkLen:]
		for j, col := range []*[chunkLen]uint32{&c.build, &c.database, &c.source} {
			for i := range chunkLen {
				v := binary.LittleEndian.Uint32(b[4*(j*chunkLen+i):])
				if int(v) >= len(o.names[j]) {
					return nil, ErrSnapshot
				}
				col[i] = v
			}
		}
		o.chunks[k] = c
	}
	for _, order := range []*[]int32{&o.byAt, &o.duration, &o.throughput} {
		*order = r.ids(o.chunks)
	}
	if err := r.failure(); err != nil {
		return nil, err
	}
	o.splitSources()
	return o, nil
}

// snapWriter builds the stream and hands it on in parts cut at item
// boundaries: no item spans two parts.
type snapWriter struct {
	buf []byte
	cut func([]byte) error
	err error
}

func (w *snapWriter) varint(v int64) { w.buf = binary.AppendVarint(w.buf, v) }

func (w *snapWriter) bytes(b []byte) {
	w.varint(int64(len(b)))
	w.buf = append(w.buf, b...)
	w.mayCut()
}

// ids writes an order as a length and runs of ids, each run one item.
func (w *snapWriter) ids(order []int32) {
	w.varint(int64(len(order)))
	const run = 1 << 16
	for len(order) > 0 {
		n := min(len(order), run)
		for _, id := range order[:n] {
			w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(id))
		}
		order = order[n:]
		w.mayCut()
	}
}

func (w *snapWriter) mayCut() {
	if len(w.buf) >= SnapshotPart && w.err == nil {
		w.err = w.cut(w.buf)
		w.buf = make([]byte, 0, SnapshotPart+SnapshotPart/4)
	}
}

func (w *snapWriter) close() error {
	if len(w.buf) > 0 && w.err == nil {
		w.err = w.cut(w.buf)
	}
	return w.err
}

// snapReader reads the stream part by part; its first error sticks, and
// every read after it returns zero values.
type snapReader struct {
	part  []byte
	next  func() ([]byte, error)
	parts int64
	err   error
}

// take returns the next n bytes, all from one part, or nil on an error.
func (r *snapReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.part) == 0 {
		if r.part, r.err = r.next(); r.err != nil {
			return nil
		}
		r.parts++
	}
	if n > len(r.part) {
		r.err = ErrSnapshot
		return nil
	}
	b := r.part[:n]
	r.part = r.part[n:]
	return b
}

func (r *snapReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	if len(r.part) == 0 {
		if r.take(0); r.err != nil {
			return 0
		}
	}
	v, n := binary.Varint(r.part)
	if n <= 0 {
		r.err = ErrSnapshot
		return 0
	}
	r.part = r.part[n:]
	return v
}

// length reads a count of items at least min bytes each, refusing one the
// rest of the part could not hold when it stands in one part, or one past
// 2^31 (no list of the orders is longer).
func (r *snapReader) length(minBytes int) int {
	n := r.varint()
	if n < 0 || n > math.MaxInt32 || minBytes > 0 && n > math.MaxInt32/int64(minBytes) {
		r.err = ErrSnapshot
		return 0
	}
	return int(n)
}

func (r *snapReader) bytes() ([]byte, error) {
	n := r.length(0)
	if r.err != nil {
		return nil, r.err
	}
	b := r.take(n)
	return b, r.err
}

// ids reads an order, refusing an id without its chunk.
func (r *snapReader) ids(chunks []*orderChunk) []int32 {
	n := r.length(4)
	out := make([]int32, 0, n)
	for len(out) < n && r.err == nil {
		run := min(n-len(out), 1<<16)
		b := r.take(4 * run)
		for i := range run {
			if b == nil {
				break
			}
			id := int32(binary.LittleEndian.Uint32(b[4*i:]))
			if id < 0 || int(id>>chunkBits) >= len(chunks) || chunks[id>>chunkBits] == nil {
				r.err = ErrSnapshot
				return nil
			}
			out = append(out, id)
		}
	}
	return out
}

// failure is the reader's error, or ErrSnapshot when bytes of the last
// part were left unread (LoadOrders compares the parts read with the
// header's count).
func (r *snapReader) failure() error {
	if r.err == nil && len(r.part) > 0 {
		r.err = ErrSnapshot
	}
	return r.err
}

// SaveParts encodes o and hands its parts to write in groups of at most
// perWrite (each group one transaction of the engine's), with the number
// of the group's first part (parts count from 1); it returns the header
// the engine writes last, as part 0: a save cut short leaves no header,
// and the previous snapshot stays the newest complete one.
func SaveParts(o *Orders, perWrite int, write func(first int, parts [][]byte) error) (header []byte, err error) {
	var pending [][]byte
	written := 0
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		if err := write(written+1, pending); err != nil {
			return err
		}
		written += len(pending)
		pending = pending[:0]
		return nil
	}
	if err := o.Encode(func(b []byte) error {
		if pending = append(pending, b); len(pending) == perWrite {
			return flush()
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return binary.AppendVarint(binary.AppendVarint(nil, o.seq), int64(written)), nil
}

// ReadHeader reads a header SaveParts returned: the orders' position and
// how many parts follow it.
func ReadHeader(b []byte) (seq, parts int64, ok bool) {
	seq, n := binary.Varint(b)
	parts, m := binary.Varint(b[max(n, 0):])
	return seq, parts, n > 0 && m > 0
}
