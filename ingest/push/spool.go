package push

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// spool is the directory of batches written and not yet acknowledged. A
// batch is written to a temporary file, synced, then renamed to its final
// name and the directory synced: a crash leaves either a whole batch or a
// temporary file, which the next start removes (its pass returned an error,
// so no watermark moved past its records). A batch leaves the spool only
// when the server acknowledged it; one the server refuses as malformed moves
// to refused/ for a person to look at, never deleted.
type spool struct {
	dir string
	mu  sync.Mutex // orders the sequence numbers of names
	seq int64
}

const (
	segExt     = ".rwpush"
	tmpPrefix  = ".tmp-"
	refusedDir = "refused"
)

func openSpool(dir string) (*spool, error) {
	if err := os.MkdirAll(filepath.Join(dir, refusedDir), 0o700); err != nil {
		return nil, fmt.Errorf("push: spool %s: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("push: spool %s: %w", dir, err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tmpPrefix) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return &spool{dir: dir}, nil
}

// newBatchID returns 16 random bytes in hex.
func newBatchID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand does not fail
	return hex.EncodeToString(b)
}

// create opens a temporary file for batch id.
func (s *spool) create(id string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(s.dir, tmpPrefix+id), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("push: spool: %w", err)
	}
	return f, nil
}

// commit syncs and closes f, then gives it its final name, which sorts in
// the order batches were written.
func (s *spool) commit(f *os.File, id string) error {
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("push: spool: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("push: spool: %w", err)
	}
	s.mu.Lock()
	seq := max(s.seq+1, time.Now().UnixNano())
	s.seq = seq
	s.mu.Unlock()
	final := filepath.Join(s.dir, fmt.Sprintf("%020d-%s%s", seq, id, segExt))
	if err := os.Rename(f.Name(), final); err != nil {
		return fmt.Errorf("push: spool: %w", err)
	}
	return syncDir(s.dir)
}

// discard removes an unfinished temporary file.
func (s *spool) discard(f *os.File) {
	f.Close()
	_ = os.Remove(f.Name())
}

// pending lists the spooled batches, oldest first.
func (s *spool) pending() ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("push: spool %s: %w", s.dir, err)
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), segExt) {
			out = append(out, filepath.Join(s.dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// idOf returns the batch id in a spooled file's name.
func idOf(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), segExt)
	_, id, _ := strings.Cut(base, "-")
	return id
}

// remove deletes an acknowledged batch.
func (s *spool) remove(path string) error {
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("push: spool: %w", err)
	}
	return syncDir(s.dir)
}

// refuse moves a batch the server refused as malformed out of the queue.
func (s *spool) refuse(path string) error {
	if err := os.Rename(path, filepath.Join(s.dir, refusedDir, filepath.Base(path))); err != nil {
		return fmt.Errorf("push: spool: %w", err)
	}
	return syncDir(s.dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("push: spool: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("push: spool: sync %s: %w", dir, err)
	}
	return nil
}
