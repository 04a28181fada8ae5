package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// Copies taken, slowly, while a writer commits and the checkpointer copies
// the log into the file each open to a committed state: SQLite's integrity
// check passes, every transaction's pair of rows is there whole or not at
// all, and a copy holds at least what was committed before it began. (The
// race the read transaction closes, a log restarted between the two files'
// copies, did not show here without it either: 80 copies in two runs.)
func TestCopyFilesWhileWriting(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	db, err := Open(ctx, filepath.Join(dir, "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE copy_probe (id INTEGER PRIMARY KEY, pair INTEGER NOT NULL,
		gen INTEGER NOT NULL, pad TEXT NOT NULL); CREATE INDEX copy_probe_pair ON copy_probe (pair)`); err != nil {
		t.Fatal(err)
	}
	// Slow copies: 16 KB at a time, the writer committing between chunks.
	copyChunk, copyPause = 16<<10, func() { time.Sleep(100 * time.Microsecond) }
	t.Cleanup(func() { copyChunk, copyPause = 256<<20, func() {} })
	// Each transaction replaces one of 1,000 pairs of 2 KB rows by a new
	// generation: pages change all over a file that stops growing, and the
	// checkpointer copies them back from the log while the copies run.
	const pairs = 1000
	var committed atomic.Int64
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- func() error {
			for gen := int64(1); wctx.Err() == nil; gen++ {
				tx, err := db.write.BeginTx(ctx, nil)
				if err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, `DELETE FROM copy_probe WHERE pair = ?`, gen%pairs); err != nil {
					tx.Rollback()
					return err
				}
				for range 2 {
					if _, err := tx.ExecContext(ctx, `INSERT INTO copy_probe (pair, gen, pad) VALUES (?, ?, printf('%2000d', ?))`,
						gen%pairs, gen, gen); err != nil {
						tx.Rollback()
						return err
					}
				}
				if err := tx.Commit(); err != nil {
					return err
				}
				committed.Store(gen)
				time.Sleep(200 * time.Microsecond) // a writer, not a flood: the log stays small
			}
			return nil
		}()
	}()
	copies := 8
	if testing.Short() {
		copies = 2 // each slowed copy takes seconds on 2 busy cores: the short tier keeps two
	}
	for i := range copies {
		time.Sleep(50 * time.Millisecond)
		before := committed.Load()
		dst := filepath.Join(dir, fmt.Sprintf("copy%d.db", i))
		if err := CopyFiles(ctx, db.path, dst); err != nil {
			stop()
			t.Fatal(err)
		}
		c, err := sql.Open("sqlite", "file:"+dst)
		if err != nil {
			t.Fatal(err)
		}
		var check string
		var torn, last int64
		if err := c.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
			t.Errorf("copy %d: integrity %q, %v", i, check, err)
		}
		if err := c.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM (SELECT pair FROM copy_probe GROUP BY pair
			HAVING count(*) <> 2 OR min(gen) <> max(gen))), coalesce((SELECT max(gen) FROM copy_probe), 0)`).Scan(&torn, &last); err != nil {
			t.Errorf("copy %d: %v", i, err)
		}
		c.Close()
		if torn != 0 || last < before {
			t.Errorf("copy %d: %d pairs torn, generations up to %d; %d were committed before the copy", i, torn, last, before)
		}
		t.Logf("copy %d: generations up to %d (%d committed before it)", i, last, before)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// A warehouse that is not there is not found, in words.
	if err := CopyFiles(ctx, filepath.Join(dir, "none.db"), filepath.Join(dir, "x.db")); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("missing warehouse: %v", err)
	}
}
