package derive

import (
	"database/sql"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// Version names what Derive produces. Bump it whenever a change here alters
// the restore rows derived from the same facts: each engine's next
// reconciliation then derives every instance again (the warehouse records
// the version it derived by in setting 'derivation_version'), so an
// upgraded restorewatch never shows restores derived by the rules of an
// older one.
const Version = "6"

// Instance is the outcome of derivation for one instance.
type Instance struct {
	Restores []Derived
	// Semantics is what the instance's restore_date means, measured on the
	// restores both msdb and the error log saw: "start", "end" or
	// "unknown"; SemanticsN is how many restores it was measured on.
	Semantics  string
	SemanticsN int
	// Untimed counts, by source, the log records that became no restore
	// because nothing places them in time: client output without a
	// completion stamp or --at, a Restore-DbaDatabase row that pairs with
	// no history row (or with several). They stay stored, to be dated by a
	// later import.
	Untimed map[store.Source]int
}

// Derived is one restore and the facts it was derived from.
type Derived struct {
	// Key is the restore's natural key: the history row's id, or minus the
	// log record's when no history row describes the restore.
	Key      int64
	History  *History
	Log      *Log // the error-log (or only) log record
	Client   *Log // client output merged into Log
	Dbatools *Log // the Restore-DbaDatabase row paired with History
	Restore  store.Restore
	AtUTC    int64 // Restore.At, Unix ms
	// The restore's instants, Unix ms UTC and local: an int64, or nil when
	// unknown (the warehouse writes them as they are).
	StartedUTC, FinishedUTC, StartedLocal, FinishedLocal, RestoreDateLocal any
	// Vote is the restore's vote on the instance's restore_date semantics:
	// +1 "start", -1 "end", 0 none (not a history row paired with engine
	// seconds of 10 s or more).
	Vote int8
	// With Facts.Components, the restore's component: the facts tied to
	// its own by a pair that could form (see components). From and To are
	// the local times of its earliest and latest fact; Reach is the
	// earliest time a fact outside them could pair with one of them.
	CompFrom, CompTo, CompReach int64
	// Row is the caller's: the warehouse keeps here the row it writes.
	Row []any
}

// Derive derives an instance's restores from its facts. It reads nothing
// but f, so the same facts always give the same restores, whatever the
// order in which they were imported.
func Derive(f *Facts) Instance {
	var out Instance
	// 0. History rows that describe one restore twice (an export without
	// restore_history_id beside one with it, or two renderings of it).
	gone := mergeHistory(f.History)
	// 1. Client output (messages, Agent) that repeats an error-log restore:
	// same database, pages and engine seconds. Restore-DbaDatabase rows
	// are placed by their history row alone (step 2b).
	var logs, clients, dbatools []*Log
	for i := range f.Logs {
		l := &f.Logs[i]
		switch {
		case l.Source.ErrorLog():
			logs = append(logs, l)
		case l.Source == store.SourceDbatools:
			dbatools = append(dbatools, l)
		default:
			clients = append(clients, l)
		}
	}
	merged := map[*Log]*Log{}
	used := map[*Log]bool{}
	for _, c := range clients {
		if !c.Has3014 {
			continue
		}
		for _, l := range logs {
			if used[l] || !l.Has3014 || !strings.EqualFold(l.DB, c.DB) || l.Pages != c.Pages ||
				math.Abs(l.Seconds.Float64-c.Seconds.Float64) > 0.0015 {
				continue
			}
			merged[l] = c
			used[l] = true
			used[c] = true
			break
		}
	}
	var unmatchedLogs []*Log
	for i := range f.Logs {
		l := &f.Logs[i]
		if l.Source != store.SourceDbatools && (!used[l] || merged[l] != nil) {
			unmatchedLogs = append(unmatchedLogs, l)
		}
	}
	// 2. History rows ↔ log restores; 2b. ↔ Restore-DbaDatabase rows.
	var comps *components
	var edge func(int, *Log, bool)
	if f.Components {
		comps = newComponents(f)
		edge = comps.join
	}
	pairs := matchHistory(f.History, gone, unmatchedLogs, f.ReadFrom, f.NewFrom, edge)
	timed, unpaired := pairDbatools(f.History, gone, dbatools)
	if len(unpaired) > 0 {
		out.Untimed = map[store.Source]int{store.SourceDbatools: len(unpaired)}
	}
	// 3. restore_date semantics, measured on pairs with engine seconds.
	var startVotes, endVotes int
	votes := make(map[int]int8, len(pairs))
	for hi, l := range pairs {
		h := &f.History[hi]
		if l == nil || !l.Has3014 || !l.Completed.Valid || l.Seconds.Float64 < 10 {
			continue
		}
		end := l.Completed.Int64
		start := end - int64(l.Seconds.Float64*1000)
		if abs64(h.RestoreLocal-start) < abs64(h.RestoreLocal-end) {
			startVotes++
			votes[hi] = 1
		} else {
			endVotes++
			votes[hi] = -1
		}
	}
	out.Semantics, out.SemanticsN = SemanticsOf(startVotes, endVotes), startVotes+endVotes
	semantics := out.Semantics
	if f.Semantics != "" {
		semantics = f.Semantics
	}
	tl := newTimeline(f)
	// A Derived is large: growing the slice by appending copied each
	// about twice (with the GC's write barriers), a measurable share of a
	// derivation's CPU.
	out.Restores = make([]Derived, 0, len(f.History)+len(unmatchedLogs))
	paired := map[*Log]bool{}
	for hi := range f.History {
		h := &f.History[hi]
		if h.RestoreType == "V" || gone != nil && gone[hi] {
			continue
		}
		l := pairs[hi]
		if l != nil {
			paired[l] = true
		}
		d := build(h, l, merged[l], timed[hi], semantics, tl)
		if d != nil {
			d.Vote = votes[hi]
			comps.place(d, hi, l)
			out.Restores = append(out.Restores, *d)
		}
	}
	for _, l := range unmatchedLogs {
		if paired[l] {
			continue
		}
		d := build(nil, l, merged[l], nil, semantics, tl)
		if d != nil {
			comps.place(d, -1, l)
			out.Restores = append(out.Restores, *d)
			continue
		}
		if out.Untimed == nil {
			out.Untimed = map[store.Source]int{}
		}
		out.Untimed[l.Source]++
	}
	return out
}

// SemanticsOf is what restore_date means given the votes of the restores
// both msdb and the error log saw: "start" or "end" when at least three
// voted and four in five of them agree, else "unknown".
func SemanticsOf(startVotes, endVotes int) string {
	if n := startVotes + endVotes; n >= 3 {
		if float64(startVotes) >= 0.8*float64(n) {
			return "start"
		} else if float64(endVotes) >= 0.8*float64(n) {
			return "end"
		}
	}
	return "unknown"
}

// mergeHistory finds the history rows that repeat another row's restore and
// returns them marked (nil when there are none); the row kept takes the
// facts only the repeat states. A row without restore_history_id (id <= 0,
// see historyKey) repeats a row of the same destination database, restore
// type and backup set (historyIdentity) whose restore_date falls in the same
// second: culture renderings of dbatools' export keep whole seconds, the
// published export and the invariant recipe keep milliseconds. Two rows
// that both carry msdb's restore_history_id are two restores and never
// merge. The row kept is one with a restore_history_id, else one with
// milliseconds, else the first.
func mergeHistory(hist []History) []bool {
	type key struct {
		db, rtype, backup string
		sec               int64
	}
	keyOf := func(h *History) key {
		return key{strings.ToLower(h.DB), h.RestoreType, BackupIdentity(h.FirstLSN, h.LastLSN, h.UUID, h.Devices), FloorDiv(h.RestoreLocal, 1000)}
	}
	seconds := map[int64]bool{}
	for i := range hist {
		if hist[i].HID <= 0 {
			seconds[FloorDiv(hist[i].RestoreLocal, 1000)] = true
		}
	}
	if len(seconds) == 0 {
		return nil // every row has msdb's id: the common case costs one pass
	}
	var gone []bool
	kept := map[key]int{}
	for i := range hist {
		h := &hist[i]
		if !seconds[FloorDiv(h.RestoreLocal, 1000)] {
			continue
		}
		k := keyOf(h)
		j, ok := kept[k]
		if !ok {
			kept[k] = i
			continue
		}
		p := &hist[j]
		if p.HID > 0 && h.HID > 0 {
			continue
		}
		if gone == nil {
			gone = make([]bool, len(hist))
		}
		if h.HID > 0 || p.HID <= 0 && h.RestoreLocal%1000 != 0 && p.RestoreLocal%1000 == 0 {
			h.fill(&p.HistoryFacts)
			gone[j], kept[k] = true, i
		} else {
			p.fill(&h.HistoryFacts)
			gone[i] = true
		}
	}
	return gone
}

// fill sets the facts h leaves out from o, which describes the same restore.
func (h *HistoryFacts) fill(o *HistoryFacts) {
	for _, s := range [...]struct {
		dst *string
		src string
	}{{&h.User, o.User}, {&h.UUID, o.UUID},
		{&h.Family, o.Family}, {&h.SourceServer, o.SourceServer}, {&h.SourceMachine, o.SourceMachine}, {&h.SourceDB, o.SourceDB},
		{&h.BackupType, o.BackupType}, {&h.FirstLSN, o.FirstLSN}, {&h.LastLSN, o.LastLSN}, {&h.KeyAlgorithm, o.KeyAlgorithm}} {
		if *s.dst == "" {
			*s.dst = s.src
		}
	}
	for _, v := range [...]struct{ dst, src *sql.NullInt64 }{{&h.StopAt, &o.StopAt}, {&h.DeviceCount, &o.DeviceCount},
		{&h.BackupStart, &o.BackupStart}, {&h.BackupFinish, &o.BackupFinish}, {&h.BackupSize, &o.BackupSize},
		{&h.Compressed, &o.Compressed}, {&h.Major, &o.Major}, {&h.Minor, &o.Minor}, {&h.Build, &o.Build},
		{&h.MediaFamilies, &o.MediaFamilies}, {&h.DeviceType, &o.DeviceType}} {
		if !v.dst.Valid {
			*v.dst = *v.src
		}
	}
	for _, v := range [...]struct{ dst, src *sql.NullBool }{{&h.Replace, &o.Replace}, {&h.Recovery, &o.Recovery},
		{&h.CopyOnly, &o.CopyOnly}, {&h.Checksums, &o.Checksums}} {
		if !v.dst.Valid {
			*v.dst = *v.src
		}
	}
	if len(h.Devices) == 0 {
		h.Devices = o.Devices
	}
	if len(h.Destinations) == 0 {
		h.Destinations = o.Destinations
	}
}

// pairDbatools pairs Restore-DbaDatabase rows, which carry no time, LSN or
// backup type, with the history rows of their restores: the same
// destination database and the same backup files (as a set), and the same
// kind when dbatools kept the statement (otherwise the row says full, which
// is only a default). A row pairs only when exactly one history row not yet
// paired fits; rows are tried again until no more pair, so the outcome does
// not depend on their order. The rows that fit none, or several, are
// returned unpaired.
func pairDbatools(hist []History, gone []bool, rows []*Log) (map[int]*Log, []*Log) {
	if len(rows) == 0 {
		return nil, nil
	}
	byFiles := map[string][]int{}
	for hi := range hist {
		h := &hist[hi]
		if h.RestoreType == "V" || gone != nil && gone[hi] {
			continue
		}
		k := strings.ToLower(h.DB) + "\x01" + DeviceSetKey(h.Devices)
		byFiles[k] = append(byFiles[k], hi)
	}
	pairs := map[int]*Log{}
	left := rows
	for more := true; more && len(left) > 0; {
		more = false
		var rest []*Log
		for _, x := range left {
			fit, n := -1, 0
			for _, hi := range byFiles[strings.ToLower(x.DB)+"\x01"+DeviceSetKey(x.Devices)] {
				if pairs[hi] != nil {
					continue
				}
				if k, _ := store.KindOfRestoreType(hist[hi].RestoreType); x.Kind != store.KindFull && x.Kind != k {
					continue
				}
				fit, n = hi, n+1
			}
			if n == 1 {
				pairs[fit], more = x, true
			} else {
				rest = append(rest, x)
			}
		}
		left = rest
	}
	return pairs, left
}

// FloorDiv is a / b rounded towards minus infinity: the second or day of
// a local time in Unix milliseconds, before 1970 too.
func FloorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// matchHistory pairs history rows with log restores: same destination
// database and kind, and the same first and last LSN when both sides have
// them; otherwise a completion time close to restore_date. Pairs are chosen
// nearest in time first, one-to-one.
//
// A history row's candidates are found through the logs of its database
// sorted by completion time (only those within reach of its restore_date
// can fit) and, when it has LSNs, the logs with the same LSNs: comparing
// every row with every log of its database cost an instance of 4,000
// restores a database 16 M comparisons. The candidates are the ones that
// comparison found, in the same order (TestMatchHistoryEqualsComparingAll).
// Measured gain: a log-shipping secondary's 21,600 restores pair in 68 ms
// instead of 2.0 s (docs/benchmarks-log.md, "Ten million restores").
//
// edge, when not nil, is called for the candidate pairs, chosen or not,
// that tie the facts of a component together. settled marks a pair chosen
// whatever facts before readFrom exist unread, whose facts had no partner
// before newFrom that is not among those read (settledPairs). A candidate
// between the row of one settled pair and the line of another is never
// chosen, now or before the newest facts came (see settledPairs), and is
// not reported; one with a free end is: that end may have lost its partner
// to the settled pair.
func matchHistory(hist []History, gone []bool, logs []*Log, readFrom, newFrom int64, edge func(hi int, l *Log, settled bool)) map[int]*Log {
	type dbLogs struct {
		all   []*Log              // in the order of logs
		byAt  []int               // positions in all, by completion time
		noLSN []int               // positions in all of logs without both LSNs, by completion time
		byLSN map[[2]string][]int // positions in all by LSNs
		maxS  float64             // the largest engine seconds, at least 3600
	}
	byDB := map[string]*dbLogs{}
	for _, l := range logs {
		if !l.Completed.Valid {
			continue
		}
		k := strings.ToLower(l.DB)
		d := byDB[k]
		if d == nil {
			d = &dbLogs{byLSN: map[[2]string][]int{}, maxS: 3600}
			byDB[k] = d
		}
		i := len(d.all)
		d.all = append(d.all, l)
		d.byAt = append(d.byAt, i)
		if l.FirstLSN != "" && l.LastLSN != "" {
			key := [2]string{l.FirstLSN, l.LastLSN}
			d.byLSN[key] = append(d.byLSN[key], i)
		} else {
			d.noLSN = append(d.noLSN, i)
		}
		if l.Seconds.Valid {
			d.maxS = max(d.maxS, l.Seconds.Float64)
		}
	}
	for _, d := range byDB {
		for _, idx := range [][]int{d.byAt, d.noLSN} {
			sort.SliceStable(idx, func(a, b int) bool { return d.all[idx[a]].Completed.Int64 < d.all[idx[b]].Completed.Int64 })
		}
	}
	// within returns the positions of idx (sorted by completion) whose
	// completion lies in [from, to].
	within := func(d *dbLogs, idx []int, from, to int64) []int {
		lo := sort.Search(len(idx), func(i int) bool { return d.all[idx[i]].Completed.Int64 >= from })
		hi := sort.Search(len(idx), func(i int) bool { return d.all[idx[i]].Completed.Int64 > to })
		return idx[lo:max(lo, hi)]
	}
	var cands []candidate
	var found []int
	for hi := range hist {
		h := &hist[hi]
		hk, ok := store.KindOfRestoreType(h.RestoreType)
		if !ok || hk == store.KindVerify || gone != nil && gone[hi] {
			continue
		}
		d := byDB[strings.ToLower(h.DB)]
		if d == nil {
			continue
		}
		// Every log that can fit: a completion from an hour before
		// restore_date to 72 h (with LSNs) or the log's seconds and 2
		// minutes (without) after it.
		reach := max(int64(72*time.Hour/time.Millisecond), int64(d.maxS*1000)+120_000)
		from, to := h.RestoreLocal-int64(time.Hour/time.Millisecond), h.RestoreLocal+reach
		found = found[:0]
		if h.FirstLSN != "" && h.LastLSN != "" {
			found = append(found, d.byLSN[[2]string{h.FirstLSN, h.LastLSN}]...)
			found = append(found, within(d, d.noLSN, from, to)...)
		} else {
			found = append(found, within(d, d.byAt, from, to)...)
		}
		slices.Sort(found)
		for _, i := range found {
			l := d.all[i]
			if l.Kind != hk && !(l.Kind == store.KindFullOrDiff && (hk == store.KindFull || hk == store.KindDiff)) {
				continue
			}
			diff := l.Completed.Int64 - h.RestoreLocal
			bothLSN := h.FirstLSN != "" && h.LastLSN != "" && l.FirstLSN != "" && l.LastLSN != ""
			if bothLSN {
				if h.FirstLSN != l.FirstLSN || h.LastLSN != l.LastLSN {
					continue
				}
				// restore_date is the start or the end of the statement; the
				// completion line is its end. A day covers a 16 TB restore.
				if diff < -int64(time.Hour/time.Millisecond) || diff > int64(72*time.Hour/time.Millisecond) {
					continue
				}
			} else {
				maxS := 3600.0
				if l.Seconds.Valid {
					maxS = l.Seconds.Float64
				}
				if diff < -120_000 || diff > int64(maxS*1000)+120_000 {
					continue
				}
			}
			cands = append(cands, candidate{hi: hi, l: l, diff: abs64(diff), lsn: bothLSN})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].lsn != cands[j].lsn {
			return cands[i].lsn
		}
		return cands[i].diff < cands[j].diff
	})
	if edge != nil {
		settled := settledPairs(cands, hist, readFrom, newFrom)
		pinnedH, pinnedL := map[int]bool{}, map[*Log]bool{}
		for i := range settled {
			pinnedH[cands[i].hi], pinnedL[cands[i].l] = true, true
		}
		for i, c := range cands {
			switch {
			case settled[i]:
				edge(c.hi, c.l, true)
			case !pinnedH[c.hi] || !pinnedL[c.l]:
				edge(c.hi, c.l, false)
			}
		}
	}
	pairs := map[int]*Log{}
	taken := map[*Log]bool{}
	for _, c := range cands {
		if _, ok := pairs[c.hi]; ok || taken[c.l] {
			continue
		}
		pairs[c.hi] = c.l
		taken[c.l] = true
	}
	return pairs
}

// settledPairs returns the positions of the candidates (in the order pairs
// are chosen) that are chosen whatever facts before readFrom exist. Such a
// pair states the same LSNs on both sides and comes first among every
// candidate of its row and of its line, and no fact before readFrom could
// come before it: a line before readFrom lies more than
// row.RestoreLocal-readFrom from the row, a row before readFrom more than
// line.Completed-readFrom from the line, and pairs without LSNs come after
// every pair with them. Such a pair is chosen by any set of facts that
// holds it, so one of two facts older than newFrom was chosen before the
// newest facts came too, and a candidate between two settled pairs' ends
// was never chosen unless both pairs hold a new fact (then both are in the
// window). A pair with a fact at or after newFrom may have taken its row
// or its line from the partner it had before: it settles only when every
// candidate either could have had was read (their reach, as components
// count it, is not before readFrom), so that the partner it left is
// derived again with it (TestWindowSeesThePartnerASettledPairTook).
// Without this, the same backup restored every day chained a component of
// every day's restores, and a window of one day's facts read back to the
// first of them (docs/benchmarks-log.md "Session 8").
func settledPairs(cands []candidate, hist []History, readFrom, newFrom int64) map[int]bool {
	firstH, firstL := map[int]int{}, map[*Log]int{}
	for i, c := range cands {
		if _, ok := firstH[c.hi]; !ok {
			firstH[c.hi] = i
		}
		if _, ok := firstL[c.l]; !ok {
			firstL[c.l] = i
		}
	}
	settled := map[int]bool{}
	for i, c := range cands {
		if !c.lsn || firstH[c.hi] != i || firstL[c.l] != i {
			continue
		}
		row, line := hist[c.hi].RestoreLocal, c.l.Completed.Int64
		if near := min(row, line); near < readFrom || c.diff >= near-readFrom {
			continue
		}
		if (row >= newFrom || line >= newFrom) && min(row-histReach, line-lineReach(c.l)) < readFrom {
			continue
		}
		settled[i] = true
	}
	return settled
}

// candidate is a pair matchHistory could choose: history row hist[hi] and
// line l, diff apart, both stating LSNs or not.
type candidate struct {
	hi   int
	l    *Log
	diff int64
	lsn  bool
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
