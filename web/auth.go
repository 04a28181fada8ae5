package web

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// authKind is how a request proved it holds the token.
type authKind int

const (
	authNone authKind = iota
	// authBearer is an "Authorization: Bearer" header, which a browser
	// never sends by itself: such a request needs no CSRF token.
	authBearer
	// authBasic is HTTP Basic with the token as password: how a browser
	// signs in to read a protected dashboard. The browser resends it by
	// itself, so writes still need the CSRF token.
	authBasic
)

const authKey = "auth"

func authOf(c echo.Context) authKind {
	k, _ := c.Get(authKey).(authKind)
	return k
}

// credentials reads the token from an Authorization header: Bearer TOKEN,
// or Basic with any user name and the token as password.
func credentials(r *http.Request) (authKind, string) {
	h := r.Header.Get("Authorization")
	scheme, rest, _ := strings.Cut(h, " ")
	switch {
	case strings.EqualFold(scheme, "Bearer"):
		return authBearer, strings.TrimSpace(rest)
	case strings.EqualFold(scheme, "Basic"):
		if _, pass, ok := r.BasicAuth(); ok {
			return authBasic, pass
		}
		return authBasic, ""
	}
	return authNone, ""
}

// public answers without the token even when reads need it: the health
// check, and the stylesheet and icon the sign-in error page uses.
func public(path string) bool {
	return path == "/healthz" || path == "/favicon.ico" || strings.HasPrefix(path, "/static/")
}

// authenticate checks a request's credentials from its headers alone,
// before anything reads its body, so a wrong token costs the server no
// more than the headers. It refuses a token in the query string anywhere
// (addresses end up in logs, history and Referer headers), and, when reads
// are protected, any page, API call or /metrics without the token.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.URL.Query().Has(tokenField) {
			return echo.NewHTTPError(http.StatusBadRequest, "The token is never accepted in the address (addresses are kept in logs and browser history): send it as an Authorization header or in the form.")
		}
		if s.cfg.Token == "" || r.URL.Path == pushPath { // push checks collector tokens itself
			return next(c)
		}
		kind, tok := credentials(r)
		if kind != authNone {
			if err := s.checkToken(c, tok); err != nil {
				return err
			}
			c.Set(authKey, kind)
			return next(c)
		}
		if s.cfg.ProtectReads && (r.Method == http.MethodGet || r.Method == http.MethodHead) && !public(r.URL.Path) {
			c.Response().Header().Set("WWW-Authenticate", `Basic realm="restorewatch", charset="UTF-8"`)
			return echo.NewHTTPError(http.StatusUnauthorized, "This dashboard needs its token: sign in with any user name and the token as the password, or send it as an Authorization: Bearer header.")
		}
		return next(c)
	}
}

// checkToken compares a presented token with Config.Token. Wrong tokens
// drain a per-address bucket; once it is empty the address is refused with
// 429 before its token is even compared, so guessing is slow.
func (s *Server) checkToken(c echo.Context, got string) error {
	ip := c.RealIP()
	if s.fails.empty(ip) {
		c.Response().Header().Set("Retry-After", "60")
		return echo.NewHTTPError(http.StatusTooManyRequests, "Too many wrong tokens from this address; wait a minute and try again.")
	}
	if !equal(got, s.cfg.Token) {
		s.fails.allow(ip)
		if s.cfg.ProtectReads {
			c.Response().Header().Set("WWW-Authenticate", `Basic realm="restorewatch", charset="UTF-8"`)
		}
		return echo.NewHTTPError(http.StatusUnauthorized, "This server requires the write token for changes: enter it in the form's token field or send it as an Authorization: Bearer header.")
	}
	return nil
}
