package web

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/restorewatch/restorewatch/static"
)

// handleAsset serves an embedded stylesheet. Its URL carries the content
// hash, so it may be cached for a year.
func (s *Server) handleAsset(body []byte, ctype string) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		return c.Blob(http.StatusOK, ctype, body)
	}
}

func (s *Server) handleFavicon(c echo.Context) error {
	b, err := static.FS.ReadFile("favicon.svg")
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=86400")
	return c.Blob(http.StatusOK, "image/svg+xml", b)
}

// handleHealth answers 200 when the warehouse answers a query within 2 s.
func (s *Server) handleHealth(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	if err := s.db.Ping(ctx); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ok", "version": s.version()})
}
