package web

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/restorewatch/restorewatch/web/view"
)

// render writes a component as a complete page. It renders into a buffer
// first, so a failing component becomes a clean error page rather than
// half a page, and every invisible character a value brings (a
// right-to-left override in a database name, a NUL in a file name) is
// shown as its code point (view.VisibleBytes).
func (s *Server) render(c echo.Context, code int, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(c.Request().Context(), &buf); err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.HTMLBlob(code, view.VisibleBytes(buf.Bytes()))
}

// page fills what every page shares.
func (s *Server) page(c echo.Context, title, nav string) view.Page {
	tok, _ := c.Get(csrfKey).(string)
	return view.Page{Title: title, Nav: nav, Path: c.Request().URL.RequestURI(), Theme: theme(c), CSRF: tok,
		TokenRequired: s.cfg.Token != "" && authOf(c) == authNone, Version: s.version(), CSS: s.cssURL}
}

func (s *Server) version() string {
	if s.cfg.Version == "" {
		return "dev"
	}
	return s.cfg.Version
}

// parseID reads a numeric path parameter; anything else is "not found",
// as a page for that id could not exist.
func parseID(c echo.Context, name string) (int64, error) {
	id, err := strconv.ParseInt(c.Param(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, echo.NewHTTPError(http.StatusNotFound, "There is no such page: the id in the address is not a number.")
	}
	return id, nil
}

// nameParam decodes a name path parameter made by view.Segment.
func nameParam(c echo.Context, name string) (string, error) {
	v, ok := view.ParseSegment(c.Param(name))
	if !ok {
		return "", echo.NewHTTPError(http.StatusBadRequest, "The name in the address is not encoded correctly.")
	}
	return v, nil
}
