package errorlog

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/store"
)

// Attachment windows, in log time. The Backup-source lines of one restore
// (4356, 1826x, 3014) are written within ~60 ms of each other; the windows
// leave room for a busy server without reaching the next restore.
const (
	// holdWindow is how long a restore waits for its 3014 and 3421 lines and
	// its last trace-flag phases before it is emitted.
	holdWindow = 5 * time.Second
	// window3014 is how far after its completion line a 3014 line may come.
	window3014 = 2 * time.Second
	// hintWindow is how far before a completion (or orphan 3014) line a 4356,
	// 3421 or "marked RESTORING" line may come.
	hintWindow = 10 * time.Second
	// maxPending bounds memory on pathological input (many restores within
	// holdWindow); the oldest is emitted early.
	maxPending = 256
	// maxPhases caps the trace-flag lines kept per restore.
	maxPhases = 200
	// clockSlack is how much earlier than the completion line a line of the
	// same restore may be stamped (threads stamp before they write).
	clockSlack = time.Second
)

// pendingRestore is a restore held for the lines that follow its completion line.
type pendingRestore struct {
	rec *store.LogRestore
	at  time.Time
	ctx *spidCtx // the spid whose trace lines it took, for its trailing phases
}

// hint is a 4356, 3421 or "marked RESTORING" line naming a database, kept
// for the completion line of that database just before or after it.
type hint struct {
	at       time.Time
	db       string
	text     string
	phase    bool // add the line to the restore's phases
	recovery *store.RecoveryTiming
}

type restoreState struct {
	pending []*pendingRestore
	hints   []hint // 4356, 3421 and "marked RESTORING" lines, newest last
	backup  *time.Time
}

func (p *parser) utcOffset() *int {
	if p.utcOff == nil {
		return nil
	}
	v := *p.utcOff
	return &v
}

// completion handles a restore completion line (18267/18268/18269/18271/18277).
func (p *parser) completion(h *header, msgID int, kind store.Kind, skip int) {
	text := string(h.text)
	c, err := parseCompletion(text[skip:])
	if err != nil {
		p.reject(fmt.Sprintf("restore completion (message %d): %v", msgID, err))
		return
	}
	rec := &store.LogRestore{
		Database: c.db, Kind: kind, MessageID: msgID, CompletedAt: h.at, UTCOffset: p.utcOffset(),
		FirstLSN: c.firstLSN, LastLSN: c.lastLSN,
		DeviceCount: c.devCount, DeviceType: c.devType, Devices: c.devices,
		Origin: p.origin(p.lineNo),
	}
	if c.fileList != "" {
		// LogRestore has no field for the files of a file restore; the
		// phases keep log text, so the list goes there.
		rec.Phases = append(rec.Phases, store.Phase{At: h.at, Text: "file list: " + c.fileList})
	}
	p.hold(rec, h.at)
}

// hold starts holding a restore: it takes the trace lines of the spid that
// ran it and the 4356/3421 lines that came just before.
func (p *parser) hold(rec *store.LogRestore, at time.Time) {
	pr := &pendingRestore{rec: rec, at: at}
	p.takeContext(pr)
	kept := p.rs.hints[:0]
	for _, hn := range p.rs.hints {
		if !strings.EqualFold(hn.db, rec.Database) || at.Sub(hn.at) > hintWindow {
			kept = append(kept, hn)
			continue
		}
		p.applyHint(pr, hn)
	}
	p.rs.hints = kept
	if len(p.rs.pending) >= maxPending {
		p.release(p.rs.pending[0])
		p.rs.pending = p.rs.pending[1:]
	}
	p.rs.pending = append(p.rs.pending, pr)
}

func (p *parser) applyHint(pr *pendingRestore, hn hint) {
	if hn.phase {
		addPhase(&pr.rec.Phases, store.Phase{At: hn.at, Text: hn.text})
	}
	if hn.recovery != nil && pr.rec.Recovery == nil {
		pr.rec.Recovery = hn.recovery
	}
}

// addHint remembers a line for the restore that may follow; old ones go.
// A hint is kept while a completion line may still take it (hintWindow) or
// a held restore may take it on release.
func (p *parser) addHint(hn hint) {
	floor := hn.at.Add(-hintWindow)
	for _, pr := range p.rs.pending {
		if f := pr.at.Add(-clockSlack); f.Before(floor) {
			floor = f
		}
	}
	kept := p.rs.hints[:0]
	for _, o := range p.rs.hints {
		if !o.at.Before(floor) && !o.at.After(hn.at.Add(hintWindow)) {
			kept = append(kept, o)
		}
	}
	p.rs.hints = append(kept, hn)
}

// line3014 handles "<stmt> successfully processed N pages in X seconds".
func (p *parser) line3014(h *header, restore bool) {
	f, err := parse3014(string(h.text))
	if err != nil {
		p.reject("3014 line: " + err.Error())
		return
	}
	p.recent3014 = append(p.recent3014[max(0, len(p.recent3014)-recentKept+1):], f)
	if !restore {
		p.backupEvent(h.at, f.seconds)
		return
	}
	if pr := p.pending3014(f.stmt, h.at, window3014); pr != nil {
		set3014(pr.rec, f)
		return
	}
	p.orphan3014(h, f)
}

// pending3014 finds the newest held restore without a 3014 line that
// completed at most window before at and whose kind fits the statement.
func (p *parser) pending3014(stmt string, at time.Time, window time.Duration) *pendingRestore {
	for i := len(p.rs.pending) - 1; i >= 0; i-- {
		pr := p.rs.pending[i]
		d := at.Sub(pr.at)
		if !pr.rec.Has3014 && d >= 0 && d <= window && fits(stmt, pr.rec.Kind) {
			return pr
		}
	}
	return nil
}

func set3014(rec *store.LogRestore, f line3014Fields) {
	rec.Has3014, rec.Statement, rec.Pages, rec.Seconds, rec.MBps = true, f.stmt, f.pages, f.seconds, f.mbps
}

// orphan3014 handles a RESTORE 3014 line with no completion line within
// window3014 before it (the line was lost, or the log cut between them). In
// order: a 4356 line just before names the database; else a held restore up
// to holdWindow old takes the late line; else the restoring spid's trace
// lines within the last minute name it; else a "marked RESTORING" line just
// before (NORECOVERY) does. A named orphan is a restore with MessageID 0 and
// its kind from the statement. Without a name the line is rejected: a restore
// of an unknown database cannot be matched to anything.
func (p *parser) orphan3014(h *header, f line3014Fields) {
	// Only a RESTORE DATABASE of 0 pages without a completion line is a
	// recovery step; a 0-page RESTORE LOG read an empty log backup: a
	// restore, named below or rejected.
	if f.pages == 0 && strings.HasPrefix(strings.ToUpper(f.stmt), "RESTORE DATABASE") {
		p.recoveryStep(h, f)
		return
	}
	db := p.hintDB(h.at, true)
	if db == "" {
		// A 3014 line later than window3014 still belongs to a restore held
		// for it, rather than to a guess.
		if pr := p.pending3014(f.stmt, h.at, holdWindow); pr != nil {
			set3014(pr.rec, f)
			return
		}
		if c := p.restoreCtx("", h.at, time.Minute); c != nil {
			db = c.db
		}
	}
	if db == "" {
		db = p.hintDB(h.at, false)
	}
	if db == "" {
		p.reject(fmt.Sprintf("%s 3014 line without a restore completion line or a database to attach it to; skipped", f.stmt))
		return
	}
	rec := &store.LogRestore{
		Database: db, Kind: kindOfStatement(f.stmt), CompletedAt: h.at, UTCOffset: p.utcOffset(),
		Origin: p.origin(p.lineNo),
	}
	set3014(rec, f)
	p.hold(rec, h.at)
}

// recoveryStep sets aside a RESTORE 3014 line of 0 pages with no completion
// line before it: "RESTORE DATABASE d WITH RECOVERY" after a NORECOVERY
// chain reads no backup, writes no restorehistory row and no completion
// line, yet prints "successfully processed 0 pages in N seconds". It is
// no restore. When the restore it completes is still held (same database
// by the 4356 line just before, else the newest), the line becomes one of
// its phases; its recovery timing stays the 3421 line's.
func (p *parser) recoveryStep(h *header, f line3014Fields) {
	p.stats.Ignored[RuleRecoveryStep]++
	db := p.hintDB(h.at, true)
	for i := len(p.rs.pending) - 1; i >= 0; i-- {
		pr := p.rs.pending[i]
		if db == "" || strings.EqualFold(pr.rec.Database, db) {
			addPhase(&pr.rec.Phases, store.Phase{At: h.at, Text: string(h.text)})
			return
		}
	}
}

// hintDB names the database of the newest 4356 line (is4356) or "marked
// RESTORING" line within hintWindow before at.
func (p *parser) hintDB(at time.Time, is4356 bool) string {
	for i := len(p.rs.hints) - 1; i >= 0; i-- {
		hn := p.rs.hints[i]
		if hn.recovery == nil && strings.HasPrefix(hn.text, "Restore is complete") == is4356 &&
			at.Sub(hn.at) <= hintWindow && !hn.at.After(at) {
			return hn.db
		}
	}
	return ""
}

// line4356 handles "Restore is complete on database 'X'.  The database is now available.".
func (p *parser) line4356(h *header) {
	text := string(h.text)
	db := quotedAfter(text, "Restore is complete on database '", "'.")
	if db == "" {
		p.reject("4356 line without a database name")
		return
	}
	p.dbLine(h, db, text)
}

// markedRestoring handles "The database 'X' is marked RESTORING and ...",
// the NORECOVERY counterpart of 4356.
func (p *parser) markedRestoring(h *header) {
	text := string(h.text)
	db := quotedAfter(text, "The database '", "' is marked RESTORING")
	if db == "" {
		return
	}
	if c := p.spids[string(h.source)]; c != nil && (c.kind == ctxRestore || c.attached != nil) {
		p.ctxPhase(c, h) // the spid's own trace; keep the name for an orphan 3014 only
		p.addHint(hint{at: h.at, db: db, text: text})
		return
	}
	p.dbLine(h, db, text)
}

// dbLine keeps a line naming a restored database (4356, "marked
// RESTORING") for its restore. Such lines come just before the completion
// line, which takes them (hold); one that comes after it is taken when the
// restore is released. Deciding late keeps a quick series of restores of one
// database (log shipping) from taking each other's lines.
func (p *parser) dbLine(h *header, db, text string) {
	p.addHint(hint{at: h.at, db: db, text: text, phase: true})
}

// line3421 handles "Recovery completed for database X (database ID n) in ...".
// Every database's startup prints one too; only a restore of the same
// database within the windows takes it, as for dbLine.
func (p *parser) line3421(h *header) {
	db, rt, err := parse3421(string(h.text))
	if err != nil {
		p.reject("3421 line: " + err.Error())
		return
	}
	p.addHint(hint{at: h.at, db: db, recovery: &rt})
}

// releaseDue emits the restores held longer than holdWindow.
func (p *parser) releaseDue(now time.Time) {
	if p.rs.backup != nil && now.Sub(*p.rs.backup) > window3014 {
		at := *p.rs.backup
		p.rs.backup = nil
		p.dropUnknownBlock(at, -1)
	}
	if len(p.rs.pending) == 0 {
		return
	}
	kept := p.rs.pending[:0]
	for _, pr := range p.rs.pending {
		if now.Sub(pr.at) > holdWindow {
			p.release(pr)
		} else {
			kept = append(kept, pr)
		}
	}
	clear(p.rs.pending[len(kept):])
	p.rs.pending = kept
}

// releaseAll emits every held restore (EOF, restart, clock jump).
func (p *parser) releaseAll() {
	if p.rs.backup != nil {
		p.dropUnknownBlock(*p.rs.backup, -1)
		p.rs.backup = nil
	}
	for _, pr := range p.rs.pending {
		p.release(pr)
	}
	p.rs.pending = nil
	p.rs.hints = nil
}

func (p *parser) release(pr *pendingRestore) {
	rec := pr.rec
	if pr.ctx != nil {
		pr.ctx.detach()
	}
	// Lines after the completion line that name its database are its own
	// (the next completion of that database would have taken them first).
	kept := p.rs.hints[:0]
	for _, hn := range p.rs.hints {
		if strings.EqualFold(hn.db, rec.Database) && !hn.at.Before(pr.at.Add(-clockSlack)) && !hn.at.After(pr.at.Add(holdWindow)) {
			p.applyHint(pr, hn)
			continue
		}
		kept = append(kept, hn)
	}
	p.rs.hints = kept
	if rec.Buffer == nil {
		p.matchUnknownBlock(rec)
	}
	// Phases come from several lines (spid trace, 4356, file list); order
	// them by time, keeping log order for equal times.
	sort.SliceStable(rec.Phases, func(i, j int) bool { return rec.Phases[i].At.Before(rec.Phases[j].At) })
	p.emitRestore(rec)
}

func addPhase(ph *[]store.Phase, x store.Phase) {
	if len(*ph) < maxPhases {
		*ph = append(*ph, x)
	}
}
