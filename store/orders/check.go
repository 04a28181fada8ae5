package orders

import (
	"fmt"
	"math"
	"slices"
)

// orderRowOf is one restore as o holds it, its names resolved (codes differ
// between an updated and a rebuilt orders); an id o does not hold must have
// every column zero.
func orderRowOf(o *Orders, id int32, held bool) string {
	k := int(id >> chunkBits)
	if k >= len(o.chunks) || o.chunks[k] == nil {
		if held {
			return "held, no chunk"
		}
		return "none"
	}
	c, i := o.chunks[k], id&chunkMask
	if !held {
		if c.kind[i] != 0 || c.at[i] != 0 || c.dur[i] != 0 || c.mibps[i] != 0 || c.build[i] != 0 || c.database[i] != 0 || c.source[i] != 0 {
			return fmt.Sprintf("left over: %d %d %v %v %d %d %d", c.kind[i], c.at[i], c.dur[i], c.mibps[i], c.build[i], c.database[i], c.source[i])
		}
		return "none"
	}
	name := func(which int, code uint32) string {
		if int(code) >= len(o.names[which]) {
			return fmt.Sprintf("code %d of %d names", code, len(o.names[which]))
		}
		return o.names[which][code]
	}
	return fmt.Sprintf("%d %d %x %x %q %q %q", c.kind[i], c.at[i], math.Float64bits(c.dur[i]), math.Float64bits(c.mibps[i]),
		name(nameBuild, c.build[i]), name(nameDatabase, c.database[i]), name(nameSource, c.source[i]))
}

// Diff says how got differs from want, "" when it does not: the three
// orders, every id's columns, the position, each source server's order and
// the counts by name. Engines' tests hold an update equal to a rebuild
// with it.
func Diff(got, want *Orders) string {
	for _, o := range []struct {
		name      string
		got, want []int32
	}{{"time", got.byAt, want.byAt}, {"duration", got.duration, want.duration}, {"throughput", got.throughput, want.throughput}} {
		if !slices.Equal(o.got, o.want) {
			return fmt.Sprintf("order by %s: %v, want %v", o.name, o.got, o.want)
		}
	}
	held := map[int32]bool{}
	for _, id := range want.byAt {
		held[id] = true
	}
	for id := range int32(max(len(got.chunks), len(want.chunks)) * chunkLen) {
		if g, w := orderRowOf(got, id, held[id]), orderRowOf(want, id, held[id]); g != w {
			return fmt.Sprintf("restore %d: %s, want %s", id, g, w)
		}
	}
	if got.seq != want.seq {
		return fmt.Sprintf("position %d, want %d", got.seq, want.seq)
	}
	// The counts by name are those of the restores held, and each source
	// server's order is the time order's restores of that server, whatever
	// the path that made them.
	for _, o := range []*Orders{got, want} {
		bySource := map[uint32][]int32{}
		for _, id := range o.byAt {
			c := o.chunks[id>>chunkBits].source[id&chunkMask]
			bySource[c] = append(bySource[c], id)
		}
		for c := range max(len(o.bySource), len(o.names[nameSource])) {
			if have := o.sourceOrder(c); !slices.Equal(have, bySource[uint32(c)]) {
				return fmt.Sprintf("source %d's order: %v, want %v", c, have, bySource[uint32(c)])
			}
		}
		var counts [3][]int64
		for k := range counts {
			counts[k] = make([]int64, len(o.names[k]))
		}
		for _, id := range o.byAt {
			c, i := o.chunks[id>>chunkBits], id&chunkMask
			counts[nameBuild][c.build[i]]++
			counts[nameDatabase][c.database[i]]++
			counts[nameSource][c.source[i]]++
		}
		for k := range counts {
			for code, n := range counts[k] {
				if have := int64(0); code < len(o.counts[k]) && o.counts[k][code] != n || code >= len(o.counts[k]) && n != have {
					return fmt.Sprintf("count of %q: %v, want %d", o.names[k][code], o.counts[k], n)
				}
			}
		}
	}
	return ""
}

// Dump is everything o answers, for tests to tell that an update left it
// as it was.
func Dump(o *Orders) string {
	s := fmt.Sprint(o.seq, o.byAt, o.duration, o.throughput, o.names)
	for _, id := range o.byAt {
		s += orderRowOf(o, id, true)
	}
	return s
}

// Sizes are how many restores o holds, how many in its duration and
// throughput orders, and how many names of builds and of source servers
// (each with the one that stands for none): for tests to tell that a fleet
// exercises every order.
func Sizes(o *Orders) (restores, timed, measured, builds, sources int) {
	return len(o.byAt), len(o.duration), len(o.throughput), len(o.names[nameBuild]), len(o.names[nameSource])
}
