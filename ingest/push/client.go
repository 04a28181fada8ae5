package push

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
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

func (w *batchWriter) BackupSet(b store.BackupSet) error { return w.add(line{Backup: &b}) }

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
