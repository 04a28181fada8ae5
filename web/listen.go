package web

import (
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the server's timeouts and connection cap (Config fields).
const (
	defaultReadHeaderTimeout = 10 * time.Second
	defaultReadTimeout       = 30 * time.Second
	defaultIdleTimeout       = 60 * time.Second
	defaultUploadIdle        = 30 * time.Second
	// uploadChunk is what an upload must deliver within each UploadIdle of
	// waiting: about 2 KiB/s at the defaults.
	uploadChunk = 64 << 10
	// fdReserve are the descriptors kept out of the connection cap for the
	// warehouse, its temporary sort files and the process itself.
	fdReserve   = 128
	maxConnsCap = 4096
)

// defaultMaxConns derives the connection cap from the descriptor limit, so
// connections can never take the descriptors the warehouse needs (nor make
// accept fail with "too many open files").
func defaultMaxConns() int {
	n := fdLimit()
	if n <= 0 {
		return 1024
	}
	return max(16, min(maxConnsCap, n-fdReserve))
}

// limitListener holds at most cap connections open: Accept waits for one to
// close. With every request's reading bounded in time, a client holding
// slots loses them within a read timeout, and the descriptors of the process
// stay below its limit.
type limitListener struct {
	net.Listener
	sem       chan struct{}
	open      atomic.Int64
	closeOnce sync.Once
	done      chan struct{}
}

func newLimitListener(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, sem: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	l.open.Add(1)
	return &limitConn{Conn: c, l: l}, nil
}

func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.open.Add(-1)
		<-c.l.sem
	})
	return err
}

// uploadBody reads an authenticated upload under a moving deadline: the
// client has idle of waiting time (time the server spends importing does
// not count) to deliver each uploadChunk bytes. A large upload may take as
// long as it needs; a client that trickles bytes is cut off.
type uploadBody struct {
	r      io.Reader
	rc     *http.ResponseController
	idle   time.Duration
	waited time.Duration // waiting time since the last full chunk
	got    int64         // bytes since the last full chunk
}

func (u *uploadBody) Read(p []byte) (int, error) {
	left := u.idle - u.waited
	if left <= 0 {
		left = time.Millisecond
	}
	start := time.Now()
	if err := u.rc.SetReadDeadline(start.Add(left)); err != nil && err != http.ErrNotSupported {
		return 0, err
	}
	n, err := u.r.Read(p)
	u.waited += time.Since(start)
	u.got += int64(n)
	if u.got >= uploadChunk {
		u.got, u.waited = 0, 0
	}
	return n, err
}

// preAuthBody lets at most n bytes of a request body through until open is
// called: what a client may make the server read before it has shown the
// token (or the CSRF token) is bounded.
type preAuthBody struct {
	r      io.Reader
	n      int64
	opened bool
}

// errPreAuth is returned when a form's fields before its first file exceed
// what is read before the checks.
var errPreAuth = errors.New("the form's fields exceed what is read before the token is checked")

func (b *preAuthBody) Read(p []byte) (int, error) {
	if b.opened {
		return b.r.Read(p)
	}
	if b.n <= 0 {
		return 0, errPreAuth
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	n, err := b.r.Read(p)
	b.n -= int64(n)
	return n, err
}

func (b *preAuthBody) open(r io.Reader) { b.r, b.opened = r, true }
