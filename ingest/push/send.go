package push

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"time"
)

// Pending returns how many batches wait in the spool.
func (c *Client) Pending() (int, error) {
	p, err := c.spool.pending()
	return len(p), err
}

// Spooled lists the files of the batches waiting in the spool, oldest
// first.
func (c *Client) Spooled() ([]string, error) { return c.spool.pending() }

// Run sends spooled batches until ctx ends: at once (what an earlier run
// left), whenever a pass spooled more, and after a failure once its
// back-off has passed.
func (c *Client) Run(ctx context.Context) {
	failures := 0
	for {
		if err := c.SendAll(ctx); err != nil && ctx.Err() == nil {
			failures++
			d := c.backoff(failures)
			n, _ := c.Pending()
			c.log.Warn("push: central server unreachable or refusing; batches stay spooled", "pending", n,
				"retry_in_ms", d.Milliseconds(), "error", err.Error())
			if !sleep(ctx, d) {
				return
			}
			continue
		}
		failures = 0
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		}
	}
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Drain sends what is spooled, retrying with back-off until the spool is
// empty or ctx ends; it returns how many batches are left and, if any, the
// last reason the server gave (or could not be reached).
func (c *Client) Drain(ctx context.Context) (int, error) {
	var last error
	for failures := 1; ; failures++ {
		err := c.SendAll(ctx)
		if err == nil {
			return 0, nil
		}
		if last == nil || ctx.Err() == nil {
			last = err // not the deadline that cut the last attempt short
		}
		if failures == 1 {
			c.log.Warn("push: central server unreachable or refusing; retrying", "error", err.Error())
		}
		if !sleep(ctx, c.backoff(failures)) {
			n, perr := c.Pending()
			if perr != nil {
				return n, perr
			}
			return n, last
		}
	}
}

// Close closes the connections kept open to the server.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// backoff is the wait after the nth failure in a row: MinBackoff doubled
// n-1 times, at most MaxBackoff, less up to half of it at random so that
// the collectors of an estate do not retry in step.
func (c *Client) backoff(n int) time.Duration {
	d := c.opt.MaxBackoff
	if n < 32 {
		d = min(d, c.opt.MinBackoff<<(n-1))
	}
	return d - time.Duration(rand.Int64N(int64(d)/2+1))
}

// errRetry marks a failure worth retrying (the batch stays in the queue).
var errRetry = errors.New("retry")

// SendAll sends the spooled batches, oldest first, until the spool is empty
// (nil) or one cannot be sent now (the error; that batch and the later ones
// stay). A batch the server refuses as malformed is moved to refused/ and
// logged: retrying it would fail for ever and hold up the others.
func (c *Client) SendAll(ctx context.Context) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	paths, err := c.spool.pending()
	if err != nil {
		return err
	}
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return err
		}
		res, err := c.send(ctx, p)
		switch {
		case errors.Is(err, errRetry):
			return err
		case err != nil:
			c.log.Error("push: the central server refused a batch; it is kept in the spool's refused folder", "file", p, "error", err.Error())
			if rerr := c.spool.refuse(p); rerr != nil {
				return rerr
			}
			continue
		}
		if err := c.spool.remove(p); err != nil {
			return err
		}
		c.log.Info("push: batch applied", "batch", res.Batch, "status", res.Status, "records", res.Records, "added", res.Added)
	}
	return nil
}

// send posts one spooled batch. An error wrapping errRetry leaves it queued;
// any other error means the server refused the batch itself.
func (c *Client) send(ctx context.Context, path string) (Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return Result{}, fmt.Errorf("%w: push: spool: %v", errRetry, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Result{}, fmt.Errorf("%w: push: spool: %v", errRetry, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, f)
	if err != nil {
		return Result{}, fmt.Errorf("%w: push: %v", errRetry, err)
	}
	req.ContentLength = st.Size()
	req.GetBody = func() (io.ReadCloser, error) { return os.Open(path) }
	req.Header.Set("Authorization", "Bearer "+c.opt.Token)
	req.Header.Set("Content-Type", "application/x-ndjson")
	req.Header.Set("Content-Encoding", "gzip")
	resp, err := c.http.Do(req)
	if err != nil {
		return Result{}, fmt.Errorf("%w: push to %s: %v", errRetry, c.endpoint, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var res Result
	var msg struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(body, &msg)
	switch {
	case resp.StatusCode == http.StatusOK:
		if err := json.Unmarshal(body, &res); err != nil || res.Batch != idOf(path) {
			return Result{}, fmt.Errorf("%w: push: the server's acknowledgement names batch %q, not %q", errRetry, res.Batch, idOf(path))
		}
		return res, nil
	case resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusRequestEntityTooLarge,
		resp.StatusCode == http.StatusForbidden: // an instance beyond the token's scope: set aside, the others go on
		return Result{}, fmt.Errorf("push: %s: %s", resp.Status, msg.Error)
	case resp.StatusCode == http.StatusUnauthorized:
		return Result{}, fmt.Errorf("%w: push: the central server refused this collector's token (revoked, or another server's): %s", errRetry, msg.Error)
	}
	return Result{}, fmt.Errorf("%w: push: %s: %s", errRetry, resp.Status, msg.Error)
}
