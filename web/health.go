package web

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

const (
	// healthFresh is how long a ping's answer is reused as it is.
	healthFresh = 2 * time.Second
	// healthStale is how long a successful ping still vouches for the
	// warehouse while the next one is under way (behind a busy read pool).
	healthStale = 30 * time.Second
	// healthTimeout bounds one ping.
	healthTimeout = 2 * time.Second
)

// health remembers the warehouse's last ping, so /healthz costs one query
// every few seconds whatever the request rate: a thousand probes at once
// used to queue a thousand pings behind the read pool and answer 503.
type health struct {
	mu   sync.Mutex
	at   time.Time // when the last ping finished; zero before the first
	err  error
	done chan struct{} // closed when the ping under way finishes; nil when none runs
}

// check answers from the last ping when it is fresh, or from the last
// success while a new ping runs in the background; otherwise (no answer
// yet, or the last one failed or is old) it waits for the new ping.
func (h *health) check(ctx context.Context, ping func(context.Context) error) error {
	h.mu.Lock()
	age := time.Since(h.at)
	if !h.at.IsZero() && age < healthFresh {
		err := h.err
		h.mu.Unlock()
		return err
	}
	if h.done == nil {
		h.done = make(chan struct{})
		go h.refresh(ping, h.done)
	}
	done := h.done
	if !h.at.IsZero() && h.err == nil && age < healthStale {
		h.mu.Unlock()
		return nil
	}
	h.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// refresh pings the warehouse under its own deadline (not a request's: a
// client that gives up must not fail the ping the others wait for).
func (h *health) refresh(ping func(context.Context) error, done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), healthTimeout)
	err := ping(ctx)
	cancel()
	h.mu.Lock()
	h.at, h.err, h.done = time.Now(), err, nil
	h.mu.Unlock()
	close(done)
}

// handleHealth answers 200 when the warehouse answered a query recently.
func (s *Server) handleHealth(c echo.Context) error {
	if err := s.health.check(c.Request().Context(), s.db.Ping); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ok", "version": s.version()})
}
