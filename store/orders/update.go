package orders

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// updateMinRebuild: an update that reads more changes than this and than
// half the orders rebuilds them instead (a scan costs less than that many
// look-ups).
var updateMinRebuild int64 = 50000

// Rebuilds says whether changes changed restores since old are better
// read by a rebuild than by an update.
func Rebuilds(old *Orders, changes int64) bool {
	return changes > updateMinRebuild && changes > int64(len(old.byAt))/2
}

// Update returns old brought to the change log's position seq by rows:
// every restore the log names since old's position, as it is now (id and
// Columns, the columns NULL for a restore that no longer exists). old stays
// as it was (pages may still read it); the new orders share what did not
// change. nil means rebuild (an id beyond MaxID).
func Update(old *Orders, seq int64, rows Rows) (*Orders, error) {
	b := &ordersBuilder{o: &Orders{chunks: slices.Clone(old.chunks), names: old.names, codes: old.codes, counts: old.counts,
		seq: seq, kinds: old.kinds}, ownChunks: map[int]bool{}}
	touched := map[int32]bool{} // id → exists now
	dest := append([]any{new(int64)}, b.scanDest()...)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		id64 := *dest[0].(*int64)
		if id64 > MaxID || id64 < 0 {
			return nil, nil // the rebuild says why
		}
		id := int32(id64)
		b.set(id)
		touched[id] = b.kind != nil
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	o := b.o
	// Each order: the untouched restores in their order, the touched
	// ones that exist put in their places. A touched restore is found in
	// the old orders by its old values.
	var atAdds, atGone []keyed[int64]
	var durAdds, durGone, mibpsAdds, mibpsGone []keyed[float64]
	for id, exists := range touched {
		if k := int(id >> chunkBits); k < len(old.chunks) && old.chunks[k] != nil {
			c, i := old.chunks[k], id&chunkMask
			atGone = append(atGone, keyed[int64]{c.at[i], id})
			if !math.IsNaN(c.dur[i]) {
				durGone = append(durGone, keyed[float64]{c.dur[i], id})
			}
			if !math.IsNaN(c.mibps[i]) {
				mibpsGone = append(mibpsGone, keyed[float64]{c.mibps[i], id})
			}
		}
		if !exists {
			continue
		}
		c, i := o.chunks[id>>chunkBits], id&chunkMask
		atAdds = append(atAdds, keyed[int64]{c.at[i], id})
		if !math.IsNaN(c.dur[i]) {
			durAdds = append(durAdds, keyed[float64]{c.dur[i], id})
		}
		if !math.IsNaN(c.mibps[i]) {
			mibpsAdds = append(mibpsAdds, keyed[float64]{c.mibps[i], id})
		}
	}
	o.byAt = mergeOrder(old.byAt, atGone, atAdds, old.at)
	// Each source server's order: the lists of the sources a touched
	// restore left or joined are merged the same way, the others shared.
	gone, adds := map[uint32][]keyed[int64]{}, map[uint32][]keyed[int64]{}
	for _, g := range atGone {
		c := old.chunks[g.id>>chunkBits].source[g.id&chunkMask]
		gone[c] = append(gone[c], g)
	}
	for _, a := range atAdds {
		c := o.chunks[a.id>>chunkBits].source[a.id&chunkMask]
		adds[c] = append(adds[c], a)
	}
	o.bySource = slices.Clone(old.bySource)
	if n := len(o.names[nameSource]); n > len(o.bySource) {
		o.bySource = append(o.bySource, make([][]int32, n-len(o.bySource))...)
	}
	for c := range o.bySource {
		if g, a := gone[uint32(c)], adds[uint32(c)]; len(g) > 0 || len(a) > 0 {
			o.bySource[c] = mergeOrder(o.bySource[c], g, a, old.at)
		}
	}
	o.duration = mergeOrder(old.duration, durGone, durAdds, func(id int32) float64 { return old.chunks[id>>chunkBits].dur[id&chunkMask] })
	o.throughput = mergeOrder(old.throughput, mibpsGone, mibpsAdds, func(id int32) float64 { return old.chunks[id>>chunkBits].mibps[id&chunkMask] })
	return o, nil
}

// mergeOrder returns order (ids ascending by (key, id), key giving an id's
// value as it was when order was made) without the entries of gone that it
// holds and with adds in their places: positions found by search, the
// runs between them copied whole.
func mergeOrder[K cmp.Ordered](order []int32, gone, adds []keyed[K], key func(int32) K) []int32 {
	slices.SortFunc(gone, compareKeyed[K])
	slices.SortFunc(adds, compareKeyed[K])
	var skip []int // positions in order of the entries of gone
	from := 0
	for _, g := range gone {
		p := lowerBound(order, from, g, key)
		if p < len(order) && order[p] == g.id {
			skip = append(skip, p)
			from = p + 1
		} else {
			from = p
		}
	}
	out := make([]int32, 0, len(order)-len(skip)+len(adds))
	i, si, from := 0, 0, 0
	for _, a := range adds {
		// Where a goes among the values as they were: a gone entry is
		// still in its place, so order is sorted.
		p := lowerBound(order, from, a, key)
		for ; si < len(skip) && skip[si] < p; si++ {
			out = append(out, order[i:skip[si]]...)
			i = skip[si] + 1
		}
		out = append(out, order[i:p]...)
		out = append(out, a.id)
		i, from = p, p
	}
	for ; si < len(skip); si++ {
		out = append(out, order[i:skip[si]]...)
		i = skip[si] + 1
	}
	return append(out, order[i:]...)
}

// lowerBound returns the first position at or after from whose entry does
// not sort before t, galloping from from: the targets come in order, most
// near the previous one.
func lowerBound[K cmp.Ordered](order []int32, from int, t keyed[K], key func(int32) K) int {
	before := func(i int) bool { return compareKeyed(keyed[K]{key(order[i]), order[i]}, t) < 0 }
	lo, hi := from, from
	for step := 1; hi < len(order) && before(hi); step *= 2 {
		lo, hi = hi+1, hi+step
	}
	hi = min(hi, len(order))
	return lo + sort.Search(hi-lo, func(i int) bool { return !before(lo + i) })
}
