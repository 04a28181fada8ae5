package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/restorewatch/restorewatch/store"
)

// The scan behind LoadSeries: ranges of instances read from the covering
// restore_scan index on one connection per core, points grouped per series
// and merged in time order.

// scanSeries reads restore_scan, which carries every column seriesScan
// needs (migration 0010), in ranges of instance ids (those want spans, or
// every instance's when want is nil), one worker and
// connection per core; sixteen ranges per worker, so that the workers finish
// together even when other work on the machine slows one of them. The index
// is a tenth of the table's size, and reading it alone was a sizeable part
// of a large analysis (docs/benchmarks-log.md, "Analysis").
func (db *DB) scanSeries(ctx context.Context, want map[int64]bool) ([]*seriesGroup, error) {
	var lo, hi sql.NullInt64
	if want != nil {
		// Only the range the wanted instances span.
		if len(want) == 0 {
			return nil, nil
		}
		l, h := idRange(want)
		lo, hi = sql.NullInt64{Int64: l, Valid: true}, sql.NullInt64{Int64: h, Valid: true}
	} else if err := db.read.QueryRowContext(ctx, `SELECT min(id), max(id) FROM instance`).Scan(&lo, &hi); err != nil {
		return nil, err
	}
	if !lo.Valid {
		return nil, nil
	}
	workers := min(runtime.GOMAXPROCS(0), 4)
	ranges := int64(16 * workers)
	step := (hi.Int64 - lo.Int64 + ranges) / ranges
	var next atomic.Int64
	parts := make([]*seriesGroup, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		parts[w] = &seriesGroup{}
		wg.Go(func() {
			errs[w] = db.bulkRead(ctx, scanCacheKiB, func(c *sql.Conn) error {
				for k := next.Add(1) - 1; k < ranges; k = next.Add(1) - 1 {
					from := lo.Int64 + k*step
					if err := parts[w].read(ctx, c, seriesScan+` INDEXED BY restore_scan WHERE instance_id >= ? AND instance_id < ?`, []any{from, from + step}, want); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return parts, nil
}

type seriesKey struct {
	instanceID     int64
	database, kind string
}

// seriesAcc is what a read knows of one series besides its points.
type seriesAcc struct {
	n     int
	last  store.SeriesPoint // the latest point
	build store.SeriesPoint // the latest point with a known build; RestoreID 0 = none
}

func later(a, b store.SeriesPoint) bool {
	return a.AtMs > b.AtMs || (a.AtMs == b.AtMs && a.RestoreID > b.RestoreID)
}

func (a *seriesAcc) add(p store.SeriesPoint, withBuild bool) {
	if a.n == 0 || later(p, a.last) {
		a.last = p
	}
	if withBuild && (a.build.RestoreID == 0 || later(p, a.build)) {
		a.build = p
	}
	a.n++
}

// pointBlock is the size of the blocks a read appends points to: growing one
// slice of a million points would copy and clear it again and again.
const pointBlock = 1 << 16

// seriesGroup is what one worker read: points in the order read, each with
// the index of its series.
type seriesGroup struct {
	index  map[seriesKey]int32
	keys   []seriesKey
	accs   []seriesAcc
	points [][]store.SeriesPoint // blocks of pointBlock
	series [][]int32             // series index of each point, same blocks
	text   map[string]string
}

func (g *seriesGroup) intern(s string) string {
	if t, ok := g.text[s]; ok {
		return t
	}
	g.text[s] = s
	return s
}

// read adds the rows of q (seriesScan and a condition) to g. It goes to the
// driver directly: database/sql's Scan, converting and locking per value,
// was a tenth of a scan.
func (g *seriesGroup) read(ctx context.Context, c *sql.Conn, q string, args []any, want map[int64]bool) error {
	if g.index == nil {
		g.index, g.text = map[seriesKey]int32{}, map[string]string{}
	}
	named := make([]driver.NamedValue, len(args))
	for i, a := range args {
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return c.Raw(func(dc any) error {
		qc, ok := dc.(driver.QueryerContext)
		if !ok {
			return fmt.Errorf("the sqlite driver cannot query without a statement")
		}
		rows, err := qc.QueryContext(ctx, q, named)
		if err != nil {
			return err
		}
		defer rows.Close()
		dest := make([]driver.Value, 8)
		cur := int32(-1)
		for {
			if err := rows.Next(dest); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
			packed, okP := dest[0].(int64)
			dbn, okD := dest[1].(string)
			id, okI := dest[3].(int64)
			at, okA := dest[4].(int64)
			kind, okK := string(kinds[packed>>6&7]), true
			if kind == "" {
				kind, okK = dest[2].(string)
			}
			if !okP || !okD || !okK || !okI || !okA {
				return fmt.Errorf("unexpected row %v", dest)
			}
			iid := packed >> 9
			if want != nil && !want[iid] {
				continue
			}
			p := store.SeriesPoint{RestoreID: id, AtMs: at, DurationS: float(dest[5]), Bytes: integer(dest[6]), MiBps: float(dest[7]),
				Cond: store.Conditions(packed & (hasBuild - 1))}
			// Rows of one series often come together; skip the map then.
			if cur < 0 || g.keys[cur].instanceID != iid || g.keys[cur].database != dbn || g.keys[cur].kind != kind {
				k := seriesKey{iid, g.intern(dbn), g.intern(kind)}
				i, ok := g.index[k]
				if !ok {
					i = int32(len(g.keys))
					g.index[k] = i
					g.keys, g.accs = append(g.keys, k), append(g.accs, seriesAcc{})
				}
				cur = i
			}
			g.accs[cur].add(p, packed&hasBuild != 0)
			if n := len(g.points); n == 0 || len(g.points[n-1]) == pointBlock {
				g.points = append(g.points, make([]store.SeriesPoint, 0, pointBlock))
				g.series = append(g.series, make([]int32, 0, pointBlock))
			}
			n := len(g.points) - 1
			g.points[n], g.series[n] = append(g.points[n], p), append(g.series[n], cur)
		}
	})
}

// float and integer read a number SQLite returned as either type (a REAL
// column's COALESCE with 0 is an integer when the value is NULL).
func float(v driver.Value) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	}
	return 0
}

func integer(v driver.Value) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return 0
}

// mergeSeries joins the groups of several reads into series in order, and
// returns for series i the restore ids of its latest point (latest[2i]) and
// of its latest point with a known build (latest[2i+1], 0 = none). The
// series get their points, in one block, when place is called.
func mergeSeries(parts []*seriesGroup) (out []store.SeriesRestores, latest []int64, place func()) {
	all := map[seriesKey]*seriesAcc{}
	for _, g := range parts {
		for i, k := range g.keys {
			a := &g.accs[i]
			b := all[k]
			if b == nil {
				c := *a
				all[k] = &c
				continue
			}
			if later(a.last, b.last) {
				b.last = a.last
			}
			if a.build.RestoreID != 0 && (b.build.RestoreID == 0 || later(a.build, b.build)) {
				b.build = a.build
			}
			b.n += a.n
		}
	}
	keys := slices.SortedFunc(maps.Keys(all), func(x, y seriesKey) int {
		if c := cmp.Compare(x.instanceID, y.instanceID); c != 0 {
			return c
		}
		if c := cmp.Compare(x.database, y.database); c != 0 {
			return c
		}
		return cmp.Compare(x.kind, y.kind)
	})
	out = make([]store.SeriesRestores, len(keys))
	latest = make([]int64, 2*len(keys))
	pos := map[seriesKey]int{}
	total := 0
	for i, k := range keys {
		a := all[k]
		out[i] = store.SeriesRestores{InstanceID: k.instanceID, Database: k.database, Kind: store.Kind(k.kind)}
		latest[2*i], latest[2*i+1] = a.last.RestoreID, a.build.RestoreID
		pos[k] = total
		total += a.n
	}
	place = func() {
		points := make([]store.SeriesPoint, total)
		var wg sync.WaitGroup
		for _, g := range parts {
			at := make([]int, len(g.keys)) // where g's next point of each series goes
			for i, k := range g.keys {
				at[i] = pos[k]
				pos[k] += g.accs[i].n
			}
			wg.Go(func() { // the groups fill disjoint places
				for b, block := range g.points {
					for j, p := range block {
						s := g.series[b][j]
						points[at[s]] = p
						at[s]++
					}
					g.points[b], g.series[b] = nil, nil // let the block go
				}
			})
		}
		wg.Wait()
		byTime := func(x, y store.SeriesPoint) int {
			if c := cmp.Compare(x.AtMs, y.AtMs); c != 0 {
				return c
			}
			return cmp.Compare(x.RestoreID, y.RestoreID)
		}
		start := 0
		for i, k := range keys {
			n := all[k].n
			ps := points[start : start+n : start+n]
			start += n
			if !slices.IsSortedFunc(ps, byTime) {
				slices.SortFunc(ps, byTime)
			}
			out[i].Points = ps
		}
	}
	return out, latest, place
}
