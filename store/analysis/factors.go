package analysis

import (
	"cmp"
	"slices"
)

// factorOrder lists the factors of SPEC §6.1 in the order a page shows
// them when two factors split a change equally well: the engine build
// first, because it is what an upgrade changes and what a known issue is
// keyed on.
var factorOrder = []string{
	"instance_build", "source_build", "source_server", "compression", "encryption",
	"checksum", "device_kind", "stripes", "buffer_count", "max_transfer_size",
	"io_alignment", "ifi", "cpu_count", "memory", "loaded_modules", "trace_flags", "size_class",
	"destination",
}

// FactorNames returns the factor names of SPEC §6.1 in display order.
func FactorNames() []string { return slices.Clone(factorOrder) }

// RankFactors lists every factor whose usual (majority) value differs
// between the restores before a change and those after it, cleanest split
// first. Before and After are the majority values; Score is the share of
// before-restores that have the before value times the share of
// after-restores that have the after value, so a factor that flipped
// exactly at the change scores 1 and one that was already drifting scores
// less. Unknown ("") values are ignored; a factor unknown on either side,
// or with the same majority on both, is not listed. Factor names outside
// FactorNames() are ranked too, after the known ones on equal scores.
func RankFactors(before, after []Point) []FactorChange {
	names := map[string]bool{}
	for _, ps := range [2][]Point{before, after} {
		for _, p := range ps {
			for k := range p.Factors {
				names[k] = true
			}
		}
	}
	var out []FactorChange
	for name := range names {
		vb, sb := majority(before, name)
		va, sa := majority(after, name)
		if sb == 0 || sa == 0 || vb == va {
			continue
		}
		out = append(out, FactorChange{Factor: name, Before: vb, After: va, Score: sb * sa})
	}
	slices.SortFunc(out, func(x, y FactorChange) int {
		if c := cmp.Compare(y.Score, x.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(factorRank(x.Factor), factorRank(y.Factor)); c != 0 {
			return c
		}
		return cmp.Compare(x.Factor, y.Factor)
	})
	return out
}

// majority returns the most frequent known value of a factor and its share
// of the known values (0 when none is known). On a tie the value seen most
// recently wins: nearest the change on the before side, the current state
// on the after side.
func majority(ps []Point, name string) (string, float64) {
	count := map[string]int{}
	last := map[string]int{}
	known := 0
	for i, p := range ps {
		v := p.Factors[name]
		if v == "" {
			continue
		}
		count[v]++
		last[v] = i
		known++
	}
	best, bestN := "", 0
	for v, c := range count {
		if c > bestN || (c == bestN && last[v] > last[best]) {
			best, bestN = v, c
		}
	}
	if known == 0 {
		return "", 0
	}
	return best, float64(bestN) / float64(known)
}

func factorRank(name string) int {
	if i := slices.Index(factorOrder, name); i >= 0 {
		return i
	}
	return len(factorOrder)
}
