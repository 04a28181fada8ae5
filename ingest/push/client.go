package push

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/store"
)

// Path is the server's endpoint, under its base address.
const Path = "/api/push"

// Options configure a Client.
type Options struct {
	// URL is the central server's base address, https://central:8080.
	// Plain http:// is refused beyond loopback unless Insecure.
	URL      string
	Insecure bool
	// Token is this collector's token (restorewatch token create).
	Token string
	// Spool is the directory batches wait in until acknowledged.
	Spool string
	// CAFile, when set, is a PEM file of the CA(s) that the server's
	// certificate must chain to (a private CA); the system's pool is used
	// otherwise.
	CAFile string
	// Tags, when set, returns the configured tags of an instance, sent
	// with each of its batches.
	Tags func(instance string) map[string]string
	// Logger receives one line per batch sent or refused and per failure.
	Logger *slog.Logger
	// MinBackoff and MaxBackoff bound the wait between failed attempts
	// (1 s and 5 min): it doubles from the first to the second, with
	// jitter, and returns to nothing once a batch is acknowledged.
	MinBackoff, MaxBackoff time.Duration
	// Timeout bounds one request (2 min).
	Timeout time.Duration
}

// Client spools what the collector's passes read and sends it to the
// central server. Records and Derive make it the collector's writer; Run
// sends in the background; Drain sends what is left before a one-shot
// collection ends.
type Client struct {
	opt      Options
	endpoint string
	http     *http.Client
	spool    *spool
	log      *slog.Logger
	wake     chan struct{}
	sendMu   sync.Mutex // one sender at a time
}

// New checks opt and opens (creating) the spool.
func New(opt Options) (*Client, error) {
	u, err := checkURL(opt.URL, opt.Insecure)
	if err != nil {
		return nil, err
	}
	if opt.Token == "" {
		return nil, store.Errorf(store.EINVALID, "push: no collector token (restorewatch token create NAME on the central server)")
	}
	if strings.ContainsAny(opt.Token, " \t\r\n") {
		return nil, store.Errorf(store.EINVALID, "push: the collector token holds white space: check the token file")
	}
	if opt.Spool == "" {
		return nil, store.Errorf(store.EINVALID, "push: no spool directory")
	}
	if opt.MinBackoff <= 0 {
		opt.MinBackoff = time.Second
	}
	if opt.MaxBackoff < opt.MinBackoff {
		opt.MaxBackoff = max(opt.MinBackoff, 5*time.Minute)
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 2 * time.Minute
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if opt.CAFile != "" {
		pem, err := os.ReadFile(opt.CAFile)
		if err != nil {
			return nil, store.Errorf(store.EINVALID, "push: --ca-file: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, store.Errorf(store.EINVALID, "push: --ca-file %s holds no PEM certificate", opt.CAFile)
		}
		tc.RootCAs = pool
	}
	sp, err := openSpool(opt.Spool)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	tr.Proxy = nil // a zone's collector talks to the central server directly
	return &Client{opt: opt, endpoint: strings.TrimSuffix(u.String(), "/") + Path, spool: sp, log: log,
		http: &http.Client{Transport: tr, Timeout: opt.Timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		wake: make(chan struct{}, 1)}, nil
}

// checkURL accepts https:// anywhere and http:// on loopback (or anywhere
// with insecure): the token must not cross a network in clear.
func checkURL(raw string, insecure bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, store.Errorf(store.EINVALID, "push: %q is not an https:// address of a restorewatch server", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, store.Errorf(store.EINVALID, "push: %q: give the server's address only (the token goes in --push-token-file)", u.Redacted())
	}
	if u.Scheme == "http" && !insecure && !loopbackHost(u.Hostname()) {
		return nil, store.Errorf(store.EINVALID, "push: %s is plain HTTP beyond loopback: the token and the restores would cross the network in clear; use https:// (serve --tls-cert) or, on a network you trust, --insecure-push", u.Redacted())
	}
	return u, nil
}

func loopbackHost(h string) bool {
	ip := net.ParseIP(h)
	return h == "localhost" || (ip != nil && ip.IsLoopback())
}

// Records writes what fn hands to the sink to the spool as batches of at
// most BatchRecords records, each synced to disk before Records returns
// nil: then, and only then, may the collector advance its watermarks. The
// summary counts the records read; what they add is known to the server.
func (c *Client) Records(ctx context.Context, source, name string, fn func(store.Sink) error) (store.ImportSummary, error) {
	w := &batchWriter{c: c, source: source, name: name}
	err := fn(w)
	if err == nil {
		err = w.flush(false)
	}
	sum := store.ImportSummary{Source: source, File: name, Read: w.read, Rejects: w.rejects}
	return sum, err
}

// PutBackupSets writes backup sets to the spool in batches of their own,
// synced before it returns; how many are new is known to the server.
func (c *Client) PutBackupSets(ctx context.Context, sets []store.BackupSet) (int64, error) {
	if len(sets) == 0 {
		return 0, nil
	}
	w := &batchWriter{c: c, source: "backups", name: sets[0].Instance}
	for i := range sets {
		w.lines = append(w.lines, line{Backup: &sets[i]})
		if len(w.lines) >= BatchRecords {
			if err := w.flush(false); err != nil {
				return 0, err
			}
		}
	}
	if len(w.lines) == 0 {
		return 0, nil
	}
	return 0, w.flush(false)
}

// FinishedRun spools a pass's run record, so the central server's
// collector page shows how the zone's passes went.
func (c *Client) FinishedRun(ctx context.Context, run store.CollectorRun) error {
	w := &batchWriter{c: c, source: "runs", name: run.Instance, lines: []line{{Run: &run}}}
	return w.flush(false)
}

// Derive wakes the sender: deriving and analysing are the central server's
// work, done when it applies a batch.
func (c *Client) Derive(ctx context.Context) (ingest.Derived, error) {
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return ingest.Derived{}, nil
}

// batchWriter is the store.Sink of one pass.
type batchWriter struct {
	c            *Client
	source, name string
	lines        []line
	batches      int // written so far
	read         int64
	rejects      []store.Reject
}

func (w *batchWriter) History(h store.HistoryRow) error { return w.add(line{History: &h}) }

func (w *batchWriter) LogRestore(l store.LogRestore) error { return w.add(line{Log: &l}) }

func (w *batchWriter) Host(h store.HostSnapshot) error { return w.add(line{Host: &h}) }

func (w *batchWriter) Reject(r store.Reject) {
	w.rejects = append(w.rejects, r)
	w.lines = append(w.lines, line{Reject: &r})
}

func (w *batchWriter) add(l line) error {
	w.read++
	w.lines = append(w.lines, l)
	if len(w.lines) >= BatchRecords {
		return w.flush(true)
	}
	return nil
}

// flush writes the lines held so far as one batch; more when the pass
// goes on. The last batch of a pass is written even when empty (a pass of
// exactly BatchRecords records), so that the server derives after it.
func (w *batchWriter) flush(more bool) error {
	if len(w.lines) == 0 && (more || w.batches == 0) {
		return nil
	}
	id := newBatchID()
	f, err := w.c.spool.create(id)
	if err != nil {
		return err
	}
	w.batches++
	h := Header{Batch: id, Source: w.source, Name: w.name, Records: len(w.lines), More: more}
	if w.c.opt.Tags != nil {
		h.Tags = w.c.opt.Tags(w.name)
	}
	enc, err := newEncoder(f, h)
	if err != nil {
		w.c.spool.discard(f)
		return fmt.Errorf("push: spool: %w", err)
	}
	for _, l := range w.lines {
		if err := enc.put(l); err != nil {
			w.c.spool.discard(f)
			return errLine(w.name, err)
		}
	}
	if err := enc.close(); err != nil {
		w.c.spool.discard(f)
		return fmt.Errorf("push: spool: %w", err)
	}
	if err := w.c.spool.commit(f, id); err != nil {
		return err
	}
	w.lines = w.lines[:0]
	return nil
}

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
	case resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusRequestEntityTooLarge:
		return Result{}, fmt.Errorf("push: %s: %s", resp.Status, msg.Error)
	case resp.StatusCode == http.StatusUnauthorized:
		return Result{}, fmt.Errorf("%w: push: the central server refused this collector's token (revoked, or another server's): %s", errRetry, msg.Error)
	}
	return Result{}, fmt.Errorf("%w: push: %s: %s", errRetry, resp.Status, msg.Error)
}
