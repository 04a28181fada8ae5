package derive

import "time"

// components ties the facts of an instance into the groups whose
// derivation depends only on themselves: a history row and a completion
// line that could pair (matchHistory's candidates, chosen or not) are in one
// group, since the greedy choice of pairs in a group depends on all its
// candidates and on nothing else. Client output and Restore-DbaDatabase
// rows, which pair by content whatever their time, are not followed: a
// window of facts is only derived for instances without them.
//
// Each group knows its earliest and latest fact and its reach: the earliest
// local time at which a fact outside the facts read could still pair with
// one of its own (a completion line pairs with a history row up to 72 h
// before it when both state LSNs, its engine seconds and 2 minutes before
// it otherwise; a history row with a completion line up to an hour before
// it). A window whose facts begin before every reach holds whole groups.
type components struct {
	parent          []int
	from, to, reach []int64
	settled         []bool // a group that is one settled pair (settledPairs)
	nHist           int
	logIndex        map[*Log]int
}

const (
	lsnReach  = int64(72 * time.Hour / time.Millisecond)
	histReach = int64(time.Hour / time.Millisecond)
)

func newComponents(f *Facts) *components {
	n := len(f.History) + len(f.Logs)
	c := &components{parent: make([]int, n), from: make([]int64, n), to: make([]int64, n), reach: make([]int64, n), settled: make([]bool, n),
		nHist: len(f.History), logIndex: make(map[*Log]int, len(f.Logs))}
	for i := range c.parent {
		c.parent[i] = i
	}
	for i := range f.History {
		t := f.History[i].RestoreLocal
		c.from[i], c.to[i], c.reach[i] = t, t, t-histReach
	}
	for i := range f.Logs {
		l := &f.Logs[i]
		k := c.nHist + i
		c.logIndex[l] = k
		t := l.Completed.Int64 // an undated line pairs with nothing
		c.from[k], c.to[k], c.reach[k] = t, t, t-lineReach(l)
	}
	return c
}

// lineReach is how long before its completion a history row can pair
// with line l: 72 h with LSNs, its engine seconds and 2 minutes without
// (an hour when it states none), or with LSNs that no unread row states
// (Log.LSNRowsRead).
func lineReach(l *Log) int64 {
	s := 3600.0
	if l.Seconds.Valid {
		s = l.Seconds.Float64
	}
	back := int64(s*1000) + 120_000
	if l.FirstLSN != "" && l.LastLSN != "" && !l.LSNRowsRead {
		back = max(back, lsnReach)
	}
	return back
}

func (c *components) find(i int) int {
	for c.parent[i] != i {
		c.parent[i] = c.parent[c.parent[i]]
		i = c.parent[i]
	}
	return i
}

// join puts history row hi and log l in one group. A settled pair is
// joined first of its row's and line's candidates (it comes first among
// them), so it starts a group of its own, which no unread fact can change:
// as long as nothing else joins it, it reaches no further back than itself.
func (c *components) join(hi int, l *Log, settled bool) {
	a, b := c.find(hi), c.find(c.logIndex[l])
	if a == b {
		return
	}
	c.parent[b] = a
	c.from[a], c.to[a], c.reach[a] = min(c.from[a], c.from[b]), max(c.to[a], c.to[b]), min(c.reach[a], c.reach[b])
	c.settled[a] = settled
}

// place records the group of restore d, made from history row hi (-1:
// none) and log l (nil: none). Joins are all done when restores are built.
func (c *components) place(d *Derived, hi int, l *Log) {
	if c == nil {
		return
	}
	k := -1
	switch {
	case hi >= 0:
		k = c.find(hi)
	case l != nil:
		k = c.find(c.logIndex[l])
	default:
		return
	}
	if hi >= 0 && l != nil {
		c.join(hi, l, false) // a chosen pair is a candidate: already one group
		k = c.find(hi)
	}
	d.CompFrom, d.CompTo, d.CompReach = c.from[k], c.to[k], c.reach[k]
	if c.settled[k] {
		d.CompReach = c.from[k]
	}
}
