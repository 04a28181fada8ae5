package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/restorewatch/restorewatch/store"
)

// fingerprint hashes a file's content with the options that shape its
// records: the same bytes imported with another --instance are another
// import. It reads f with ReadAt, from its start to its end, so a parser
// may read f at the same time.
func fingerprint(f *os.File, kind FileKind, folder string, opt FilesOptions) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "restorewatch import v1\x00%s\x00%s\x00%s\x00%s\x00%d\x00%s\x00", kind, opt.Instance,
		folder, opt.Database, opt.At.UnixNano(), opt.DateFormat)
	// One read per MiB: the copy's default 32 KiB made a read system call
	// per 32 KiB of a file that is read again whole to parse it. The
	// buffers are reused: a folder of 10,000 small error logs allocated
	// (and zeroed) 10 GB of them, more CPU than the hashing.
	buf := hashBufs.Get().(*[]byte)
	defer hashBufs.Put(buf)
	if _, err := io.CopyBuffer(onlyWriter{h}, io.NewSectionReader(f, 0, 1<<62), *buf); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

var hashBufs = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

// onlyWriter hides its writer's other methods from io.CopyBuffer, which
// would otherwise ignore the buffer it is given.
type onlyWriter struct{ io.Writer }

// verdict is what a file's fingerprint says: the fingerprint, and the
// earlier import of the same content when there is one (prior, unchanged);
// err is a file that could not be read or a failed look-up.
type verdict struct {
	fingerprint string
	prior       store.ImportedFile
	unchanged   bool
	err         error
}

// judge fingerprints f and looks the fingerprint up (not with reread) on a
// goroutine of its own, so that the file is hashed on one core while it is
// parsed on another: before, the hash was a whole read of the file ahead of
// the parse.
func (l *Loader) judge(ctx context.Context, f *os.File, path string, kind FileKind, folder string, opt FilesOptions) <-chan verdict {
	ch := make(chan verdict, 1)
	go func() {
		var v verdict
		if v.fingerprint, v.err = fingerprint(f, kind, folder, opt); v.err != nil {
			v.err = store.Errorf(store.EINVALID, "%s: %v", path, v.err)
		} else if !opt.Reread {
			v.prior, v.unchanged, v.err = l.db.ImportedFile(ctx, v.fingerprint)
		}
		ch <- v
	}()
	return ch
}

// overlapFrom is the size from which a file is parsed while it is hashed;
// a smaller one is hashed first.
const overlapFrom = 4 << 20

// errUnchanged stops a parse whose file an earlier run imported whole.
var errUnchanged = errors.New("imported before")

// gateHold is how many records a gate holds before it waits for the
// verdict: a history CSV's parser gets that far ahead of a hash of its file
// in a few milliseconds, an error log's often reaches its end first.
const gateHold = 20000

// gate is the sink a file's parser writes to while the file's fingerprint
// is being computed: until the verdict comes, the records (and rejects)
// wait in it; a new file's then go to the import, in order, and the rest
// pass straight through; an unchanged file's are dropped and the parse is
// stopped, as if it had not been read.
type gate struct {
	sink    store.Sink
	ch      <-chan verdict
	v       verdict
	decided bool
	open    bool // decided, a new file, and nothing held any more
	held    []func() error
}

func (g *gate) History(h store.HistoryRow) error    { return pass(g, h, store.Sink.History) }
func (g *gate) LogRestore(r store.LogRestore) error { return pass(g, r, store.Sink.LogRestore) }
func (g *gate) Host(h store.HostSnapshot) error     { return pass(g, h, store.Sink.Host) }
func (g *gate) BackupSet(b store.BackupSet) error   { return pass(g, b, store.Sink.BackupSet) }
func (g *gate) Reject(r store.Reject)               { _ = pass(g, r, reject) }
func reject(s store.Sink, r store.Reject) error     { s.Reject(r); return nil }

// pass hands one record to the sink once the gate is open, and to hold
// before.
func pass[T any](g *gate, v T, send func(store.Sink, T) error) error {
	if g.open {
		return send(g.sink, v)
	}
	return hold(g, v, send)
}

// hold makes the closure apart from pass, so that a record passed on is
// not moved to the heap for a closure it never needs.
func hold[T any](g *gate, v T, send func(store.Sink, T) error) error {
	return g.put(func() error { return send(g.sink, v) })
}

// put holds one record until the verdict, or hands it on with what was
// held once the verdict is in.
func (g *gate) put(rec func() error) error {
	if !g.decided {
		select {
		case v := <-g.ch:
			g.decide(v)
		default:
			if len(g.held) < gateHold {
				g.held = append(g.held, rec)
				return nil
			}
			g.decide(<-g.ch)
		}
	}
	if g.v.err != nil || g.v.unchanged {
		return errUnchanged
	}
	if err := g.release(); err != nil {
		return err
	}
	g.open = true
	return rec()
}

func (g *gate) decide(v verdict) { g.v, g.decided = v, true }

// release hands the held records on.
func (g *gate) release() error {
	for i, rec := range g.held {
		g.held[i] = nil
		if err := rec(); err != nil {
			g.held = g.held[i+1:]
			return err
		}
	}
	g.held = nil
	return nil
}

// close waits for the verdict and hands on or drops what is still held.
func (g *gate) close() (verdict, error) {
	if !g.decided {
		g.decide(<-g.ch)
	}
	if g.v.err != nil || g.v.unchanged {
		g.held = nil
		return g.v, nil
	}
	err := g.release()
	g.open = err == nil
	return g.v, err
}
