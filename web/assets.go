package web

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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

// scriptAsset is an embedded script named by its content hash, as asset
// names a stylesheet.
func scriptAsset(name, path string) ([]byte, string) {
	b, err := static.FS.ReadFile(name)
	if err != nil {
		panic(fmt.Sprintf("web: embedded %s missing: %v", name, err)) // a build defect
	}
	sum := sha256.Sum256(b)
	return b, path + "?v=" + hex.EncodeToString(sum[:6])
}

func (s *Server) handleFavicon(c echo.Context) error {
	b, err := static.FS.ReadFile("favicon.svg")
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=86400")
	return c.Blob(http.StatusOK, "image/svg+xml", b)
}
