package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/restorewatch/restorewatch/web/view"
)

// csp allows nothing but this origin: no inline script or style (every look
// is a class in the stylesheet), no framing, forms post only here.
const csp = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; form-action 'self'"

// secureHeaders sets the security headers on every response, errors
// included, before the handler writes anything.
func secureHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		return next(c)
	}
}

// rawPath makes echo route on the escaped path always, so a name holding
// "/" (sent as %2F) stays one segment and every path parameter is decoded
// exactly once, by view.ParseSegment.
func rawPath(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		u := c.Request().URL
		u.RawPath = u.EscapedPath()
		return next(c)
	}
}

const (
	csrfCookie  = "rw_csrf"
	csrfField   = "_csrf"
	csrfHeader  = "X-CSRF-Token"
	tokenField  = "token"
	themeCookie = "rw_theme"
	csrfKey     = "csrf"
)

// csrfToken gives every visitor a random double-submit token in a
// SameSite=Strict cookie; forms carry the same value in a hidden field. A
// cross-site form can send the cookie's request but cannot read the value.
func csrfToken(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		tok := ""
		if ck, err := c.Cookie(csrfCookie); err == nil && len(ck.Value) == 43 {
			tok = ck.Value
		} else {
			b := make([]byte, 32)
			_, _ = rand.Read(b)
			tok = base64.RawURLEncoding.EncodeToString(b)
			c.SetCookie(&http.Cookie{Name: csrfCookie, Value: tok, Path: "/", HttpOnly: true,
				SameSite: http.SameSiteStrictMode, Secure: c.IsTLS()})
		}
		c.Set(csrfKey, tok)
		return next(c)
	}
}

// checkWrite enforces the rules for a write: with Config.Token set, the
// token must come as a Bearer header or the "token" field; a request
// authenticated by the Bearer header needs no CSRF token (a browser never
// adds that header cross-site), any other needs the double-submit token.
// field reads a form field (urlencoded, or the fields before a multipart
// upload's files).
func (s *Server) checkWrite(c echo.Context, field func(string) string) error {
	bearer, hasBearer := strings.CutPrefix(c.Request().Header.Get("Authorization"), "Bearer ")
	if s.cfg.Token != "" {
		ok := hasBearer && equal(bearer, s.cfg.Token)
		if !ok && !equal(field(tokenField), s.cfg.Token) {
			return echo.NewHTTPError(http.StatusUnauthorized, "This server requires the write token for changes: enter it in the form's token field or send it as an Authorization: Bearer header.")
		}
		if ok {
			return nil
		}
	}
	want, _ := c.Get(csrfKey).(string)
	got := field(csrfField)
	if got == "" {
		got = c.Request().Header.Get(csrfHeader)
	}
	if want == "" || !equal(got, want) {
		return echo.NewHTTPError(http.StatusForbidden, "The form has expired or did not come from this dashboard (CSRF check failed). Reload the page and submit it again.")
	}
	return nil
}

func equal(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// requireWrite is checkWrite as middleware for urlencoded forms.
func (s *Server) requireWrite(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := s.checkWrite(c, c.FormValue); err != nil {
			return err
		}
		return next(c)
	}
}

// limiter is a token bucket per client IP (the direct peer address: the
// server trusts no proxy header, so a client cannot pick its own key).
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

// allow takes a token from ip's bucket, refilling it for the time passed.
func (l *limiter) allow(ip string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
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
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// rateLimit refuses a client that exceeds its bucket with 429.
func (s *Server) rateLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !s.limiter.allow(c.RealIP()) {
			c.Response().Header().Set("Retry-After", "10")
			return echo.NewHTTPError(http.StatusTooManyRequests, "Too many uploads from this address; wait a few seconds and try again.")
		}
		return next(c)
	}
}

// limitBody caps the request body; reading past it fails with
// *http.MaxBytesError, which the error handler reports as 413.
func (s *Server) limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.ContentLength > s.cfg.MaxUpload {
			return echo.NewHTTPError(http.StatusRequestEntityTooLarge, fmt.Sprintf("The upload is larger than the %s limit.", view.Bytes(s.cfg.MaxUpload)))
		}
		r.Body = http.MaxBytesReader(c.Response(), r.Body, s.cfg.MaxUpload)
		return next(c)
	}
}

// theme returns the theme the visitor chose ("" follows the browser).
func theme(c echo.Context) string {
	if ck, err := c.Cookie(themeCookie); err == nil && (ck.Value == "light" || ck.Value == "dark") {
		return ck.Value
	}
	return ""
}

// localPath accepts only a path on this server as a redirect target, so
// the theme link cannot be turned into an open redirect.
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") || strings.ContainsAny(p, "\r\n") {
		return "/"
	}
	return p
}

// handleTheme stores the theme choice in a cookie and goes back.
func (s *Server) handleTheme(c echo.Context) error {
	set := c.QueryParam("set")
	ck := &http.Cookie{Name: themeCookie, Value: set, Path: "/", MaxAge: 365 * 24 * 3600, SameSite: http.SameSiteLaxMode, HttpOnly: true}
	if set != "light" && set != "dark" {
		ck.Value, ck.MaxAge = "", -1
	}
	c.SetCookie(ck)
	return c.Redirect(http.StatusSeeOther, localPath(c.QueryParam("back")))
}
