package errorlog

import (
	"strconv"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// Trace-flag output (3213 buffer blocks, 3004/3014 phases) is written by the
// session that runs the statement, so it is followed per source column
// (spidNN). The completion line comes from the Backup source and names only
// the database; the two meet in takeContext.

const (
	// ctxMaxAge is how long a restore may run: its first trace lines can be
	// this far before its completion line (a 16 TB restore takes hours).
	ctxMaxAge = 48 * time.Hour
	// maxSpids triggers a sweep of stale contexts.
	maxSpids = 64
)

type ctxKind uint8

const (
	ctxUnknown ctxKind = iota // only a 3213 block so far
	ctxRestore
	ctxBackup
)

// spidCtx is what one session's trace lines said about the statement it runs.
type spidCtx struct {
	src      string // the source column, for deterministic tie-breaks
	kind     ctxKind
	db       string
	phases   []store.Phase
	buf      *store.BufferConfig
	bufAt    time.Time
	inBlock  bool // the 3213 labels are still coming
	lastAt   time.Time
	attached *pendingRestore // the held restore that took this context
}

func (c *spidCtx) detach() {
	if c.attached != nil {
		c.attached.ctx = nil
		c.attached = nil
	}
	*c = spidCtx{src: c.src, lastAt: c.lastAt}
}

// ctx returns the context of h's source, creating it.
func (p *parser) ctx(h *header) *spidCtx {
	c := p.spids[string(h.source)]
	if c == nil {
		if len(p.spids) >= maxSpids {
			p.sweepSpids(h.at)
		}
		c = &spidCtx{src: string(h.source)}
		p.spids[c.src] = c
	}
	c.lastAt = h.at
	return c
}

func (p *parser) sweepSpids(now time.Time) {
	for k, c := range p.spids {
		idle := now.Sub(c.lastAt)
		if c.attached == nil && (idle > ctxMaxAge || (c.kind != ctxRestore && c.buf == nil && idle > time.Hour)) {
			delete(p.spids, k)
		}
	}
}

// spidLine sees every entry of a source that has a context first. It takes
// the 3213 label lines and the phase lines that carry no "Restore" prefix;
// it returns false for everything the classifier should still see.
func (p *parser) spidLine(c *spidCtx, h *header) bool {
	t := h.text
	if c.inBlock {
		if p.bufferLabel(c, t) {
			c.lastAt = h.at
			return true
		}
		c.inBlock = false
	}
	if c.kind != ctxRestore && c.attached == nil {
		return false
	}
	if hasPrefix(t, "Zeroing ") || hasPrefix(t, "Opening backup set") || hasPrefix(t, "SetTargetRestoreAge") ||
		hasPrefix(t, "Effective options") || hasPrefix(t, "Starting up database '") ||
		hasPrefix(t, "Parallel redo is ") || hasPrefix(t, "Converting database '") ||
		hasPrefix(t, "Synchronize Database '") || (hasPrefix(t, "Database '") && contains(t, " running the upgrade step")) ||
		isPercentLine(t) {
		p.ctxPhase(c, h)
		return true
	}
	return false
}

// isPercentLine matches "12 percent (1048576/95303680 bytes) processed".
func isPercentLine(t []byte) bool {
	i := 0
	for i < len(t) && isDigit(t[i]) {
		i++
	}
	return i > 0 && hasPrefix(t[i:], " percent (")
}

// ctxPhase records a trace line of the session: on its held restore once the
// completion line took it, else on the context.
func (p *parser) ctxPhase(c *spidCtx, h *header) {
	c.lastAt = h.at
	ph := store.Phase{At: h.at, Text: string(h.text)}
	if c.attached != nil {
		addPhase(&c.attached.rec.Phases, ph)
		return
	}
	addPhase(&c.phases, ph)
}

// phaseStart handles "Restore..." trace lines: "RestoreDatabase: Database X"
// (3004, 2014 wording), "Restore: ...", "Restore(X): ..." (2016+ wording),
// "Restore-Redo ...". Any such text is kept raw as a phase.
func (p *parser) phaseStart(h *header) {
	t := string(h.text)
	db, start := "", false
	switch {
	case strings.HasPrefix(t, "Restore("):
		if name, rest, ok := strings.Cut(t[len("Restore("):], "): "); ok {
			db = name
			start = strings.HasPrefix(rest, "RESTORE ") && strings.HasSuffix(rest, " started")
		}
	case strings.HasPrefix(t, "Restore: BeginRestore (offline) on "):
		db = strings.TrimPrefix(t, "Restore: BeginRestore (offline) on ")
	case strings.HasPrefix(t, "Restore: Attached database "):
		db, _, _ = strings.Cut(strings.TrimPrefix(t, "Restore: Attached database "), " as DBID=")
	default:
		// "RestoreDatabase: Database X", "RestoreLog: Database X": a new statement.
		if verb, rest, ok := strings.Cut(t, ": Database "); ok && !strings.ContainsAny(verb, " (") {
			db, start = rest, true
		}
	}
	c := p.ctx(h)
	if c.attached != nil {
		if !start && (db == "" || strings.EqualFold(db, c.attached.rec.Database)) {
			p.ctxPhase(c, h)
			return
		}
		c.detach() // the session moved on to its next statement
		c.lastAt = h.at
	}
	if start || c.kind != ctxRestore || (db != "" && c.db != "" && !strings.EqualFold(db, c.db)) {
		// A 3213 block printed just before the first phase line belongs to
		// this statement; anything older belongs to a statement that failed.
		keep := c.kind == ctxUnknown && c.buf != nil && h.at.Sub(c.bufAt) <= 2*time.Second
		buf, bufAt := c.buf, c.bufAt
		*c = spidCtx{src: c.src, kind: ctxRestore, lastAt: h.at}
		if keep {
			c.buf, c.bufAt = buf, bufAt
		}
	}
	if c.db == "" {
		c.db = db
	}
	p.ctxPhase(c, h)
}

// backupTrace handles "Backup(X): ...", "BackupDatabase: ..." lines: the
// session runs a backup, so its 3213 block is not a restore's.
func (p *parser) backupTrace(h *header) {
	c := p.ctx(h)
	if c.attached != nil {
		c.detach()
	}
	if c.kind != ctxBackup {
		*c = spidCtx{src: c.src, kind: ctxBackup, lastAt: h.at}
	}
}

// bufferStart handles "Backup/Restore buffer configuration parameters".
func (p *parser) bufferStart(h *header) {
	c := p.ctx(h)
	if c.buf != nil && c.attached == nil {
		// A new block replaces this session's unclaimed one: first let the
		// restores whose hold has ended claim it (a full WITH NORECOVERY
		// followed seconds later by its differential on the same session).
		p.releaseDue(h.at)
	}
	if c.attached != nil {
		c.detach()
		c.lastAt = h.at
	}
	c.buf, c.bufAt, c.inBlock = &store.BufferConfig{}, h.at, true
}

// bufferLabel reads one 3213 label line into the block; false when the line
// is not one of the block's labels.
func (p *parser) bufferLabel(c *spidCtx, t []byte) bool {
	label, value, ok := strings.Cut(string(t), ":")
	if !ok {
		return false
	}
	b := c.buf
	var dst *int64
	unit := int64(1) // multiplier from the value's unit to the field's unit
	switch label {
	case "Memory limit":
		dst, unit = &b.MemoryLimitMB, -1 // MB field: "KB" divides
	case "BufferCount":
		dst = &b.BufferCount
	case "Sets Of Buffers":
		dst = &b.SetsOfBuffers
	case "MaxTransferSize":
		dst, unit = &b.MaxTransferKiB, 0
	case "Min MaxTransferSize":
		dst, unit = &b.MinMaxTransfer, 0
	case "Total buffer space":
		dst, unit = &b.TotalBufferKiB, 0
	case "Tabular data device count":
		dst = &b.TabularDevices
	case "Filesystem i/o alignment":
		dst = &b.IOAlignment
	case "Media Buffer count":
		dst = &b.MediaBufferCount
	case "Media Buffer size":
		dst, unit = &b.MediaBufferKiB, 0
	case "Encode Buffer count":
		dst = &b.EncodeBuffers
	case "Fulltext data device count", "Filestream device count", "TXF device count":
		return true // part of the block, no field of its own
	default:
		return false
	}
	f := strings.Fields(value)
	if len(f) == 0 {
		return true
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || n < 0 {
		return true
	}
	u := ""
	if len(f) > 1 {
		u = strings.ToUpper(f[1])
	}
	switch unit {
	case 0: // KiB fields
		switch u {
		case "MB":
			n *= 1024
		case "GB":
			n *= 1024 * 1024
		case "BYTES", "B":
			n /= 1024
		}
	case -1: // MB field
		switch u {
		case "KB":
			n /= 1024
		case "GB":
			n *= 1024
		}
	}
	*dst = n
	return true
}

// takeContext gives a held restore the trace lines of the session that ran
// it: the newest restoring session of that database, else the newest
// restoring session that never named its database.
func (p *parser) takeContext(pr *pendingRestore) {
	c := p.restoreCtx(pr.rec.Database, pr.at, ctxMaxAge)
	if c == nil {
		c = p.restoreCtx("?", pr.at, ctxMaxAge)
	}
	if c == nil {
		return
	}
	pr.rec.Phases = append(c.phases, pr.rec.Phases...)
	if len(pr.rec.Phases) > maxPhases {
		pr.rec.Phases = pr.rec.Phases[:maxPhases]
	}
	pr.rec.Buffer = c.buf
	c.phases, c.buf, c.inBlock = nil, nil, false
	c.attached, pr.ctx = pr, c
}

// restoreCtx finds an unattached restoring session: of database db, of any
// named database when db is "", or of an unnamed one when db is "?"; its last
// line at most maxAge before at.
func (p *parser) restoreCtx(db string, at time.Time, maxAge time.Duration) *spidCtx {
	var best *spidCtx
	for _, c := range p.spids {
		if c.kind != ctxRestore || c.attached != nil || at.Sub(c.lastAt) > maxAge {
			continue
		}
		switch db {
		case "":
			if c.db == "" {
				continue
			}
		case "?":
			if c.db != "" {
				continue
			}
		default:
			if !strings.EqualFold(c.db, db) {
				continue
			}
		}
		// Map order is random; ties go by source name so the same input
		// always gives the same records.
		if best == nil || c.lastAt.After(best.lastAt) || (c.lastAt.Equal(best.lastAt) && c.src < best.src) {
			best = c
		}
	}
	return best
}

// backupCompletion handles a backup completion line (18264 family): its
// 3014 line, if any, follows within window3014 and says how long it ran.
func (p *parser) backupCompletion(h *header) {
	p.stats.Backups++
	if p.rs.backup != nil {
		p.dropUnknownBlock(*p.rs.backup, -1)
	}
	at := h.at
	p.rs.backup = &at
}

// backupEvent handles a BACKUP 3014 line: the backup is over.
func (p *parser) backupEvent(at time.Time, seconds float64) {
	p.rs.backup = nil
	p.dropUnknownBlock(at, seconds)
}

// dropUnknownBlock drops the 3213 block of a finished backup whose session
// printed no other trace line, so that no restore takes it.
func (p *parser) dropUnknownBlock(end time.Time, seconds float64) {
	if c := p.unknownBlock(end, seconds, ctxMaxAge); c != nil {
		c.buf, c.inBlock = nil, false
	}
}

// matchUnknownBlock gives a restore a 3213 block whose session showed no
// other trace line (TF 3213 without 3004/3014).
func (p *parser) matchUnknownBlock(rec *store.LogRestore) {
	secs := -1.0
	if rec.Has3014 {
		secs = rec.Seconds
	}
	if c := p.unknownBlock(rec.CompletedAt, secs, 24*time.Hour); c != nil {
		rec.Buffer = c.buf
		c.buf, c.inBlock = nil, false
	}
}

// unknownBlock picks the block of an operation that ended at end. A block is
// printed when its operation starts, so when the 3014 seconds are known
// (seconds >= 0) the block nearest to end−seconds wins, if it lies within the
// operation's length or a minute before its start (planning, file zeroing).
// Otherwise the oldest block within maxAge wins: the next completion after a
// block is its own.
func (p *parser) unknownBlock(end time.Time, seconds float64, maxAge time.Duration) *spidCtx {
	var best *spidCtx
	var bestD time.Duration
	start := end.Add(-time.Duration(max(seconds, 0) * float64(time.Second)))
	floor := start.Add(-max(time.Minute, end.Sub(start)))
	for _, c := range p.spids {
		if c.kind != ctxUnknown || c.buf == nil || c.bufAt.After(end) || end.Sub(c.bufAt) > maxAge {
			continue
		}
		var d time.Duration
		if seconds >= 0 {
			if c.bufAt.Before(floor) {
				continue
			}
			d = c.bufAt.Sub(start)
			if d < 0 {
				d = -d
			}
		} else {
			d = c.bufAt.Sub(end) // oldest first
		}
		if best == nil || d < bestD || (d == bestD && c.src < best.src) {
			best, bestD = c, d
		}
	}
	return best
}
