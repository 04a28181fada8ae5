package web

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
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

// limitListener holds at most cap connections open, and at most perAddr
// from one client address, so that one client cannot take every slot.
// Beyond either, a connection gets one of a few reserved slots, which
// answer only /healthz (503 for anything else, see Server.reserved) and
// are closed after reserveTime whatever they do: a monitor's health check
// gets through while one address holds its share, or every slot is taken.
// With no reserved slot free a connection is closed at once. With every
// request's reading bounded in time, a client holding slots loses them
// within a read timeout, and the descriptors of the process stay below its
// limit (cap + reserve + the one being refused).
type limitListener struct {
	net.Listener
	sem     chan struct{}
	reserve chan struct{}
	perAddr int
	exempt  []*net.IPNet // trusted proxies: many clients' connections, no share
	mu      sync.Mutex
	byAddr  map[string]int
	open    atomic.Int64
}

// reserveSlots and reserveTime shape the reserved slots: /healthz answers
// in milliseconds, so a few slots of two seconds serve a monitor, and a
// slow client in one loses it quickly.
const (
	reserveSlots = 8
	reserveTime  = 2 * time.Second
)

// defaultPerAddr is the share of the connection cap one address may hold:
// a quarter, so an office behind one NAT address still fits and one
// client cannot take all.
func defaultPerAddr(n int) int { return max(8, n/4) }

func newLimitListener(ln net.Listener, n, perAddr int) *limitListener {
	return &limitListener{Listener: ln, sem: make(chan struct{}, n), reserve: make(chan struct{}, reserveSlots),
		perAddr: perAddr, byAddr: map[string]int{}}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := share(addrOf(c.RemoteAddr()))
		if l.take(addr) {
			l.open.Add(1)
			return &limitConn{Conn: c, l: l, addr: addr}, nil
		}
		select {
		case l.reserve <- struct{}{}:
			until := time.Now().Add(reserveTime)
			_ = c.SetDeadline(until)
			return &limitConn{Conn: c, l: l, reserved: true, until: until}, nil
		default:
			c.Close() // nothing to offer: refused now rather than queued behind the client holding the slots
		}
	}
}

// take gives addr a general slot if it is under its share and one is free.
func (l *limitListener) take(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byAddr[addr] >= l.perAddr && !l.exempted(addr) {
		return false
	}
	select {
	case l.sem <- struct{}{}:
		l.byAddr[addr]++
		return true
	default:
		return false
	}
}

func (l *limitListener) exempted(addr string) bool {
	ip := net.ParseIP(strings.TrimSuffix(addr, "/64"))
	for _, n := range l.exempt {
		if ip != nil && n.Contains(ip) {
			return true
		}
	}
	return false
}

func (l *limitListener) release(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byAddr[addr]--; l.byAddr[addr] <= 0 {
		delete(l.byAddr, addr)
	}
	<-l.sem
}

func addrOf(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

type limitConn struct {
	net.Conn
	l        *limitListener
	addr     string
	reserved bool      // a reserved slot: /healthz only, closed at until
	until    time.Time // the reserved slot's end
	once     sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		if c.reserved {
			<-c.l.reserve
			return
		}
		c.l.open.Add(-1)
		c.l.release(c.addr)
	})
	return err
}

// clamp keeps a reserved slot's deadlines at its end: the server sets its
// own read deadlines per request, which must not extend the slot.
func (c *limitConn) clamp(t time.Time) time.Time {
	if c.reserved && (t.IsZero() || t.After(c.until)) {
		return c.until
	}
	return t
}

func (c *limitConn) SetDeadline(t time.Time) error { return c.Conn.SetDeadline(c.clamp(t)) }

func (c *limitConn) SetReadDeadline(t time.Time) error { return c.Conn.SetReadDeadline(c.clamp(t)) }

func (c *limitConn) SetWriteDeadline(t time.Time) error { return c.Conn.SetWriteDeadline(c.clamp(t)) }

// connKey carries a request's connection in its context (ConnContext).
type connKey struct{}

// reservedConn reports whether the request came on a reserved slot.
func reservedConn(r *http.Request) bool {
	c, _ := r.Context().Value(connKey{}).(net.Conn)
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	lc, ok := c.(*limitConn)
	return ok && lc.reserved
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
