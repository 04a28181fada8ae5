package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchWarehouse fills a new warehouse with n restores on 2,000 instances
// straight in SQL (reconciliation would take minutes): a fifth of them log
// restores, a third without a duration, a quarter without a throughput,
// builds, databases and source servers as a fleet has them, times not in
// id order.
func benchWarehouse(b testing.TB, n int) *DB {
	b.Helper()
	ctx := context.Background()
	// RW_ORDERS_BENCH_DB keeps a copy of the warehouse to start from the
	// next time (and for BenchmarkRestoreOrders' RW_BENCH_DB).
	keep := os.Getenv("RW_ORDERS_BENCH_DB")
	path := filepath.Join(b.TempDir(), "w.db")
	if keep != "" {
		if _, err := os.Stat(keep); err == nil {
			db, err := Open(ctx, keep)
			if err != nil {
				b.Fatal(err)
			}
			if err := db.Backup(ctx, path); err != nil {
				b.Fatal(err)
			}
			db.Close()
			db, err = Open(ctx, path)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			return db
		}
	}
	db, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if keep != "" {
		defer func() {
			if err := db.Backup(ctx, keep); err != nil {
				b.Fatal(err)
			}
		}()
	}
	if err := db.dropIndexes(ctx); err != nil {
		b.Fatal(err)
	}
	for _, q := range []string{
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO instance (id, name, created_at) SELECT i, 'SQL' || i, 0 FROM n WHERE i <= 2000`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO restore (id, instance_id, natural_key, content_hash, database_name, kind, at_utc, duration_s,
			duration_source, logical_mibps, instance_build, source_server, sources)
		SELECT i, i % 2000 + 1, i, 0, 'DB' || (i * 7 % 3000), CASE WHEN i % 5 = 0 THEN 'log' WHEN i % 7 = 0 THEN 'diff' ELSE 'full' END,
			1735689600000 + i * 30000 + (i * 7919 % 86400) * 1000, CASE WHEN i % 3 = 0 THEN NULL ELSE i * 37 % 3600 + 1 END, '',
			CASE WHEN i % 4 = 0 THEN NULL ELSE (i * 53 % 5000) / 10.0 END, '15.0.' || (4000 + i % 2000 % 40),
			CASE WHEN i % 2 = 0 THEN NULL ELSE 'SRC' || (i % 300) END, 'history' FROM n`,
	} {
		if _, err := db.write.ExecContext(ctx, q, n); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.restoreIndexes(ctx); err != nil {
		b.Fatal(err)
	}
	return db
}

// benchChanges changes the warehouse as a day's import of its fleet does,
// in one transaction logged as reconciliation logs it: added new restores
// (a day later), updated restores among the newest tenth (their
// time, duration and throughput re-derived) or, spread, among them all,
// and deleted ones among the newest tenth.
func benchChanges(b testing.TB, db *DB, n, added, updated, deleted int, spread bool) {
	b.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	var upserted, gone []int64
	day := int64(1735689600000) + int64(n)*30000 + 86400000
	for i := range added {
		k := int64(n + 1 + i)
		if _, err := tx.ExecContext(ctx, `INSERT INTO restore (instance_id, natural_key, content_hash, database_name, kind,
			at_utc, duration_s, duration_source, logical_mibps, instance_build, source_server, sources)
			VALUES (?, ?, 0, ?, 'log', ?, ?, '', ?, '15.0.4001', NULL, 'history')`, k%2000+1, k, fmt.Sprint("DB", k%3000),
			day+int64(rng.IntN(86400000)), rng.IntN(600)+1, float64(rng.IntN(500))); err != nil {
			b.Fatal(err)
		}
		upserted = append(upserted, k)
	}
	pick := func() int64 {
		if spread {
			return int64(1 + rng.IntN(n))
		}
		return int64(n - rng.IntN(n/10))
	}
	for range updated {
		k := pick()
		if _, err := tx.ExecContext(ctx, `UPDATE restore SET at_utc = at_utc + ?, duration_s = ?, logical_mibps = ?
			WHERE natural_key = ?`, rng.IntN(600000), rng.IntN(3600)+1, float64(rng.IntN(5000))/10, k); err != nil {
			b.Fatal(err)
		}
		upserted = append(upserted, k)
	}
	for range deleted {
		k := int64(n - rng.IntN(n/10))
		var id int64
		if err := tx.QueryRowContext(ctx, `DELETE FROM restore WHERE natural_key = ? RETURNING id`, k).Scan(&id); err == nil {
			gone = append(gone, id)
		}
	}
	if err := recordRestoreChanges(ctx, tx, upserted, gone); err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkOrdersUpdate measures an update of the fleet orders of 1 M
// restores after ~30,000 changed restores (a day of a large fleet: 24,000
// new, 5,000 re-derived, 1,000 deleted) against a rebuild, and what the
// change log costs the reconciliation transaction that writes it:
//
//	go test -run '^$' -bench OrdersUpdate -benchtime 5x ./store/
func BenchmarkOrdersUpdate(b *testing.B) {
	const n = 1000000
	ctx := context.Background()
	start := time.Now()
	db := benchWarehouse(b, n)
	b.Logf("warehouse of %d restores built in %v", n, time.Since(start).Round(time.Millisecond))
	old, err := db.RestoreOrders(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("rebuild", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := db.RestoreOrders(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("log-30000", func(b *testing.B) {
		keys := make([]int64, 30000)
		for i := range keys {
			keys[i] = int64(i + 1)
		}
		for b.Loop() {
			tx, err := db.write.BeginTx(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := recordRestoreChanges(ctx, tx, keys, nil); err != nil {
				b.Fatal(err)
			}
			tx.Rollback()
		}
	})
	benchChanges(b, db, n, 24000, 5000, 1000, false)
	b.Run("update-30000-recent", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			// old never changes: every round makes the same update.
			if o, err := db.updateOrders(ctx, old); err != nil || o == nil {
				b.Fatalf("%v, rebuilt: %v", err, o == nil)
			}
		}
	})
	mid, err := db.RestoreOrders(ctx)
	if err != nil {
		b.Fatal(err)
	}
	benchChanges(b, db, n+24000, 0, 5000, 0, true)
	b.Run("update-5000-spread", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if o, err := db.updateOrders(ctx, mid); err != nil || o == nil {
				b.Fatalf("%v, rebuilt: %v", err, o == nil)
			}
		}
	})
	// The result is right, too.
	updateEqualsRebuild(b, db, old)
}
