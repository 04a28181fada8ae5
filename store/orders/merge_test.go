package orders

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMergeOrder: removing and adding entries by search and copied runs
// gives the order a sort of the result gives, for random orders where
// values repeat, entries go at either end, and a changed entry keeps or
// changes its value.
func TestMergeOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for range 2000 {
		n := rng.IntN(60)
		vals := map[int32]int64{} // id → value as the order was made
		var order []keyed[int64]
		for id := range int32(n) {
			if rng.IntN(4) > 0 {
				vals[id] = int64(rng.IntN(10))
				order = append(order, keyed[int64]{vals[id], id})
			}
		}
		ids := sortedIDs(order)
		now := maps.Clone(vals)
		var gone, adds []keyed[int64]
		for id := range int32(n + 10) {
			switch rng.IntN(5) {
			case 0: // changed (or unchanged) value, or new
				if v, ok := vals[id]; ok {
					gone = append(gone, keyed[int64]{v, id})
				}
				now[id] = int64(rng.IntN(12)) - 1
				adds = append(adds, keyed[int64]{now[id], id})
			case 1: // deleted, or never there
				if v, ok := vals[id]; ok {
					gone = append(gone, keyed[int64]{v, id})
				} else {
					gone = append(gone, keyed[int64]{0, id})
				}
				delete(now, id)
			}
		}
		var want []keyed[int64]
		for id, v := range now {
			want = append(want, keyed[int64]{v, id})
		}
		got := mergeOrder(ids, gone, adds, func(id int32) int64 { return vals[id] })
		if w := sortedIDs(want); !slices.Equal(got, w) && len(got)+len(w) > 0 {
			t.Fatalf("order %v (values %v), gone %v, adds %v: %v, want %v", ids, vals, gone, adds, got, w)
		}
	}
}

// BenchmarkMergeOrder measures one order's merge in an update at 10 M
// restores (the part of an update that grows with the fleet; the rest reads
// the changed restores, ~30,000 here): 24,000 new restores at the end,
// 5,000 moved, 1,000 gone.
//
//	go test -run '^$' -bench MergeOrder -benchtime 10x ./store/orders/
func BenchmarkMergeOrder(b *testing.B) {
	const n = 10000000
	rng := rand.New(rand.NewPCG(3, 4))
	vals := make([]int64, n+24000)
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
		vals[i] = int64(i) / 2
	}
	var gone, adds []keyed[int64]
	for range 6000 {
		id := int32(n - 1 - rng.IntN(n/10))
		gone = append(gone, keyed[int64]{vals[id], id})
	}
	for _, g := range gone[:5000] {
		adds = append(adds, keyed[int64]{g.v + int64(rng.IntN(1000)) - 500, g.id})
	}
	for i := range 24000 {
		adds = append(adds, keyed[int64]{int64(n/2 + rng.IntN(100000)), int32(n + i)})
	}
	key := func(id int32) int64 { return vals[id] }
	b.ReportAllocs()
	for b.Loop() {
		if out := mergeOrder(order, slices.Clone(gone), slices.Clone(adds), key); len(out) < n {
			b.Fatal(len(out))
		}
	}
}
