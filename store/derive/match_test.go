package derive

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// matchAll is matchHistory as it was before it searched by time and LSN:
// every history row against every log of its database. The reference the
// faster one must equal.
func matchAll(hist []History, gone []bool, logs []*Log) map[int]*Log {
	type cand struct {
		hi   int
		l    *Log
		diff int64
		lsn  bool
	}
	byDB := map[string][]*Log{}
	for _, l := range logs {
		if l.Completed.Valid {
			k := strings.ToLower(l.DB)
			byDB[k] = append(byDB[k], l)
		}
	}
	var cands []cand
	for hi := range hist {
		h := &hist[hi]
		hk, ok := store.KindOfRestoreType(h.RestoreType)
		if !ok || hk == store.KindVerify || gone != nil && gone[hi] {
			continue
		}
		for _, l := range byDB[strings.ToLower(h.DB)] {
			if l.Kind != hk {
				continue
			}
			diff := l.Completed.Int64 - h.RestoreLocal
			bothLSN := h.FirstLSN != "" && h.LastLSN != "" && l.FirstLSN != "" && l.LastLSN != ""
			if bothLSN {
				if h.FirstLSN != l.FirstLSN || h.LastLSN != l.LastLSN {
					continue
				}
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
			cands = append(cands, cand{hi: hi, l: l, diff: abs64(diff), lsn: bothLSN})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].lsn != cands[j].lsn {
			return cands[i].lsn
		}
		return cands[i].diff < cands[j].diff
	})
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

// matchFacts makes n restores of a few databases over days: rows and logs
// with and without LSNs, repeated backups (rival candidates), ties in time,
// long restores, rows with no log and logs with no row.
func matchFacts(rng *rand.Rand, n int) ([]History, []bool, []*Log) {
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	var hist []History
	var logs []*Log
	for i := range n {
		db := fmt.Sprintf("db%d", rng.IntN(3))
		if rng.IntN(5) == 0 {
			db = strings.ToUpper(db)
		}
		kind, rtype := store.KindLog, "L"
		if rng.IntN(3) == 0 {
			kind, rtype = store.KindFull, "D"
		}
		lsn := rng.IntN(n/2 + 1) // repeats: the same backup restored again
		first, last := fmt.Sprint(lsn*100), fmt.Sprint(lsn*100+99)
		rd := base + int64(rng.IntN(n))*600_000 // ties: several at one time
		secs := float64(1 + rng.IntN(7200))
		if rng.IntN(50) == 0 {
			secs = float64(rng.IntN(400_000))
		}
		if rng.IntN(8) > 0 {
			h := History{ID: int64(i + 1), RestoreLocal: rd, HistoryFacts: HistoryFacts{DB: db, RestoreType: rtype}}
			if rng.IntN(4) > 0 {
				h.FirstLSN, h.LastLSN = first, last
			}
			hist = append(hist, h)
		}
		if rng.IntN(8) > 0 {
			l := &Log{ID: int64(i + 1), Source: store.SourceErrorLog, DB: db, Kind: kind}
			l.Completed.Int64, l.Completed.Valid = rd+int64(secs*1000)+int64(rng.IntN(300_000))-150_000, rng.IntN(30) > 0
			if rng.IntN(4) > 0 {
				l.FirstLSN, l.LastLSN = first, last
			}
			l.Seconds.Float64, l.Seconds.Valid = secs, rng.IntN(6) > 0
			logs = append(logs, l)
		}
	}
	rng.Shuffle(len(logs), func(i, j int) { logs[i], logs[j] = logs[j], logs[i] })
	gone := make([]bool, len(hist))
	for i := range gone {
		gone[i] = rng.IntN(40) == 0
	}
	return hist, gone, logs
}

func TestMatchHistoryEqualsComparingAll(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		hist, gone, logs := matchFacts(rng, 10+rng.IntN(300))
		got, want := matchHistory(hist, gone, logs, 0, 0, nil), matchAll(hist, gone, logs)
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d pairs, want %d", seed, len(got), len(want))
		}
		for hi, l := range want {
			if got[hi] != l {
				t.Fatalf("seed %d: history row %d paired with %v, want %v", seed, hi, got[hi], l)
			}
		}
	}
}

// BenchmarkMatchHistory: one log-shipped instance's 90 days, 5 databases
// with a log every 30 minutes (21,600 restores).
func BenchmarkMatchHistory(b *testing.B) {
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	var hist []History
	var logs []*Log
	for db := range 5 {
		for k := range 90 * 48 {
			rd := base + int64(k)*1_800_000
			lsn := fmt.Sprint(db*1_000_000 + k)
			hist = append(hist, History{ID: int64(len(hist) + 1), RestoreLocal: rd, HistoryFacts: HistoryFacts{
				DB: fmt.Sprint("db", db), RestoreType: "L", FirstLSN: lsn, LastLSN: lsn + "9"}})
			l := &Log{ID: int64(len(logs) + 1), Source: store.SourceErrorLog, DB: fmt.Sprint("db", db), Kind: store.KindLog,
				FirstLSN: lsn, LastLSN: lsn + "9"}
			l.Completed.Int64, l.Completed.Valid = rd+20_000, true
			l.Seconds.Float64, l.Seconds.Valid = 20, true
			logs = append(logs, l)
		}
	}
	for _, m := range []struct {
		name string
		f    func([]History, []bool, []*Log) map[int]*Log
	}{{"indexed", func(h []History, g []bool, l []*Log) map[int]*Log { return matchHistory(h, g, l, 0, 0, nil) }}, {"all", matchAll}} {
		b.Run(m.name, func(b *testing.B) {
			for b.Loop() {
				if p := m.f(hist, nil, logs); len(p) != len(hist) {
					b.Fatalf("%d pairs, want %d", len(p), len(hist))
				}
			}
		})
	}
}
