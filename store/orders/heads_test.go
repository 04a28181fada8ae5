package orders

import (
	"database/sql"
	"slices"
	"testing"

	"github.com/restorewatch/restorewatch/store"
)

// fakeRows hands Build or Update rows of a restore id and Columns.
type fakeRows struct {
	rows [][]any // id, kind, at, duration (nil: unknown), MiB/s (nil: unknown), build, database, source
	i    int
}

func (r *fakeRows) Next() bool { r.i++; return r.i <= len(r.rows) }
func (r *fakeRows) Err() error { return nil }
func (r *fakeRows) Scan(dest ...any) error {
	row := r.rows[r.i-1]
	*dest[0].(*int64) = row[0].(int64)
	raw := func(v any) sql.RawBytes {
		if v == nil {
			return nil
		}
		return sql.RawBytes(v.(string))
	}
	*dest[1].(*sql.RawBytes) = raw(row[1])
	*dest[2].(*sql.NullInt64) = sql.NullInt64{}
	if row[2] != nil {
		*dest[2].(*sql.NullInt64) = sql.NullInt64{Int64: row[2].(int64), Valid: true}
	}
	for k, d := range []*sql.NullFloat64{dest[3].(*sql.NullFloat64), dest[4].(*sql.NullFloat64)} {
		*d = sql.NullFloat64{}
		if v := row[3+k]; v != nil {
			*d = sql.NullFloat64{Float64: v.(float64), Valid: true}
		}
	}
	for k := range 3 {
		*dest[5+k].(*sql.RawBytes) = raw(row[5+k])
	}
	return nil
}

// testOrders builds orders of n restores whose times, durations and
// throughputs repeat (ties are ordered by id), one in seven without a
// duration.
func testOrders(t *testing.T, n int) *Orders {
	t.Helper()
	rows := &fakeRows{}
	for id := range int64(n) {
		var dur any = float64(id%97) + 0.5
		if id%7 == 0 {
			dur = nil
		}
		rows.rows = append(rows.rows, []any{id + 1, string(store.KindFull), 1_700_000_000_000 + (id*7919)%5000*1000, dur, float64(id%53) * 1.25, "16.0", "db", "src"})
	}
	o, err := Build(5, int64(n), rows)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// The heads taken of orders answer their pages as the orders do, through
// their body and back.
func TestHeadsOf(t *testing.T) {
	defer func(n int) { HeadLen = n }(HeadLen)
	HeadLen = 300
	o := testOrders(t, 1000)
	h, err := DecodeHeads(HeadsOf(o).Encode())
	if err != nil {
		t.Fatal(err)
	}
	if h.Seq() != 5 || h.Lost() != 0 {
		t.Fatalf("heads at %d, %d lost; want 5, 0", h.Seq(), h.Lost())
	}
	for _, s := range headSorts {
		for _, f := range []pageOf{{s.sort, s.asc, 100, 0}, {s.sort, s.asc, 100, 200}, {s.sort, s.asc, 7, 33}} {
			rf := f.filter()
			if !h.Answers(rf, 1000) {
				t.Fatalf("%+v: not answered", f)
			}
			ih, nh, eh := h.Page(rf, 1000)
			io, no, eo := o.Page(rf, 1000)
			if !slices.Equal(ih, io) || nh != no || eh != eo {
				t.Fatalf("%+v: heads %v… %d %v, orders %v… %d %v", f, ih[:3], nh, eh, io[:3], no, eo)
			}
		}
		if f := (pageOf{s.sort, s.asc, 100, 250}).filter(); h.Answers(f, 1000) {
			t.Errorf("%+v: a page past the head answered", f)
		}
	}
}

// Heads that are damaged are not read: the orders answer.
func TestHeadsRefused(t *testing.T) {
	o := testOrders(t, 3000)
	body := HeadsOf(o).Encode()
	if _, err := DecodeHeads(body); err != nil {
		t.Fatalf("the heads' own body: %v", err)
	}
	h := HeadsOf(o)
	es := h.heads[0].entries
	es[0], es[1] = es[1], es[0]
	for name, b := range map[string][]byte{
		"cut short":    body[:len(body)-5],
		"longer":       append(slices.Clone(body), 0),
		"empty":        nil,
		"magic":        append([]byte{2, 'x'}, body[2:]...),
		"out of order": h.Encode(),
	} {
		if h, err := DecodeHeads(b); err == nil || h != nil {
			t.Errorf("%s: read", name)
		}
	}
}

// pageOf is a page of one of the heads' orders.
type pageOf struct {
	sort          string
	asc           bool
	limit, offset int
}

func (f pageOf) filter() store.RestoreFilter {
	return store.RestoreFilter{Sort: f.sort, Asc: f.asc, Limit: f.limit, Offset: f.offset}
}

// Heads brought up to date by the rows of changed restores (new ones at
// the head, deleted and re-measured ones in it and past it) answer as
// orders built anew do: counted up to a cap until their totals are set
// again, exactly after.
func TestHeadsUpdate(t *testing.T) {
	defer func(n int) { HeadLen = n }(HeadLen)
	HeadLen = 300
	const n = 1000
	o := testOrders(t, n)
	h := HeadsOf(o)
	rows := &fakeRows{}
	for id := range int64(n) {
		var dur any = float64(id%97) + 0.5
		if id%7 == 0 {
			dur = nil
		}
		rows.rows = append(rows.rows, []any{id + 1, string(store.KindFull), 1_700_000_000_000 + (id*7919)%5000*1000, dur, float64(id%53) * 1.25, "16.0", "db", "src"})
	}
	changed := &fakeRows{}
	for k := range int64(60) {
		id := k*17 + 1 // spread over the fleet
		switch k % 3 {
		case 0: // deleted
			rows.rows[id-1] = nil
			changed.rows = append(changed.rows, []any{id, nil, nil, nil, nil, nil, nil, nil})
		case 1: // measured again
			r := slices.Clone(rows.rows[id-1])
			r[3], r[4] = float64(k)*3.5, nil
			rows.rows[id-1] = r
			changed.rows = append(changed.rows, r)
		case 2: // a new restore, the newest
			r := []any{int64(n + k), string(store.KindFull), int64(1_800_000_000_000 + k), float64(k), float64(k) / 2, "16.0", "db", "src"}
			rows.rows = append(rows.rows, r)
			changed.rows = append(changed.rows, r)
		}
	}
	rows.rows = slices.DeleteFunc(rows.rows, func(r []any) bool { return r == nil })
	fresh, err := Build(9, 2*n, rows)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := h.Update(9, changed); err != nil || !ok {
		t.Fatalf("Update: %v, %v", ok, err)
	}
	if h.Seq() != 9 || h.Lost() != 60 {
		t.Fatalf("heads at %d, %d lost; want 9, 60", h.Seq(), h.Lost())
	}
	same := func(countCap int) int {
		answered := 0
		for _, s := range headSorts {
			for off := 0; off < 300; off += 50 {
				f := pageOf{s.sort, s.asc, 50, off}.filter()
				if !h.Answers(f, countCap) {
					continue
				}
				answered++
				ih, nh, eh := h.Page(f, countCap)
				io, no, eo := fresh.Page(f, countCap)
				if !slices.Equal(ih, io) || nh != no || eh != eo {
					t.Fatalf("%+v, cap %d: heads %d ids, %d (exact %v); orders %d ids, %d (exact %v)", f, countCap, len(ih), nh, eh, len(io), no, eo)
				}
			}
		}
		return answered
	}
	if a := same(0); a != 0 {
		t.Errorf("heads not counted again answered %d pages' exact counts", a)
	}
	if a := same(100); a < 24 {
		t.Errorf("heads answered %d pages at a cap of 100, want at least 24", a)
	}
	if !h.Recounts() {
		t.Error("a small fleet's heads are not counted again")
	}
	var withDur, withMibps int64
	for _, r := range rows.rows {
		if r[3] != nil {
			withDur++
		}
		if r[4] != nil {
			withMibps++
		}
	}
	h.SetTotals(int64(len(rows.rows)), withDur, withMibps)
	if a := same(0); a < 24 {
		t.Errorf("heads counted again answered %d pages' exact counts, want at least 24", a)
	}
}
