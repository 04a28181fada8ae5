// Package push carries a collector's records from its network zone to a
// central restorewatch serve: the client (collect --push) writes each pass's
// records to an on-disk spool as compressed batches and sends them over
// HTTPS until the server acknowledges them; the receiver (serve's POST
// /api/push) applies a batch through the same ingest.Loader an import uses,
// so the central server stays the warehouse's single writer.
//
// A batch is version 1 of this wire format: gzip-compressed JSON lines, a
// header line then one record per line.
//
//	{"restorewatch_push":1,"batch":"<32 hex>","source":"live","name":"SQL01","records":2,"tags":{"rto":"4h"}}
//	{"history":{…store.HistoryRow…}}
//	{"log":{…store.LogRestore…}}
//
// A record line has exactly one key: history, log, host (store.HostSnapshot),
// reject (store.Reject), backup (store.BackupSet, a backup-history set for
// restore plans) or run (store.CollectorRun, a pass's run record), whose
// value is the store type's JSON encoding.
// Unknown keys are refused rather than dropped, so a collector and a server
// of different versions fail loudly instead of losing a field. Replays are
// harmless twice over: the server remembers applied batch ids, and the
// warehouse's keys deduplicate the facts themselves.
package push

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/restorewatch/restorewatch/store"
)

// Version is the wire format's version, the header's restorewatch_push.
const Version = 1

// Limits of one batch. The client writes at most BatchRecords records per
// batch (a history row is about 1.2 KiB of JSON, so 5,000 are ~6 MiB, a few
// hundred KiB compressed); the server accepts up to MaxRecords and MaxBytes
// decompressed, and lines up to maxLine bytes (a history row with many
// devices and files is a few KiB). The server holds a decoded batch in
// memory, so these bound what one request can make it allocate.
const (
	BatchRecords = 5000
	MaxRecords   = 20_000
	MaxBytes     = 64 << 20
	maxLine      = 1 << 20
)

// What a batch decodes into is bounded too, not only its text: "{}" is
// three bytes of JSON but a 72-byte struct in a slice, so 64 MiB of empty
// objects would become gigabytes. Before a line is decoded its text is
// scanned (shape): a line may hold at most MaxLineObjects objects (a backup
// set of SQL Server's 32,767 files and 64 media families, and itself) and
// strings of at most MaxString bytes; a batch at most MaxObjects objects
// and MaxValues array elements and members. Past them the batch is refused
// (ErrTooLarge, 413) before the memory is spent. The store's Validate
// methods then check each field's own limit (files, families, devices).
const (
	MaxLineObjects = store.MaxBackupFiles + store.MaxMediaFamilies + 16
	MaxObjects     = 200_000
	MaxValues      = 4_000_000
	MaxString      = 32 << 10
	MaxMembers     = 4096 // members of one object
	MaxMapMembers  = 100_000
	structWidth    = 64
	maxTagKey      = 64
	maxTagValue    = 1024
)

// ErrTooLarge is wrapped by the error of a batch beyond a size limit; the
// server answers it with 413.
var ErrTooLarge = tooLarge{}

type tooLarge struct{}

func (tooLarge) Error() string { return "push batch too large" }

// TooLarge marks the error for the web layer, which does not import this
// package.
func (tooLarge) TooLarge() bool { return true }

// Header is a batch's first line.
type Header struct {
	Version int    `json:"restorewatch_push"`
	Batch   string `json:"batch"`  // 32 lowercase hex digits, unique per batch
	Source  string `json:"source"` // the import source, "live"
	Name    string `json:"name"`   // the instance the pass collected
	Records int    `json:"records"`
	// More says that more batches of the same pass follow (a pass larger
	// than a batch): the server derives the instance once, after the last.
	More bool `json:"more,omitempty"`
	// Tags are the instance's tags in the collector's configuration (env,
	// team, rto), which the server records as a collector's own do.
	Tags map[string]string `json:"tags,omitempty"`
}

// line is one record line; exactly one field is set.
type line struct {
	History *store.HistoryRow   `json:"history,omitempty"`
	Log     *store.LogRestore   `json:"log,omitempty"`
	Host    *store.HostSnapshot `json:"host,omitempty"`
	Reject  *store.Reject       `json:"reject,omitempty"`
	Backup  *store.BackupSet    `json:"backup,omitempty"`
	Run     *store.CollectorRun `json:"run,omitempty"`
}

// Batch is a decoded batch.
type Batch struct {
	Header
	lines []line
}

// Runs returns the batch's collector run records.
func (b *Batch) Runs() []store.CollectorRun {
	var out []store.CollectorRun
	for _, l := range b.lines {
		if l.Run != nil {
			out = append(out, *l.Run)
		}
	}
	return out
}

// Instances returns the instances the batch writes: its header's (whose
// tags it sets) and every record's.
func (b *Batch) Instances() []string {
	out := []string{}
	if b.Name != "" {
		out = append(out, b.Name)
	}
	for _, l := range b.lines {
		switch {
		case l.History != nil:
			out = append(out, l.History.Instance)
		case l.Log != nil:
			out = append(out, l.Log.Instance)
		case l.Host != nil:
			out = append(out, l.Host.Instance)
		case l.Backup != nil:
			out = append(out, l.Backup.Instance)
		case l.Run != nil:
			out = append(out, l.Run.Instance)
		}
	}
	return out
}

// Feed hands the batch's records and backup sets to sink in their order;
// run records are not records (see Runs).
func (b *Batch) Feed(sink store.Sink) error {
	for _, l := range b.lines {
		var err error
		switch {
		case l.History != nil:
			err = sink.History(*l.History)
		case l.Log != nil:
			err = sink.LogRestore(*l.Log)
		case l.Host != nil:
			err = sink.Host(*l.Host)
		case l.Backup != nil:
			err = sink.BackupSet(*l.Backup)
		case l.Reject != nil:
			sink.Reject(*l.Reject)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// encoder writes one batch. It is a store.Sink: the collector's pass feeds
// it as it would feed an import.
type encoder struct {
	gz  *gzip.Writer
	enc *json.Encoder
	n   int
}

func newEncoder(w io.Writer, h Header) (*encoder, error) {
	gz := gzip.NewWriter(w)
	e := &encoder{gz: gz, enc: json.NewEncoder(gz)}
	e.enc.SetEscapeHTML(false)
	h.Version = Version
	if err := e.enc.Encode(h); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *encoder) put(l line) error { e.n++; return e.enc.Encode(l) }

func (e *encoder) close() error { return e.gz.Close() }

// Decode reads a batch: the header, then every record line, checking the
// version, the batch id, the limits and that the header's count matches.
// An error names the line it is about; nothing of a bad batch is applied.
func Decode(r io.Reader) (*Batch, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, store.Errorf(store.EINVALID, "push batch: not gzip: %v", err)
	}
	lim := &io.LimitedReader{R: gz, N: MaxBytes + 1}
	sc := bufio.NewScanner(lim)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	b := &Batch{}
	n := 0
	var budget decodeBudget
	for sc.Scan() {
		n++
		text := sc.Bytes()
		if err := budget.take(text); err != nil {
			return nil, store.Errorf(store.EINVALID, "push batch line %d: %w", n, err)
		}
		if n == 1 {
			if err := strict(text, &b.Header); err != nil {
				return nil, store.Errorf(store.EINVALID, "push batch line 1 (header): %v", err)
			}
			if err := b.Header.check(); err != nil {
				return nil, err
			}
			continue
		}
		if len(bytes.TrimSpace(text)) == 0 {
			return nil, store.Errorf(store.EINVALID, "push batch line %d: empty line", n)
		}
		if len(b.lines) >= b.Records {
			return nil, store.Errorf(store.EINVALID, "push batch line %d: more records than the header's %d", n, b.Records)
		}
		var l line
		if err := strict(text, &l); err != nil {
			return nil, store.Errorf(store.EINVALID, "push batch line %d: %v", n, err)
		}
		if k := l.kinds(); k != 1 {
			return nil, store.Errorf(store.EINVALID, "push batch line %d: want one of history, log, host, reject, backup or run, got %d", n, k)
		}
		if err := l.check(); err != nil {
			return nil, store.Errorf(store.EINVALID, "push batch line %d: %s", n, store.ErrorMessage(err))
		}
		b.lines = append(b.lines, l)
	}
	switch err := sc.Err(); {
	case lim.N <= 0:
		return nil, store.Errorf(store.EINVALID, "push batch: more than %d bytes decompressed: %w", MaxBytes, ErrTooLarge)
	case errors.Is(err, bufio.ErrTooLong):
		return nil, store.Errorf(store.EINVALID, "push batch line %d: longer than %d bytes: %w", n+1, maxLine, ErrTooLarge)
	case err != nil:
		return nil, store.Errorf(store.EINVALID, "push batch line %d: %v", n+1, err)
	case n == 0:
		return nil, store.Errorf(store.EINVALID, "push batch: empty")
	case len(b.lines) != b.Records:
		return nil, store.Errorf(store.EINVALID, "push batch: %d records, the header says %d (truncated?)", len(b.lines), b.Records)
	}
	return b, nil
}

// strict decodes one JSON value, refusing unknown fields and trailing data.
func strict(text []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(text))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("data after the JSON value")
	}
	return nil
}

func (h *Header) check() error {
	switch {
	case h.Version != Version:
		return store.Errorf(store.EINVALID, "push batch: wire format version %d, this server reads %d: upgrade the older side", h.Version, Version)
	case !batchID(h.Batch):
		return store.Errorf(store.EINVALID, "push batch: batch id %q is not 32 lowercase hex digits", h.Batch)
	case h.Source == "" || len(h.Source) > 32:
		return store.Errorf(store.EINVALID, "push batch: source %q: want 1 to 32 characters", h.Source)
	case len(h.Name) > 256:
		return store.Errorf(store.EINVALID, "push batch: name longer than 256 characters")
	case len(h.Tags) > 64:
		return store.Errorf(store.EINVALID, "push batch: %d tags, at most 64", len(h.Tags))
	case h.Records < 0 || h.Records > MaxRecords:
		return store.Errorf(store.EINVALID, "push batch: %d records, at most %d", h.Records, MaxRecords)
	}
	for k, v := range h.Tags {
		if k == "" || len(k) > maxTagKey || len(v) > maxTagValue {
			return store.Errorf(store.EINVALID, "push batch: tag %.64q: want a name of 1 to %d bytes and a value of at most %d", k, maxTagKey, maxTagValue)
		}
	}
	return nil
}

func batchID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func (l line) kinds() int {
	n := 0
	for _, set := range []bool{l.History != nil, l.Log != nil, l.Host != nil, l.Reject != nil, l.Backup != nil, l.Run != nil} {
		if set {
			n++
		}
	}
	return n
}

// errLine is what a sink method returns for a record it cannot encode.
func errLine(kind string, err error) error { return fmt.Errorf("push: encode %s: %w", kind, err) }
