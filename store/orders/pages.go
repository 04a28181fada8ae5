package orders

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// What the orders answer: the restores list's pages, the overview's counts
// and throughput trend, the compare page's sides.

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
