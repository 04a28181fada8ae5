package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/restorewatch/restorewatch/store"
)

// hasBuild marks, in the scan only, a restore whose instance build is known.
const hasBuild = 1 << 5

// seriesScan reads what SeriesPoint holds, packed into as few values as
// SQLite can hand over cheaply: each value fetched costs a trip through the
// driver (two calls into SQLite, each taking the connection's mutex, and
// often an allocation), which made a read of a million restores cost
// seconds. The conditions, whether the build is known and the kind (by its
// place in kinds; the kind's text comes only for a kind not listed there)
// ride in the low bits of the instance id; the family and the build are read
// afterwards, for the one restore per series that needs them.
var seriesScan = `SELECT (instance_id << 9) | (` + kindCode + ` << 6) | (COALESCE(compressed,0) <> 0)
	| ((COALESCE(encrypted,0) <> 0) << 1) | ((io_alignment IS 4096) << 2) | ((device_kind IS '` + store.DeviceVirtual + `') << 3)
	| ((COALESCE(stripes,0) > 1) << 4) | ((COALESCE(instance_build,'') <> '') << 5),
	database_name, CASE ` + kindCode + ` WHEN 0 THEN kind END, id, at_utc, COALESCE(duration_s,0),
	COALESCE(backup_bytes, pages*8192, 0), COALESCE(logical_mibps,0)
	FROM restore`

// kinds are the kinds seriesScan codes as 1 to 7.
var kinds = [8]store.Kind{"", store.KindFull, store.KindDiff, store.KindLog, store.KindFile, store.KindPage, store.KindVerify, store.KindRevert}

var kindCode = func() string {
	var b strings.Builder
	b.WriteString("CASE kind")
	for i, k := range kinds[1:] {
		fmt.Fprintf(&b, " WHEN '%s' THEN %d", k, i+1)
	}
	b.WriteString(" ELSE 0 END")
	return b.String()
}()

// LoadSeries reads every series of the given instances (all when ids is
// nil), ordered by instance id, database and kind, each with its points in
// time order.
//
// A read of many instances scans the covering restore_scan index (no table
// look-ups), over one read connection per core, instance ranges apart,
// and groups the points in memory. Each range is its own read transaction,
// so a reconciliation committed mid-read can show in some ranges only; the
// next analysis of that instance (every import runs one) sees it whole. A
// read of a few instances seeks the same index per instance.
func (db *DB) LoadSeries(ctx context.Context, ids []int64) ([]store.SeriesRestores, error) {
	if ids != nil && len(ids) == 0 {
		return nil, nil
	}
	names, err := db.instanceNames(ctx)
	if err != nil {
		return nil, err
	}
	var want map[int64]bool
	if ids != nil {
		want = make(map[int64]bool, len(ids))
		for _, id := range ids {
			want[id] = true
		}
	}
	var parts []*seriesGroup
	if ids == nil || 3*len(want) >= spanned(names, want) {
		parts, err = db.scanSeries(ctx, want)
	} else {
		g := &seriesGroup{}
		args := make([]any, 0, len(want))
		for id := range want {
			args = append(args, id)
		}
		err = db.bulkRead(ctx, lookupCacheKiB, func(c *sql.Conn) error {
			return g.read(ctx, c, seriesScan+` INDEXED BY restore_scan WHERE instance_id IN (`+
				strings.TrimSuffix(strings.Repeat("?,", len(args)), ",")+`)`, args, nil)
		})
		parts = []*seriesGroup{g}
	}
	if err != nil {
		return nil, fmt.Errorf("store: load series: %w", err)
	}
	out, latest, place := mergeSeries(parts)
	// The family and build look-ups go on while the points are placed.
	var text map[int64]familyBuild
	var wg sync.WaitGroup
	wg.Go(func() { text, err = db.familyBuild(ctx, latest) })
	place()
	wg.Wait()
	if err != nil {
		return nil, fmt.Errorf("store: load series: %w", err)
	}
	for i := range out {
		s := &out[i]
		s.Instance = names[s.InstanceID]
		s.Family = text[latest[2*i]].family
		if b := latest[2*i+1]; b != 0 {
			s.Build = text[b].build
		}
	}
	return out, nil
}

type familyBuild struct{ family, build string }

// familyBuild reads the family and instance build of the given restores.
func (db *DB) familyBuild(ctx context.Context, ids []int64) (map[int64]familyBuild, error) {
	out := make(map[int64]familyBuild, len(ids))
	text := map[string]string{}
	intern := func(s string) string {
		if t, ok := text[s]; ok {
			return t
		}
		text[s] = s
		return s
	}
	err := db.eachRestore(ctx, ids, `SELECT r.id, COALESCE(r.family,''), COALESCE(r.instance_build,'')`,
		func(rows *sql.Rows) error {
			var id int64
			var f, b string
			if err := rows.Scan(&id, &f, &b); err != nil {
				return err
			}
			out[id] = familyBuild{intern(f), intern(b)}
			return nil
		})
	return out, err
}

// eachRestore runs q (a SELECT of columns of restore r, without FROM) over
// the restores with the given ids, in batches, calling fn for each row. The
// ids drive the loop (CROSS JOIN fixes the order), so each is one rowid
// look-up whatever the planner guesses of the list's length.
func (db *DB) eachRestore(ctx context.Context, ids []int64, q string, fn func(*sql.Rows) error) error {
	if len(ids) == 0 {
		return nil
	}
	return db.bulkRead(ctx, lookupCacheKiB, func(c *sql.Conn) error {
		const batch = 20000
		var b []byte
		for len(ids) > 0 {
			n := min(len(ids), batch)
			b = append(b[:0], '[')
			for i, id := range ids[:n] {
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, id, 10)
			}
			b = append(b, ']')
			ids = ids[n:]
			rows, err := c.QueryContext(ctx, q+` FROM json_each(?) j CROSS JOIN restore r ON r.id = j.value`, string(b))
			if err != nil {
				return err
			}
			for rows.Next() {
				if err := fn(rows); err != nil {
					rows.Close()
					return err
				}
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// Page caches of bulkRead: a scan visits each page once and wants only the
// path from the root; look-ups by rowid want the interior pages of the
// restore table kept (about 300 per million restores).
const (
	scanCacheKiB   = 1024
	lookupCacheKiB = 8192
)

// bulkRead runs fn on a connection of the read pool with memory-mapping
// turned off and a page cache of cacheKiB. A read that sweeps the warehouse
// through the map makes every page it touches, and the kernel's read-around
// neighbours from other tables, count in the process's resident memory, up
// to the map's 1 GiB; read through a small page cache instead, a scan of the
// restore table costs about the same CPU (less than through the pool's
// 32 MiB cache, whose fresh pages each cost a fault) and keeps to the cache.
func (db *DB) bulkRead(ctx context.Context, cacheKiB int, fn func(*sql.Conn) error) error {
	c, err := db.read.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	var mmap, cache int64
	if err := c.QueryRowContext(ctx, `PRAGMA mmap_size`).Scan(&mmap); err != nil {
		return err
	}
	if err := c.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&cache); err != nil {
		return err
	}
	defer func() {
		// The pool keeps the connection: give it back as it was, or drop it.
		bg := context.WithoutCancel(ctx)
		if _, err := c.ExecContext(bg, fmt.Sprintf(`PRAGMA mmap_size = %d`, mmap)); err != nil {
			_ = c.Raw(func(any) error { return driver.ErrBadConn })
		} else if _, err := c.ExecContext(bg, fmt.Sprintf(`PRAGMA cache_size = %d`, cache)); err != nil {
			_ = c.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	if _, err := c.ExecContext(ctx, `PRAGMA mmap_size = 0`); err != nil {
		return err
	}
	if _, err := c.ExecContext(ctx, fmt.Sprintf(`PRAGMA cache_size = %d`, -cacheKiB)); err != nil {
		return err
	}
	return fn(c)
}

// spanned counts the instances whose ids lie between the least and the
// greatest of want: what a scan of restore_scan over want's id range reads.
func spanned(names map[int64]string, want map[int64]bool) int {
	lo, hi := idRange(want)
	n := 0
	for id := range names {
		if id >= lo && id <= hi {
			n++
		}
	}
	return n
}

// idRange returns the least and the greatest id of want.
func idRange(want map[int64]bool) (lo, hi int64) {
	first := true
	for id := range want {
		if first || id < lo {
			lo = id
		}
		if first || id > hi {
			hi = id
		}
		first = false
	}
	return lo, hi
}

func (db *DB) instanceNames(ctx context.Context) (map[int64]string, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, name FROM instance`)
	if err != nil {
		return nil, fmt.Errorf("store: instance names: %w", err)
	}
	defer rows.Close()
	names := map[int64]string{}
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, fmt.Errorf("store: instance names: %w", err)
		}
		names[id] = name
	}
	return names, rows.Err()
}
