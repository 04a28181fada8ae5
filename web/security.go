package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/restorewatch/restorewatch/web/view"
)

// csp allows nothing but this origin: no inline script or style (every look
// is a class in the stylesheet), no framing, forms post only here.
const csp = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; form-action 'self'"

// secureHeaders sets the security headers on every response, errors
// included, before the handler writes anything; HSTS only on a TLS
// connection, where a browser honours it.
func secureHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		if c.IsTLS() {
			// Served over TLS here (--tls-cert): browsers keep to HTTPS for
			// a year, so a later plain-HTTP link cannot expose the token.
			h.Set("Strict-Transport-Security", "max-age=31536000")
		}
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

// Limits of an address's query: far above any page's own links (the
// longest, /compare's, is under 300 bytes) and any name SQL Server allows
// (sysname is 128 characters), far below what costs a request CPU by its
// length (a name filter that matches nothing is compared with every
// stored name: issue 40 measured ~7 CPU-minutes for a 63 KB one).
const (
	maxQueryBytes = 4096
	maxQueryValue = 512 // characters
)

// boundedQuery refuses, before any handler reads it, a query longer than
// maxQueryBytes (414) or holding a value longer than maxQueryValue
// characters (400), each with the reason; and answers HEAD as GET (the
// server sends the headers only), so that monitors' HEAD / is not 405.
func boundedQuery(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Method == http.MethodHead {
			r.Method = http.MethodGet // routed as GET; the body goes nowhere
			c.Response().Writer = headWriter{c.Response().Writer}
		}
		if len(r.URL.RawQuery) > maxQueryBytes {
			return echo.NewHTTPError(http.StatusRequestURITooLong, fmt.Sprintf("The query is %d bytes: at most %d.", len(r.URL.RawQuery), maxQueryBytes))
		}
		for k, vs := range r.URL.Query() {
			for _, v := range vs {
				if n := utf8.RuneCountInString(v); n > maxQueryValue {
					return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("%s is %d characters: at most %d (SQL Server's names are at most 128).",
						view.Visible(k), n, maxQueryValue))
				}
			}
		}
		return next(c)
	}
}

// headWriter is a HEAD request's writer: the GET's headers, no body.
type headWriter struct{ http.ResponseWriter }

func (h headWriter) Write(b []byte) (int, error) { return len(b), nil }

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
// token must come as an Authorization header (checked by authenticate
// before any body is read) or the "token" field; a request authenticated
// by a Bearer header needs no CSRF token (a browser never adds that header
// by itself), any other (a Basic header, which a browser resends on its
// own, or the field) needs the double-submit token. field reads a field of
// the request's body (urlencoded, or the fields before a multipart
// upload's files), never of its query string.
func (s *Server) checkWrite(c echo.Context, field func(string) string) error {
	if s.cfg.Token != "" {
		switch authOf(c) {
		case authBearer:
			return nil
		case authBasic:
		default:
			if err := s.checkToken(c, field(tokenField)); err != nil {
				return err
			}
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

// maxForm caps the body of a urlencoded write (a status and its note).
const maxForm = 64 << 10

// requireWrite is checkWrite as middleware for urlencoded forms. The body
// is capped before it is parsed, and only the body's fields count: a token
// in the query string would be written to logs and browser history.
func (s *Server) requireWrite(next echo.HandlerFunc) echo.HandlerFunc {
	return limitBody(maxForm)(func(c echo.Context) error {
		if err := s.checkWrite(c, c.Request().PostFormValue); err != nil {
			return err
		}
		return next(c)
	})
}

// theme returns the theme the visitor chose ("" follows the browser).
func theme(c echo.Context) string {
	if ck, err := c.Cookie(themeCookie); err == nil && (ck.Value == "light" || ck.Value == "dark") {
		return ck.Value
	}
	return ""
}

// localPath accepts only a path on this server as a redirect target, so
// the theme link cannot be turned into an open redirect. Browsers drop tabs
// and newlines from a Location and read a backslash as a slash, so
// "/<TAB>/evil.example" or "/\evil.example" would leave the site: a target
// with a control or format character or a backslash, or whose path starts
// with a second slash or a backslash once decoded, goes to "/" instead.
func localPath(p string) string {
	if len(p) == 0 || len(p) > 4096 || p[0] != '/' || strings.HasPrefix(p, "//") || strings.ContainsRune(p, '\\') || hasControl(p) {
		return "/"
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Opaque != "" || u.User != nil || u.Host != "" || !strings.HasPrefix(u.Path, "/") {
		return "/"
	}
	if strings.HasPrefix(u.Path, "//") || strings.HasPrefix(u.Path, "/\\") || hasControl(u.Path) {
		return "/"
	}
	return p
}

// hasControl reports a control or format character (ASCII or Unicode,
// such as a tab or a right-to-left override) or invalid UTF-8 in p.
func hasControl(p string) bool {
	for _, r := range p {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			return true
		}
	}
	return false
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
