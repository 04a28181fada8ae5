package web

import (
	"net/http"

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
