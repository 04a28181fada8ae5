package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"

	"github.com/restorewatch/restorewatch/store"
)

// CopyFiles copies the warehouse at src, its file and its write-ahead log as
// they stand, to dst and dst-wal, for a scratch warehouse (a dry run's)
// that opens to a committed state of src, without migrating src and
// without holding up its writer. VACUUM INTO (Backup) rebuilds every table
// and index instead, which made a large warehouse's dry run twice as long
// (BENCHMARKS.md, the 10 M import --dry-run row).
//
// The copy happens inside a read transaction on src, which SQLite's WAL
// locks make safe: while it holds a snapshot that reads the log, the log is
// not restarted, so every frame a checkpoint copies into the file during the
// copy is in the copied log too and is applied again when dst opens; while
// it holds one that reads the file alone (the log all checkpointed), no
// checkpoint writes the file at all. Each file is copied as long as it was
// when its copy began, the log last: frames committed before that come
// along, and a torn last one is dropped by SQLite's recovery, which keeps
// the last commit whose checksums hold.
func CopyFiles(ctx context.Context, src, dst string) error {
	// Opened first, closed last: closing any descriptor of a file drops
	// every POSIX lock the process holds on it, the read lock of the
	// connection below included.
	in, err := os.Open(src)
	if err != nil {
		return store.Errorf(store.ENOTFOUND, "store: copy %s: %v", src, err)
	}
	defer in.Close()
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "query_only(1)")
	c, err := sql.Open("sqlite", "file:"+src+"?"+q.Encode())
	if err != nil {
		return fmt.Errorf("store: copy %s: %w", src, err)
	}
	defer c.Close()
	c.SetMaxOpenConns(1)
	conn, err := c.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: copy %s: %w", src, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN`); err != nil {
		return fmt.Errorf("store: copy %s: %w", src, err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`)
	// The first read takes the snapshot and its lock.
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&n); err != nil {
		return fmt.Errorf("store: copy %s: %w", src, err)
	}
	if err := copyFile(ctx, in, dst); err != nil {
		return err
	}
	// SQLite locks nothing in the log file itself.
	wal, err := os.Open(src + "-wal")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: copy %s: %w", src, err)
	}
	defer wal.Close()
	return copyFile(ctx, wal, dst+"-wal")
}

// The copy's chunk, and what runs between two: variables for a test that
// slows the copy down so that the writer and the checkpointer act during it.
var (
	copyChunk int64 = 256 << 20
	copyPause       = func() {}
)

// copyFile copies in, as long as it is now, to a new file dst (on Linux in
// the kernel: os.File's ReadFrom uses copy_file_range), checking ctx
// between chunks. What is appended meanwhile is left: the snapshot does not
// need it, and a log that a busy writer grows faster than a slow disk copies
// would otherwise never end (it cannot restart while the snapshot is held).
func copyFile(ctx context.Context, in *os.File, dst string) error {
	st, err := in.Stat()
	if err != nil {
		return fmt.Errorf("store: copy %s: %w", in.Name(), err)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("store: copy to %s: %w", dst, err)
	}
	for left := st.Size(); left > 0; {
		if err := ctx.Err(); err != nil {
			out.Close()
			return err
		}
		n, err := io.CopyN(out, in, min(left, copyChunk))
		left -= n
		if err == io.EOF {
			break
		}
		if err != nil {
			out.Close()
			return store.Errorf(store.EINVALID, "store: copy %s to %s: %v", in.Name(), dst, err)
		}
		copyPause()
	}
	if err := out.Close(); err != nil {
		return store.Errorf(store.EINVALID, "store: copy %s to %s: %v", in.Name(), dst, err)
	}
	return nil
}
