package sqlite

import (
	"context"
	"os"
	"testing"
	"time"
)

// The writer leaves checkpoints to the checkpointer: the WAL's pages reach
// the database file while the warehouse stays open, without the writer
// copying them.
func TestCheckpointerCopiesTheWAL(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/w.db"
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var auto int
	if err := db.write.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil {
		t.Fatal(err)
	}
	if auto != writerCheckpointPages {
		t.Fatalf("writer checkpoints every %d pages, want %d", auto, writerCheckpointPages)
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// Far fewer pages than the writer's own threshold.
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE filler (b BLOB)`); err != nil {
		t.Fatal(err)
	}
	for range 50 {
		if _, err := db.write.ExecContext(ctx, `INSERT INTO filler VALUES (randomblob(16000))`); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() >= before.Size()+50*16000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("database file %d bytes after 10 s, was %d: nothing checkpointed", st.Size(), before.Size())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Closing a warehouse twice is not an error (tests' cleanups do).
func TestCloseTwice(t *testing.T) {
	db, err := Open(context.Background(), t.TempDir()+"/w.db")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
