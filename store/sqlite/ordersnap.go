package sqlite

// The fleet's orders kept in the warehouse between runs of the server
// (migration 0030): building them reads every restore, loading them reads
// a few hundred MiB of blobs.

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/restorewatch/restorewatch/store"
)

// snapshotMagic starts a snapshot's stream; a change of the orders' layout
// changes it, and a snapshot of another layout is ignored (rebuilt).
const snapshotMagic = "restorewatch orders 1\n"

// snapshotPart is the size past which the stream is cut into a new part
// (a variable so that tests cut small warehouses' orders into several),
// and snapshotTxParts how many parts one transaction of a save writes.
var snapshotPart = 4 << 20

const snapshotTxParts = 4

// errSnapshot marks a snapshot that cannot be read as orders.
var errSnapshot = errors.New("not a readable snapshot of the orders")

// OrdersSeq is the position in the restore change log that o reflects:
// a snapshot saved at one position need not be saved again.
func (o *RestoreOrders) OrdersSeq() int64 { return o.seq }

// SaveOrders keeps o in the warehouse for the next start of the server
// (LoadOrders), replacing the snapshot saved before. o is only read. Its
// parts are written in transactions of a few parts each, the header last
// with the orders' heads (LoadOrderHeads), so an import waits for one of
// them at most, and a save cut short leaves the previous snapshot the
// newest complete one.
func (db *DB) SaveOrders(ctx context.Context, fo store.FleetOrders) error {
	o, ok := fo.(*RestoreOrders)
	if !ok {
		return fmt.Errorf("store: save orders: %T is not this warehouse's orders", fo)
	}
	var gen int64
	if err := db.write.QueryRowContext(ctx, `SELECT COALESCE(MAX(gen), 0) + 1 FROM order_snapshot`).Scan(&gen); err != nil {
		return fmt.Errorf("store: save orders: %w", err)
	}
	// Parts of a save that never finished (no header) go first.
	if _, err := db.write.ExecContext(ctx, `DELETE FROM order_snapshot WHERE gen NOT IN (SELECT gen FROM order_snapshot WHERE part = 0)`); err != nil {
		return fmt.Errorf("store: save orders: %w", err)
	}
	var pending [][]byte
	part := 0
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		tx, err := db.write.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		for _, b := range pending {
			part++
			if _, err := tx.ExecContext(ctx, `INSERT INTO order_snapshot (gen, part, body) VALUES (?, ?, ?)`, gen, part, b); err != nil {
				return err
			}
		}
		pending = pending[:0]
		return tx.Commit()
	}
	w := &snapWriter{cut: func(b []byte) error {
		pending = append(pending, b)
		if len(pending) == snapshotTxParts {
			return flush()
		}
		return nil
	}}
	o.encode(w)
	if err := w.close(); err != nil {
		return fmt.Errorf("store: save orders: %w", err)
	}
	if err := flush(); err != nil {
		return fmt.Errorf("store: save orders: %w", err)
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: save orders: %w", err)
	}
	defer tx.Rollback()
	header := binary.AppendVarint(binary.AppendVarint(nil, o.seq), int64(part))
	if _, err := tx.ExecContext(ctx, `INSERT INTO order_snapshot (gen, part, body) VALUES (?, -1, ?), (?, 0, ?)`,
		gen, headsOf(o).encode(), gen, header); err != nil {
		return fmt.Errorf("store: save orders: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM order_snapshot WHERE gen < ?`, gen); err != nil {
		return fmt.Errorf("store: save orders: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: save orders: %w", err)
	}
	return nil
}

// LoadOrders reads the newest complete snapshot SaveOrders wrote, or nil
// when there is none, or none this binary reads, or one of a position the
// change log has not reached (a warehouse put back from an older copy).
// The orders it returns are as they were saved: UpdateOrders brings them
// up to date.
func (db *DB) LoadOrders(ctx context.Context) (store.FleetOrders, error) {
	o, err := db.loadOrders(ctx)
	if o == nil { // no typed nil in the interface
		return nil, err
	}
	return o, err
}

// loadOrders is LoadOrders on the orders' own type.
func (db *DB) loadOrders(ctx context.Context) (*RestoreOrders, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("store: load orders: %w", err)
	}
	defer tx.Rollback()
	snap, ok, err := newestSnapshot(ctx, tx)
	if err != nil || !ok {
		return nil, err
	}
	seq, parts := snap.seq, snap.parts
	rows, err := tx.QueryContext(ctx, `SELECT body FROM order_snapshot WHERE gen = ? AND part > 0 ORDER BY part`, snap.gen)
	if err != nil {
		return nil, fmt.Errorf("store: load orders: %w", err)
	}
	defer rows.Close()
	// One goroutine reads the parts while this one decodes them: each is
	// about half of a load's CPU (1.1 s at 10 M restores).
	bodies, stop := make(chan []byte, 2), make(chan struct{})
	var readErr error
	go func() {
		defer close(bodies)
		for rows.Next() {
			var b []byte
			if readErr = rows.Scan(&b); readErr != nil {
				return
			}
			select {
			case bodies <- b:
			case <-stop:
				return
			}
		}
		readErr = rows.Err()
	}()
	defer func() {
		close(stop)
		for range bodies { // the reader is done with rows before they close
		}
	}()
	r := &snapReader{next: func() ([]byte, error) {
		b, ok := <-bodies
		switch {
		case ok:
			return b, nil
		case readErr != nil:
			return nil, readErr
		}
		return nil, errSnapshot
	}}
	o, err := decodeOrders(r)
	switch {
	case errors.Is(err, errSnapshot):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("store: load orders: %w", err)
	case o.seq != seq || r.parts != parts:
		return nil, nil
	}
	return o, nil
}

// snapshotHeader is what a complete snapshot's header says.
type snapshotHeader struct {
	gen, seq, parts int64
}

// newestSnapshot reads, in tx, the header of the newest complete snapshot;
// false when there is none, or its header is unreadable, or it is of a
// position the change log has not reached (a warehouse put back from an
// older copy).
func newestSnapshot(ctx context.Context, tx *sql.Tx) (snapshotHeader, bool, error) {
	var h snapshotHeader
	var logSeq int64
	var header []byte
	err := tx.QueryRowContext(ctx, `SELECT gen, body, COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'restore_change'), 0)
		FROM order_snapshot WHERE part = 0 ORDER BY gen DESC LIMIT 1`).Scan(&h.gen, &header, &logSeq)
	if errors.Is(err, sql.ErrNoRows) {
		return h, false, nil
	}
	if err != nil {
		return h, false, fmt.Errorf("store: snapshot of the orders: %w", err)
	}
	var n, m int
	h.seq, n = binary.Varint(header)
	h.parts, m = binary.Varint(header[max(n, 0):])
	return h, n > 0 && m > 0 && h.seq <= logSeq, nil
}

// encode writes o's stream: the orders' own columns and lists; bySource
// and the names' codes are made again from them on loading.
func (o *RestoreOrders) encode(w *snapWriter) {
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
// (errSnapshot) and never read out of range later.
func decodeOrders(r *snapReader) (*RestoreOrders, error) {
	if magic, err := r.bytes(); err != nil || string(magic) != snapshotMagic {
		return nil, errors.Join(errSnapshot, err)
	}
	o := &RestoreOrders{codes: &[3]map[string]uint32{}}
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
			return nil, errSnapshot
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
					return nil, errSnapshot
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
	if len(w.buf) >= snapshotPart && w.err == nil {
		w.err = w.cut(w.buf)
		w.buf = make([]byte, 0, snapshotPart+snapshotPart/4)
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
		r.err = errSnapshot
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
		r.err = errSnapshot
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
		r.err = errSnapshot
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
				r.err = errSnapshot
				return nil
			}
			out = append(out, id)
		}
	}
	return out
}

// failure is the reader's error, or errSnapshot when bytes of the last
// part were left unread (LoadOrders compares the parts read with the
// header's count).
func (r *snapReader) failure() error {
	if r.err == nil && len(r.part) > 0 {
		r.err = errSnapshot
	}
	return r.err
}
