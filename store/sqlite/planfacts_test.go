package sqlite

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// A plan's fleet rates are the newest measured restores of each kind on the
// other instances, by time then id, whatever window the query reads them
// through: compared with every restore ranked in Go, on a fleet whose
// restores are mostly years old (so windows widen several times), with
// restores that share a time and restores without a throughput.
func TestRestoreRatesAreTheFleetsNewest(t *testing.T) {
	db := openTestDB(t)
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(7, 16))
	type row struct {
		id       int64
		instance string
		kind     store.Kind
		at       int64
		mibps    float64 // 0: not measured
	}
	var rows []row
	const instances = 12
	for i := 1; i <= instances; i++ {
		if _, err := db.write.ExecContext(ctx, `INSERT INTO instance (id, name, created_at) VALUES (?, ?, 0)`,
			i, fmt.Sprintf("SQL%02d", i)); err != nil {
			t.Fatal(err)
		}
	}
	newest := time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for id := int64(1); id <= 3000; id++ {
		r := row{id: id, instance: fmt.Sprintf("SQL%02d", 1+rng.IntN(instances)),
			kind: []store.Kind{store.KindFull, store.KindDiff, store.KindLog, store.KindVerify}[rng.IntN(4)]}
		switch x := rng.IntN(100); {
		case x < 3: // the last day
			r.at = newest - rng.Int64N(dayMS)
		case x < 10: // the last month
			r.at = newest - rng.Int64N(30*dayMS)
		default: // years back, on the month: times repeat, ties at every rank
			r.at = newest - 2*365*dayMS - rng.Int64N(36)*30*dayMS
		}
		if rng.IntN(5) > 0 {
			r.mibps = 1 + float64(rng.IntN(500))
		}
		rows = append(rows, r)
		var mibps any
		if r.mibps > 0 {
			mibps = r.mibps
		}
		var inst int
		fmt.Sscanf(r.instance, "SQL%d", &inst)
		if _, err := db.write.ExecContext(ctx, `INSERT INTO restore (id, instance_id, natural_key, content_hash,
			database_name, kind, at_utc, duration_source, logical_mibps, sources) VALUES (?, ?, ?, 0, 'D', ?, ?, '', ?, '[]')`,
			r.id, inst, r.id, string(r.kind), r.at, mibps); err != nil {
			t.Fatal(err)
		}
	}
	type got struct {
		instance string
		kind     store.Kind
		at       int64
		mibps    float64
	}
	norm := func(rs []got) []got {
		slices.SortFunc(rs, func(a, b got) int {
			return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.instance, b.instance), cmp.Compare(a.kind, b.kind),
				cmp.Compare(a.mibps, b.mibps))
		})
		return rs
	}
	for _, perKind := range []int{1, 5, 40, 100, 200, 5000} {
		for _, target := range []string{"SQL03", "NEW-SQL99"} {
			rates, err := db.RestoreRates(ctx, target, true, perKind)
			if err != nil {
				t.Fatal(err)
			}
			var have []got
			for _, r := range rates {
				have = append(have, got{r.Instance, r.Kind, r.At.UnixMilli(), r.LogicalMiBps})
			}
			byTime := slices.Clone(rows)
			slices.SortFunc(byTime, func(a, b row) int { return cmp.Or(cmp.Compare(b.at, a.at), cmp.Compare(b.id, a.id)) })
			var want []got
			taken := map[store.Kind]int{}
			for _, r := range byTime {
				if r.mibps == 0 || (r.kind != store.KindFull && r.kind != store.KindDiff && r.kind != store.KindLog) {
					continue
				}
				if r.instance == target {
					want = append(want, got{r.instance, r.kind, r.at, r.mibps}) // all of its own
					continue
				}
				if taken[r.kind] < perKind {
					taken[r.kind]++
					want = append(want, got{r.instance, r.kind, r.at, r.mibps})
				}
			}
			have, want = norm(have), norm(want)
			if !slices.Equal(have, want) {
				t.Errorf("%s, %d a kind: %d rates, want %d (first difference at %d)", target, perKind, len(have), len(want),
					firstDifference(have, want))
			}
			if !slices.IsSortedFunc(rates, func(a, b store.RestoreRate) int { return a.At.Compare(b.At) }) {
				t.Errorf("%s, %d a kind: rates not oldest first", target, perKind)
			}
		}
	}
	// A warehouse without restores has no rates, and says so without error.
	empty := openTestDB(t)
	if rates, err := empty.RestoreRates(ctx, "SQL01", true, 10); err != nil || len(rates) != 0 {
		t.Errorf("empty warehouse: %d rates, %v", len(rates), err)
	}
}

func firstDifference[T comparable](a, b []T) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
