package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web/view"
)

// statusOf maps an error to the HTTP status the error handler writes: echo's
// own errors keep theirs, store error codes map as listed, anything else is
// an internal error.
func statusOf(err error) int {
	var he *echo.HTTPError
	var mbe *http.MaxBytesError
	var big interface{ TooLarge() bool }
	switch {
	case errors.As(err, &he):
		return he.Code
	case errors.As(err, &mbe), errors.As(err, &big) && big.TooLarge():
		return http.StatusRequestEntityTooLarge
	}
	switch store.ErrorCode(err) {
	case store.EFORBIDDEN:
		return http.StatusForbidden
	case store.ENOTFOUND:
		return http.StatusNotFound
	case store.EINVALID:
		return http.StatusBadRequest
	case store.ECONFLICT:
		return http.StatusConflict
	case store.EUNAVAILABLE:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// messageOf is the sentence the user sees. Internal errors may carry paths
// or SQL, so they get a generic sentence and go to the log instead.
func messageOf(err error, code int) string {
	var he *echo.HTTPError
	var mbe *http.MaxBytesError
	switch {
	case code >= 500 && code != http.StatusServiceUnavailable:
		return "Something went wrong on our side. The details are in the server log."
	case errors.As(err, &mbe):
		return fmt.Sprintf("The upload is larger than the %s limit.", view.Bytes(mbe.Limit))
	case errors.As(err, &he):
		if m, ok := he.Message.(string); ok {
			return m
		}
		return http.StatusText(code)
	}
	return store.ErrorMessage(err)
}

// handleError is the one place errors become responses: JSON for the API,
// a page for everything else.
func (s *Server) handleError(err error, c echo.Context) {
	code := statusOf(err)
	if code == http.StatusInternalServerError && c.Request().Context().Err() != nil && errors.Is(err, context.Canceled) {
		// The client gave up (a tab closed during a slow first view): not
		// a server error, and nobody is left to read the answer. 499 is
		// the access logs' usual word for it.
		s.log.Info("client went away", "method", c.Request().Method, "route", c.Path())
		code = 499
	}
	msg := messageOf(err, code)
	if code >= 500 {
		s.log.Error("request failed", "method", c.Request().Method, "route", c.Path(), "status", code, "error", err)
	}
	if c.Response().Committed {
		return
	}
	if c.Request().ContentLength != 0 {
		// A refused request's body may be unread: close the connection
		// rather than let net/http read what remains (up to 256 KiB,
		// under the read timeout) after it sends the refusal. The read
		// deadline is cut only once the refusal is written: cut before,
		// it cancels the request's context, and the refusal itself could
		// be lost (a 400 arrived as an empty 200 under load).
		c.Response().Header().Set("Connection", "close")
		defer func() {
			_ = http.NewResponseController(c.Response()).Flush()
			_ = http.NewResponseController(c.Response()).SetReadDeadline(time.Now())
		}()
	}
	var werr error
	switch {
	case c.Request().Method == http.MethodHead || c.Request().Context().Err() != nil:
		// A cancelled request (its body's deadline passed, or the client
		// left) gets the status alone: a page would not render.
		werr = c.NoContent(code)
	case strings.HasPrefix(c.Request().URL.Path, "/api/") || c.Request().URL.Path == "/healthz":
		werr = c.JSON(code, map[string]string{"error": msg})
	default:
		title := http.StatusText(code)
		werr = s.render(c, code, view.ErrorPage(s.page(c, title, ""), view.ErrorModel{Status: code, Title: title, Message: msg}))
	}
	if werr != nil {
		s.log.Warn("writing an error response failed", "error", werr)
	}
}
