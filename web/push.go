package web

import (
	"context"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/restorewatch/restorewatch/store"
)

// PushSink applies the batches that collectors in other network zones push
// (restorewatch collect --push); cmd wires ingest/push's receiver in.
type PushSink interface {
	// Collector returns the name of the collector whose valid token token
	// is; an unknown or revoked token is store.ENOTFOUND.
	Collector(ctx context.Context, token string) (string, error)
	// Push applies one batch from collector (or acknowledges one applied
	// before); a malformed batch is store.EINVALID.
	Push(ctx context.Context, collector string, batch io.Reader) (PushResult, error)
}

// PushResult is the acknowledgement of a batch.
type PushResult struct {
	Batch   string `json:"batch"`
	Status  string `json:"status"` // applied | duplicate
	Records int64  `json:"records"`
	Added   int64  `json:"added"`
}

// pushPath is the endpoint; authenticate leaves its Bearer header to
// handlePush, which checks it against the collectors' tokens instead of the
// dashboard's.
const pushPath = "/api/push"

// maxPush caps a batch's compressed body; a batch of 5,000 records is
// about 200 KiB compressed.
const maxPush = 32 << 20

// handlePush authenticates a collector from its headers alone, before any
// of the body is read (a wrong token costs the headers, and drains the
// address's bucket of wrong collector tokens, which is not the dashboard's:
// guessing the dashboard's token does not stop a collector), then applies
// its batch.
func (s *Server) handlePush(c echo.Context) error {
	if s.cfg.Push == nil {
		return echo.NewHTTPError(http.StatusNotFound, "This server takes no pushed batches.")
	}
	r, ip := c.Request(), c.RealIP()
	if s.pushFails.empty(ip) {
		c.Response().Header().Set("Retry-After", "60")
		return echo.NewHTTPError(http.StatusTooManyRequests, "Too many wrong tokens from this address; wait a minute and try again.")
	}
	kind, tok := credentials(r)
	name := ""
	var err error
	if kind == authBearer && tok != "" {
		name, err = s.cfg.Push.Collector(r.Context(), tok)
	}
	if kind != authBearer || tok == "" || store.ErrorCode(err) == store.ENOTFOUND {
		s.pushFails.allow(ip)
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="restorewatch push"`)
		return echo.NewHTTPError(http.StatusUnauthorized, "A pushed batch needs a valid collector token (restorewatch token create NAME on this server) as an Authorization: Bearer header.")
	}
	if err != nil {
		return err
	}
	if r.ContentLength > maxPush {
		return echo.NewHTTPError(http.StatusRequestEntityTooLarge, "The batch is larger than the push limit.")
	}
	res, err := s.cfg.Push.Push(r.Context(), name, http.MaxBytesReader(c.Response(), r.Body, maxPush))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}
