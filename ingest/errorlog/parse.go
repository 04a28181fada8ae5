// Package errorlog reads SQL Server error logs (ERRORLOG, ERRORLOG.n, the
// Linux errorlog, SSMS/xp_readerrorlog exports) and turns them into warehouse
// records: one store.LogRestore per restore completion line with the 3014,
// 4356, 3421, trace-flag 3213 and 3004 lines that belong to it, one
// store.HostSnapshot per startup, and a store.Reject per line it cannot use.
//
// The file is streamed: memory stays flat whatever its size, apart from the
// records held until the instance name is known (see Options.Instance).
package errorlog

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/restorewatch/restorewatch/ingest/unwrap"
	"github.com/restorewatch/restorewatch/store"
)

// Options tells Parse what it cannot learn from the file.
type Options struct {
	// File is the name used in Origin and rejects (the base name of the path).
	File string
	// Instance names the instance (`--instance`). When empty the name comes
	// from the log, in this order: the "Server name is 'X'." line; the host of
	// the SPN line ("MSSQLSvc/host.domain:INST"), with the instance from the
	// SPN or the log path; the instance part of the "Logging SQL Server
	// messages in file '...\MSSQL15.INST\...'" path alone (no host: a last
	// resort, reported in Stats.InstanceSource). A default instance's path
	// (MSSQLSERVER) or a Linux path names nothing.
	Instance string
	// Fallback names the instance when the log names none (a folder's name,
	// `--instance-from-dir`); Stats.InstanceSource is then "fallback".
	Fallback string
	// Progress, when set, is called with the raw bytes read every few MB and
	// once at the end.
	Progress func(bytesRead int64)
}

// Stats summarises one Parse.
type Stats struct {
	Lines    int64  // physical lines
	Entries  int64  // timestamped entries
	Bytes    int64  // raw bytes read
	Encoding string // one of the Enc* names
	// Instance is the name put on the records; InstanceSource says where it
	// came from: "option", "server_name", "spn", "log_path", "fallback" or "" (none).
	Instance       string
	InstanceSource string
	Restores       int64 // LogRestore records emitted
	Hosts          int64 // HostSnapshot records emitted
	Rejects        int64 // lines reported to the sink as rejects (they are not held)
	Backups        int64 // backup completion lines (18264/18265/18266/18270/18276), not imported
	NULs           int64 // NUL bytes dropped (crash padding)
	// Switches counts encoding changes inside the file: logs concatenated
	// across encodings, a UTF-16 log pasted into a UTF-8 file.
	Switches int64
	// Wrappers names what the log came wrapped in and was removed (a
	// docker compose or kubectl prefix, HTML, Markdown; unwrap's names).
	Wrappers []string
	// Ignored counts lines and statements set aside on purpose, by rule
	// (RuleRecoveryStep, RuleBOM, RuleMidFileBOM ...). Lines that are no
	// restore, backup or host message at all are the log's other traffic
	// and counted nowhere.
	Ignored map[string]int64
}

// The rules of Stats.Ignored.
const (
	RuleRecoveryStep = "recovery step (RESTORE ... WITH RECOVERY, 0 pages, no completion line): not a restore"
	RuleBOM          = "byte-order mark or replacement characters before a timestamp (removed, entry read)"
	RuleMidFileBOM   = "byte-order mark where another file starts (logs concatenated; removed)"
	RuleClientRepeat = "client output pasted into the log, repeating a logged 3014 line (same pages and seconds): not a second restore"
)

// recentKept is how many stamped 3014 lines an untimed client copy of one
// is compared with: pasted output follows the log lines it repeats.
const recentKept = 64

const progressEvery = 4 << 20

// Parse streams r (a whole file) and calls sink for every restore, host
// snapshot and reject. A bad line is rejected and skipped; Parse returns an
// error only when reading fails, the sink fails, ctx ends, or records exist
// but no instance name could be found (then no record is emitted).
func Parse(ctx context.Context, r io.Reader, opt Options, sink store.Sink) (Stats, error) {
	p := newParser(opt, sink)
	cr := &countingReader{r: r}
	raw := getReader(cr)
	defer putReader(raw)
	txt := openText(raw)
	defer txt.dec.release()
	p.stats.Encoding = txt.enc
	lr := newLineReader(txt.r)
	defer putReader(lr.br)
	nextProgress := int64(progressEvery)
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return p.stats, fmt.Errorf("errorlog: %s: read: %w", opt.File, err)
		}
		p.lineNo++
		if p.lineNo&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return p.stats, fmt.Errorf("errorlog: %s: %w", opt.File, err)
			}
		}
		if opt.Progress != nil && cr.n >= nextProgress {
			opt.Progress(cr.n)
			nextProgress = cr.n + progressEvery
		}
		if lr.truncated {
			p.reject(fmt.Sprintf("line longer than %d MiB; skipped", maxLine>>20))
			p.endEntry()
			continue
		}
		if k := junkBeforeStamp(line); k > 0 {
			// U+FEFF or U+FFFD (or undecodable units) before a timestamp:
			// what concatenated files and copies from log viewers leave.
			// The entry is read; the junk is counted, not silently dropped.
			line = line[k:]
			p.stats.Ignored[RuleBOM]++
		}
		if txt.damaged(line) {
			what := "invalid UTF-8"
			if txt.enc != EncUTF8 && txt.enc != EncUTF8BOM {
				what = "invalid UTF-16 (unpaired surrogate or a file cut inside a character)"
			}
			p.reject(fmt.Sprintf("%s: %s; line skipped", what, damage(line)))
			p.endEntry()
			continue
		}
		if plainLine(line) {
			p.line(line)
		} else {
			// A container log's prefix, a web page's tags, a Markdown
			// quote: the log's own text is inside.
			for _, t := range p.strip.Line(string(line)) {
				p.line([]byte(t))
			}
		}
		if p.err != nil {
			return p.stats, p.err
		}
	}
	p.stats.Wrappers = p.strip.Removed()
	p.stats.Lines = int64(p.lineNo)
	p.stats.Bytes = cr.n
	p.stats.NULs = lr.nuls
	if d := txt.dec; d != nil {
		p.stats.Switches = d.switches
		if d.boms > 0 {
			p.stats.Ignored[RuleMidFileBOM] += d.boms
		}
	}
	if opt.Progress != nil {
		opt.Progress(cr.n)
	}
	if err := p.finish(); err != nil {
		return p.stats, err
	}
	return p.stats, nil
}

// parser holds the state of one Parse. Handlers live in the files named after
// what they read: restore.go, trace.go, host.go.
type parser struct {
	opt    Options
	sink   store.Sink
	stats  Stats
	err    error // first sink failure; stops the parse
	lineNo int
	stamps stampCache

	cont   contKind // what the current entry wants of its continuation lines
	lastAt time.Time
	utcOff *int // the most recent "UTC adjustment", for every restore
	host   hostState
	rs     restoreState
	spids  map[string]*spidCtx
	naming naming
	held   []heldRecord // records waiting for the instance name
	strip  unwrap.Stripper
	// recent3014 are the newest stamped 3014 lines, newest last.
	recent3014 []line3014Fields
}

// plainLine reports whether a line can wear no wrapper: an entry that
// starts with its stamp (the hot path), or nothing.
func plainLine(line []byte) bool {
	return len(line) == 0 || len(line) > 10 && line[10] == ' ' && looksStamped(line)
}

func newParser(opt Options, sink store.Sink) *parser {
	p := &parser{opt: opt, sink: sink, spids: map[string]*spidCtx{}}
	p.stats.Ignored = map[string]int64{}
	if opt.Instance != "" {
		p.stats.Instance, p.stats.InstanceSource = opt.Instance, "option"
	}
	return p
}

// line handles one physical line of valid UTF-8.
func (p *parser) line(line []byte) {
	if !looksStamped(line) {
		p.continuation(line)
		return
	}
	h, err := p.stamps.parseHeader(line)
	if err != nil {
		p.reject(err.Error())
		p.endEntry()
		return
	}
	p.endEntry()
	p.stats.Entries++
	p.clock(h.at)
	p.entry(&h)
	// Release after the entry, so that a completion line takes the lines
	// meant for it before an older restore of its database is released.
	p.releaseDue(h.at)
}

// continuation handles a line that does not start an entry: banner lines
// 2–4, startup parameters, blank lines, the rest of multi-line messages.
func (p *parser) continuation(line []byte) {
	switch p.cont {
	case contBanner:
		p.host.bannerLine(line)
	case contParams:
		p.host.paramLine(line)
	default:
		if untimedRestore(line) {
			if p.repeats3014(line) {
				p.stats.Ignored[RuleClientRepeat]++
				return
			}
			// A restore message without its stamp (a KB article quoting
			// the log with "Date Time" placeholders): nothing dates it.
			p.reject(fmt.Sprintf("restore message without a usable timestamp: %q; not imported (the log's own file has the times)",
				clip(bytes.TrimSpace(line), 160)))
		}
	}
}

// repeats3014 reports whether an untimed line is a client's copy of a
// stamped 3014 line of this log: the same statement, pages and seconds.
func (p *parser) repeats3014(line []byte) bool {
	t := bytes.TrimSpace(line)
	i := bytes.Index(t, []byte("RESTORE "))
	if i < 0 {
		return false
	}
	f, err := parse3014(string(t[i:]))
	if err != nil {
		return false
	}
	for _, r := range p.recent3014 {
		if r.stmt == f.stmt && r.pages == f.pages && r.seconds == f.seconds {
			return true
		}
	}
	return false
}

// untimedRestore reports whether a line that starts no entry carries a
// restore completion or statistics message.
func untimedRestore(line []byte) bool {
	if !contains(line, " restored") && !contains(line, " successfully processed ") {
		return false
	}
	return reUntimedRestore.Match(line)
}

var reUntimedRestore = regexp.MustCompile(`\b(Database was restored: Database: |Database changes were restored\. Database: |Log was restored\. Database: |Database file (changes )?w(as|ere) restored\. Database: |RESTORE (DATABASE|LOG)\b.* successfully processed \d+ pages)`)

// endEntry closes the entry in progress (its continuation lines are over).
func (p *parser) endEntry() { p.cont = contNone }

type contKind uint8

const (
	contNone contKind = iota
	contBanner
	contParams
)

// entry classifies a timestamped entry by cheap prefix tests; only the few
// lines that matter are converted to strings and parsed further.
func (p *parser) entry(h *header) {
	t := h.text
	if len(t) == 0 {
		return
	}
	if len(h.source) == len("Backup") && string(h.source) == "Backup" && !englishBackup(t) {
		if !p.localized(h) {
			return
		}
		t = h.text
	}
	if len(p.spids) > 0 {
		if c := p.spids[string(h.source)]; c != nil && p.spidLine(c, h) {
			return
		}
	}
	switch t[0] {
	case 'D':
		switch {
		case hasPrefix(t, "Database was restored: "):
			p.completion(h, 18267, store.KindFull, len("Database was restored: "))
		case hasPrefix(t, "Database changes were restored. "):
			p.completion(h, 18271, store.KindDiff, len("Database changes were restored. "))
		case hasPrefix(t, "Database file was restored. "):
			p.completion(h, 18269, store.KindFile, len("Database file was restored. "))
		case hasPrefix(t, "Database file changes were restored. "):
			p.completion(h, 18277, store.KindFile, len("Database file changes were restored. "))
		case hasPrefix(t, "Database backed up. "), hasPrefix(t, "Database differential changes were backed up. "),
			hasPrefix(t, "Database file was backed up. "), hasPrefix(t, "Database file differential changes were backed up. "):
			p.backupCompletion(h)
		default:
			p.hostLine(h)
		}
	case 'L':
		switch {
		case hasPrefix(t, "Log was restored. "):
			p.completion(h, 18268, store.KindLog, len("Log was restored. "))
		case hasPrefix(t, "Log was backed up. "):
			p.backupCompletion(h)
		default:
			p.hostLine(h)
		}
	case 'R':
		switch {
		case hasPrefix(t, "RESTORE ") && contains(t, " successfully processed "):
			p.line3014(h, true)
		case hasPrefix(t, "Restore is complete on database '"):
			p.line4356(h)
		case hasPrefix(t, "Recovery completed for database "):
			p.line3421(h)
		case hasPrefix(t, "Restore"):
			p.phaseStart(h)
		default:
			p.hostLine(h)
		}
	case 'B':
		switch {
		case hasPrefix(t, "BACKUP ") && contains(t, " successfully processed "):
			p.line3014(h, false)
		case hasPrefix(t, "Backup/Restore buffer configuration parameters"):
			p.bufferStart(h)
		case hasPrefix(t, "Backup"):
			p.backupTrace(h)
		}
	case 'T':
		if hasPrefix(t, "The database '") && contains(t, "' is marked RESTORING") {
			p.markedRestoring(h)
			return
		}
		p.hostLine(h)
	default:
		p.hostLine(h)
	}
}

// englishBackup reports whether a line of the Backup source is one of the
// English texts the classifier reads. The completion and 3014 lines come
// from that source only, so only its other lines need the localized
// catalogue: a localized log costs a lookup per backup or restore, an
// English one nothing.
func englishBackup(t []byte) bool {
	switch {
	case hasPrefix(t, "RESTORE "), hasPrefix(t, "BACKUP "):
		return contains(t, " successfully processed ")
	case hasPrefix(t, "Database "), hasPrefix(t, "Log was "), hasPrefix(t, "Restore"), hasPrefix(t, "Backup"),
		hasPrefix(t, "Recovery "), hasPrefix(t, "Error: "):
		return true
	}
	return false
}

// localized rewrites a localized Backup-source line into English in place
// (h.text) and reports whether to go on with it. A line that has the shape of
// a restore statistic in a language the catalogue does not know is rejected:
// a restore must never vanish because the server was not installed in
// English.
func (p *parser) localized(h *header) bool {
	text := string(h.text)
	if en, _, ok := canonical(text); ok {
		h.text = []byte(en)
		return true
	}
	if looksLikeRestoreStat(text) {
		p.reject(fmt.Sprintf("looks like a restore message in an unrecognised language: %q; line skipped", clipString(text, 160)))
		return false
	}
	return true
}

// clipString shortens s for a message, on a rune boundary.
func clipString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// hasPrefix and contains work on the line buffer without converting it.
func hasPrefix(b []byte, s string) bool { return len(b) >= len(s) && string(b[:len(s)]) == s }

func contains(b []byte, s string) bool { return indexOf(b, s) >= 0 }

func indexOf(b []byte, s string) int {
	// bytes.Index with a string argument, without allocating.
	n := len(s)
	if n == 0 {
		return 0
	}
	for i := 0; i+n <= len(b); i++ {
		j := bytes.IndexByte(b[i:], s[0])
		if j < 0 {
			return -1
		}
		i += j
		if i+n <= len(b) && string(b[i:i+n]) == s {
			return i
		}
	}
	return -1
}

// reject reports the current physical line. Rejects are not held for the
// instance name: they name a file and a line, not an instance.
func (p *parser) reject(reason string) {
	p.stats.Rejects++
	p.sink.Reject(store.Reject{File: p.opt.File, Line: p.lineNo, Reason: reason})
}

func (p *parser) origin(line int) store.Origin {
	return store.Origin{Source: "errorlog", File: p.opt.File, Line: line}
}

// clock watches log time: when it goes back (DST, concatenated files),
// nothing held can still be completed by what follows.
func (p *parser) clock(at time.Time) {
	if !p.lastAt.IsZero() && at.Before(p.lastAt.Add(-10*time.Minute)) {
		p.releaseAll()
	}
	p.lastAt = at
}

// finish flushes everything held at EOF and names the instance.
func (p *parser) finish() error {
	p.endEntry()
	p.releaseAll()
	p.closeSnapshot()
	return p.flushHeld(true)
}
