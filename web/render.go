package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/restorewatch/restorewatch/web/view"
)

// render writes a component as a complete page. It renders into a buffer
// first, so a failing component becomes a clean error page rather than
// half a page.
func (s *Server) render(c echo.Context, code int, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(c.Request().Context(), &buf); err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.HTMLBlob(code, buf.Bytes())
}

// page fills what every page shares.
func (s *Server) page(c echo.Context, title, nav string) view.Page {
	tok, _ := c.Get(csrfKey).(string)
	return view.Page{Title: title, Nav: nav, Path: c.Request().URL.RequestURI(), Theme: theme(c), CSRF: tok,
		TokenRequired: s.cfg.Token != "", Version: s.version(), CSS: s.cssURL}
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

// cache keeps expensive aggregates (fleet trend, build cohorts, compare
// results) until the warehouse's DataVersion changes. Concurrent requests
// for the same key wait for one computation instead of each starting one.
type cache struct {
	mu      sync.Mutex
	entries map[string]*cacheEntry
}

type cacheEntry struct {
	version string
	done    chan struct{}
	val     any
	err     error
}

func newCache() *cache { return &cache{entries: map[string]*cacheEntry{}} }

// cached returns compute's result for key at the warehouse's current data
// version. The computation runs detached from the request (so a client that
// goes away does not fail the others waiting) with its own deadline.
func cached[T any](ctx context.Context, s *Server, key string, compute func(context.Context) (T, error)) (T, error) {
	var zero T
	version, err := s.db.DataVersion(ctx)
	if err != nil {
		return zero, err
	}
	c := s.cache
	c.mu.Lock()
	e := c.entries[key]
	if e == nil || e.version != version || (isDone(e.done) && e.err != nil) {
		if len(c.entries) > 256 {
			clear(c.entries) // compare pages make many keys; a rare full reset keeps memory bounded
		}
		e = &cacheEntry{version: version, done: make(chan struct{})}
		c.entries[key] = e
		go func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
			defer cancel()
			defer close(e.done)
			defer func() {
				if r := recover(); r != nil { // a bug in one aggregate must not take the server down
					s.log.Error("cached computation panicked", "key", strings.SplitN(key, "\x00", 2)[0], "panic", fmt.Sprint(r))
					e.err = fmt.Errorf("panic computing %s: %v", strings.SplitN(key, "\x00", 2)[0], r)
				}
			}()
			e.val, e.err = compute(cctx)
		}()
	}
	c.mu.Unlock()
	select {
	case <-e.done:
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	if e.err != nil {
		return zero, e.err
	}
	return e.val.(T), nil
}

func isDone(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
