package web

import (
	"net"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// checkHost refuses a request whose Host is not a name of this server, with
// 421. A page on another site that rebinds its own name to this server's
// address (DNS rebinding) makes the browser send that site's name as Host:
// refusing it keeps the page from reading the dashboard (and the CSRF
// token in it). Accepted: the address the connection arrived on (an IP
// literal, any port), "localhost", and Config.AllowedHosts.
func (s *Server) checkHost(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !s.hostAllowed(c.Request()) {
			return echo.NewHTTPError(http.StatusMisdirectedRequest, "This server does not answer to that name. Use its address, localhost, or a name given to serve with --allowed-host.")
		}
		return next(c)
	}
}

// noBody refuses a GET, HEAD or OPTIONS that carries a body. No page takes
// one, and net/http would read up to 256 KiB of it after the page is made,
// under the read timeout: a way to hold a connection without the rate
// limits of the forms.
func noBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			if r.ContentLength != 0 {
				return echo.NewHTTPError(http.StatusBadRequest, "A "+r.Method+" request has no body.")
			}
		}
		return next(c)
	}
}

func (s *Server) hostAllowed(r *http.Request) bool {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	if ip := net.ParseIP(host); ip != nil {
		la, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		tcp, ok := la.(*net.TCPAddr)
		return ok && tcp.IP.Equal(ip)
	}
	_, ok := s.hosts[host]
	return ok
}

// hostNames is the set of names checkHost accepts besides addresses:
// Config.AllowedHosts and the host of Config.Addr when it is a name.
func hostNames(cfg Config) map[string]struct{} {
	m := map[string]struct{}{}
	add := func(h string) {
		h = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
		if h != "" && net.ParseIP(h) == nil {
			m[h] = struct{}{}
		}
	}
	for _, h := range cfg.AllowedHosts {
		add(h)
	}
	if h, _, err := net.SplitHostPort(cfg.Addr); err == nil {
		add(h)
	}
	return m
}

// sameOrigin refuses a cross-site write (POST from a page of another
// origin), by the browser's Sec-Fetch-Site header or, from older browsers,
// by Origin against Host. Clients that send neither (curl, scripts) are
// not browsers and are judged by the token and CSRF checks alone.
func (s *Server) sameOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := s.origin.Check(c.Request()); err != nil {
			return echo.NewHTTPError(http.StatusForbidden, "Changes are accepted only from this dashboard's own pages, not from another site.")
		}
		return next(c)
	}
}
