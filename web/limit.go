package web

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/restorewatch/restorewatch/web/view"
)

// limiter is a token bucket per client IP (the direct peer address, or the
// address a trusted proxy names: see clientIP).
type limiter struct {
	mu      sync.Mutex
	burst   float64
	every   time.Duration
	buckets map[string]*bucket
	now     func() time.Time
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newLimiter(burst int, every time.Duration) *limiter {
	return &limiter{burst: float64(burst), every: every, buckets: map[string]*bucket{}, now: time.Now}
}

// refill returns ip's bucket with the tokens earned since it was last seen.
// The caller holds l.mu.
func (l *limiter) refill(ip string) *bucket {
	now := l.now()
	if len(l.buckets) > 10000 { // forget full buckets so the map cannot grow without end
		for k, b := range l.buckets {
			if now.Sub(b.at) > time.Duration(l.burst)*l.every {
				delete(l.buckets, k)
			}
		}
	}
	b := l.buckets[ip]
	if b == nil {
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[ip] = b
	}
	b.tokens = min(l.burst, b.tokens+now.Sub(b.at).Seconds()/l.every.Seconds())
	b.at = now
	return b
}

// allow takes a token from ip's bucket, refilling it for the time passed.
// An IPv6 address shares its /64's bucket (see share).
func (l *limiter) allow(ip string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.refill(share(ip))
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// empty says whether ip's bucket has no token left, without taking one.
func (l *limiter) empty(ip string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refill(share(ip)).tokens < 1
}

// share is the key one client is counted under: an IPv4 address as it is,
// an IPv6 address by its /64 (one host or subscriber is routinely given a
// whole /64 and can pick any address in it; counted apart, four addresses
// of one /64 took every connection).
func share(addr string) string {
	ip := net.ParseIP(addr)
	if ip == nil || ip.To4() != nil {
		return addr
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// rateLimit refuses a client that exceeds l with 429.
func rateLimit(l *limiter, msg string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !l.allow(c.RealIP()) {
				c.Response().Header().Set("Retry-After", "10")
				return echo.NewHTTPError(http.StatusTooManyRequests, msg)
			}
			return next(c)
		}
	}
}

// limitBody caps the request body; reading past it fails with
// *http.MaxBytesError, which the error handler reports as 413.
func limitBody(max int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if r.ContentLength > max {
				return echo.NewHTTPError(http.StatusRequestEntityTooLarge, fmt.Sprintf("The request is larger than the %s limit.", view.Bytes(max)))
			}
			r.Body = http.MaxBytesReader(c.Response(), r.Body, max)
			return next(c)
		}
	}
}

// reserved answers a request on a reserved connection slot (the server is
// at its connection cap, or the client's address at its share) only if it
// is the health check: anything else is 503, and the connection closes.
func reserved(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if reservedConn(r) && r.URL.Path != "/healthz" {
			c.Response().Header().Set("Connection", "close")
			c.Response().Header().Set("Retry-After", "5")
			return echo.NewHTTPError(http.StatusServiceUnavailable, "The server is at its connection limit, or this address at its share of it; try again in a few seconds.")
		}
		return next(c)
	}
}

// clientIP is the client address of a request: the peer's, or, when the
// peer is one of the trusted proxies, the one its X-Forwarded-For names:
// read from the right, the first address that is not itself a trusted
// proxy (the entries left of it are the client's to write). Entries are
// parsed strictly: "ip", "ip:port" and "[v6]:port" give their address;
// anything else ("unknown", an obfuscated name) is skipped. When the
// header names no address, the request is counted under a key of its own
// beside the proxy's, so that such clients' wrong tokens do not lock out
// everyone behind the same proxy. Loopback and private networks are
// trusted only when listed.
func clientIP(proxies []*net.IPNet) echo.IPExtractor {
	if len(proxies) == 0 {
		return echo.ExtractIPDirect()
	}
	trusted := func(ip net.IP) bool {
		for _, n := range proxies {
			if n.Contains(ip) {
				return true
			}
		}
		return false
	}
	return func(r *http.Request) string {
		peer := addrOf(stringAddr(r.RemoteAddr))
		if ip := net.ParseIP(peer); ip == nil || !trusted(ip) {
			return peer
		}
		var entries []string
		for _, h := range r.Header.Values("X-Forwarded-For") {
			entries = append(entries, strings.Split(h, ",")...)
		}
		last := ""
		for i := len(entries) - 1; i >= 0; i-- {
			ip := forwardedIP(strings.TrimSpace(entries[i]))
			if ip == nil {
				continue
			}
			if !trusted(ip) {
				return ip.String()
			}
			last = ip.String()
		}
		if last != "" {
			return last // every hop a trusted proxy: the first of them
		}
		return "unnamed-behind-" + peer
	}
}

// forwardedIP parses one X-Forwarded-For entry: an address, with or
// without a port; nil for anything else.
func forwardedIP(e string) net.IP {
	if ip := net.ParseIP(e); ip != nil {
		return ip
	}
	if host, _, err := net.SplitHostPort(e); err == nil {
		return net.ParseIP(host)
	}
	return nil
}

// stringAddr is a net.Addr of a request's RemoteAddr.
type stringAddr string

func (a stringAddr) Network() string { return "tcp" }
func (a stringAddr) String() string  { return string(a) }
