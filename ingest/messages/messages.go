// Package messages imports restores from the captured client output of
// RESTORE statements: the SSMS Messages tab, sqlcmd output and SQL Agent job
// step text. The engine's 3014 line ("RESTORE DATABASE successfully processed
// N pages in X seconds (Y MB/sec).") ends each restore and carries its
// engine-measured duration; the "Processed N pages for database 'D'" lines
// before it name the database; SSMS's "Completion time:" stamp dates it.
package messages

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/restorewatch/restorewatch/ingest/textenc"
	"github.com/restorewatch/restorewatch/ingest/unwrap"
	"github.com/restorewatch/restorewatch/store"
)

// Options says where the text comes from and supplies what it lacks: client
// output never names the instance, and only SSMS dates its statements.
type Options struct {
	// File names the input in rejects and record origins.
	File string
	// Instance is the instance that ran the restores (--instance). When
	// empty, the server that sqlcmd -m-1 names in its message headers
	// ("Msg 3014, Level 0, State 1, Server NAME, Line 1"), else Fallback;
	// output that names none of them is an error.
	Instance string
	// Fallback names the instance when neither Instance nor the text does
	// (the folder's name with --instance-from-dir).
	Fallback string
	// Database is used for a restore whose text names no database (an Agent
	// step whose "Processed" messages were cut off, a bare 3014 line).
	Database string
	// At is the completion time for restores not followed by a Completion
	// time stamp (sqlcmd, Agent text): its wall clock and offset are kept.
	// Zero leaves those restores without a time: they are rejected with
	// UntimedAdvice rather than stored (see Stats.Untimed).
	At time.Time
}

// UntimedAdvice is what the import summary tells the user about restores
// that nothing dates: the exact flag and the time to give it.
const UntimedAdvice = "re-import with --at 2025-03-01T02:00:00Z (the time the batch ran, RFC 3339)"

// Stats counts what a parse read. Every line is used (a restore and the
// lines that belong to it), ignored by a rule named in Ignored, or rejected
// (counted in Rejects, each handed to the sink as file:line: reason); lines
// that are no engine message at all (echoed T-SQL, blank lines, "The step
// succeeded.") are client noise and counted nowhere.
type Stats struct {
	Lines    int64 // physical lines read
	Restores int64 // restores handed to the sink
	Backups  int64 // BACKUP statements' 3014 lines, which are not restores
	Failed   int64 // RESTORE statements that ended in error 3013: not restores, not rejects
	// Untimed counts restores that nothing dates (no "Completion time:"
	// stamp after them, no Options.At). They are rejected, not stored: a
	// stored restore without a time is listed nowhere and matches no history
	// row, and re-importing the file with --at would store it a second time
	// beside the first. UntimedAdvice says how to date them.
	Untimed       int64
	UntimedAdvice string // UntimedAdvice when Untimed > 0
	Rejects       int64  // rejects handed to the sink
	// Ignored counts statements and lines set aside on purpose, by rule:
	// "recovery step (RESTORE ... WITH RECOVERY, 0 pages): not a restore",
	// "failed restore attempt (Msg 3201)" and the like.
	Ignored map[string]int64
	Bytes   int64 // raw bytes read
	// Instance is the name put on the restores and InstanceSource where it
	// came from: "option", "sqlcmd_header" or "fallback".
	Instance, InstanceSource string
	// Wrappers lists what the text came wrapped in and was removed
	// (unwrap's names: HTML, Markdown, container log prefixes ...).
	Wrappers []string
}

// The rules of Stats.Ignored that do not carry a message number.
const (
	RuleRecoveryStep = "recovery step (RESTORE ... WITH RECOVERY or STANDBY, 0 pages, no backup read): not a restore"
	RuleBOM          = "byte-order mark or replacement characters before a message (removed, line read)"
)

// needsInstance is the error for output that names no server.
const needsInstance = "captured client output never names its server: give --instance NAME, " +
	"or put the file in a folder named after the server and give --instance-from-dir"

// RuleFailed names the rule for a RESTORE statement that ended in error:
// msg is the first error the statement raised (the cause), 3013 when only
// "terminating abnormally" was seen.
func RuleFailed(msg int) string { return fmt.Sprintf("failed restore attempt (Msg %d)", msg) }

// maxLine caps one line; Agent keeps at most 4,000 characters per step, so
// anything longer is not client output and its tail is dropped rather than
// held in memory.
const maxLine = 1 << 20

// Parse reads captured client output from r and hands each completed RESTORE
// statement to sink as a store.LogRestore with Has3014 set and
// Origin{Source: "messages", Line: the 3014 line}. Its kind is log for
// RESTORE LOG, file for RESTORE DATABASE ... FILE=, and full for any other
// RESTORE DATABASE: a differential restore prints the same 3014 text, so the
// warehouse tells it apart by matching history. A restore whose database is
// named neither by the text nor by opt.Database becomes a store.Reject.
// CompletedAt comes from the next "Completion time:" stamp, else opt.At, else
// stays zero, meaning unknown (counted in Stats.Untimed). Parse fails only
// when opt.Instance is empty, ctx is done, r fails or the sink fails.
func Parse(ctx context.Context, r io.Reader, opt Options, sink store.Sink) (Stats, error) {
	st := Stats{Ignored: map[string]int64{}}
	cr := &textenc.CountingReader{R: r}
	in, err := textenc.UTF8Reader(cr)
	if err != nil {
		return st, fmt.Errorf("messages: read %s: %w", opt.File, err)
	}
	p := &parser{opt: opt, sink: sink, st: &st, seq: map[string]seqState{}, named: map[string]string{}}
	p.opt.Instance = strings.TrimSpace(opt.Instance)
	p.opt.Fallback = strings.TrimSpace(opt.Fallback)
	err = p.run(ctx, bufio.NewReaderSize(in, textenc.BufSize))
	if err == nil && st.Instance == "" && p.instance() == "" {
		err = store.Errorf(store.EINVALID, "messages: %s: %s", opt.File, needsInstance)
	}
	st.Bytes = cr.N
	st.Wrappers = p.strip.Removed()
	if st.Untimed > 0 {
		st.UntimedAdvice = UntimedAdvice
	}
	return st, err
}

// statement is what has been seen of the RESTORE statement in progress.
type statement struct {
	database string // from its 4035 "Processed" lines
	hint     string // from upgrade, conversion and 4356 lines
	echo     echo   // the echoed statement text, when the client printed it
	phases   []store.Phase
	// failed is the number of the first error the statement raised: the
	// cause that the 3013 "terminating abnormally" line will follow.
	failed int
}

type parser struct {
	opt  Options
	sink store.Sink
	st   *Stats
	cur  statement
	// undated holds restores that wait for a Completion time stamp, which
	// SSMS prints once after all the statements of a batch.
	undated []store.LogRestore
	// headerNum and headerLevel are those of a "Msg N, Level L, ..." header,
	// which applies to the message on the next line.
	headerNum, headerLevel int
	// strip removes the wrappers the text was pasted in; it also keeps the
	// server sqlcmd -m-1 headers name.
	strip unwrap.Stripper
	// ready holds dated restores for a while before the sink gets them, so
	// that a later statement can still tell a full from a differential
	// (kind.go); seq is what each database's last restore was.
	ready []store.LogRestore
	seq   map[string]seqState
	// echoes are the echoed RESTORE statements not yet answered, oldest
	// first: a batch echoes its statements, then prints their results in
	// the same order (pair.go). byOrder lists the 3014 lines of this batch
	// whose restore only that order names.
	echoes  []queued
	byOrder []int
	// named holds the databases this output restored (lower case to the
	// name), which can name an empty log backup's restore (pair.go).
	named map[string]string
}

func (p *parser) run(ctx context.Context, br *bufio.Reader) error {
	buf := make([]byte, 0, 4096)
	for {
		var err error
		buf, err = readLine(br, buf)
		if len(buf) > 0 || err == nil {
			p.st.Lines++
			if p.st.Lines&1023 == 0 {
				if cerr := ctx.Err(); cerr != nil {
					return cerr
				}
			}
			if lerr := p.line(string(buf), int(p.st.Lines)); lerr != nil {
				return lerr
			}
		}
		if err == io.EOF {
			p.endBatch()
			if err := p.flush(p.opt.At); err != nil {
				return err
			}
			return p.send()
		}
		if err != nil {
			return fmt.Errorf("messages: read %s: %w", p.opt.File, err)
		}
	}
}

// readLine reads one line into buf, without its end, keeping at most maxLine
// bytes of it.
func readLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	buf = buf[:0]
	for {
		chunk, err := br.ReadSlice('\n')
		if room := maxLine - len(buf); room > 0 {
			buf = append(buf, chunk[:min(len(chunk), room)]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimRight(buf, "\r\n"), err
	}
}

func (p *parser) line(raw string, n int) error {
	lines, junk, bom := p.strip.Text(raw)
	if junk {
		p.st.Ignored[RuleBOM]++
	}
	if bom {
		// Another file starts here (files concatenated with cat or copy
		// /b): a stamp after this line does not date what came before.
		p.cur = statement{}
		p.endBatch()
		p.named = map[string]string{}
		if err := p.flush(p.opt.At); err != nil {
			return err
		}
	}
	for _, t := range lines {
		if err := p.text(t, n); err != nil {
			return err
		}
	}
	return nil
}

// text handles one line of text, its wrappers removed.
func (p *parser) text(s string, n int) error {
	if s == "" {
		return nil
	}
	if g := reHeader.FindStringSubmatch(s); g != nil {
		p.headerNum, p.headerLevel = int(atoi(g[1])), int(atoi(g[2]))
		return nil
	}
	num, level := p.headerNum, p.headerLevel
	p.headerNum, p.headerLevel = 0, 0
	if !strings.Contains(s, "[SQLSTATE ") {
		return p.message(message{text: s, num: num, err: level > 10}, n)
	}
	for _, m := range splitAgent(s) {
		if err := p.message(m, n); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) message(m message, n int) error {
	if m.text == "" {
		return nil
	}
	if wall, off, ok := parseStamp(m.text); ok {
		return p.stamp(wall, off)
	}
	if known, err := p.english(m, n); known || err != nil {
		return err
	}
	// Not an English restore message: a localized one is rewritten into
	// English and read again; one that only has the shape of a restore
	// statistic is rejected, never skipped in silence.
	if en, _, ok := canonical(m.text); ok && en != m.text {
		m.text = en
		_, err := p.english(m, n)
		return err
	}
	switch {
	case looksLikeRestoreStat(m.text):
		p.reject(n, fmt.Sprintf("looks like a restore message in an unrecognised language: %q; not imported", clip(m.text, 160)))
	case reLogCompletion.MatchString(m.text):
		// An error-log line quoted without its stamp (a KB article's "Date
		// Time Backup Log was restored. ..."): nothing dates it.
		p.reject(n, fmt.Sprintf("error-log restore message without a usable timestamp: %q; not imported (import the error log itself)", clip(m.text, 160)))
	}
	return nil
}

// english reads one message in English; known says whether it was one of
// the messages a restore prints.
func (p *parser) english(m message, n int) (known bool, err error) {
	if db, ok := processedDatabase(m); ok {
		if p.cur.database == "" {
			p.cur.database = db
		}
		p.cur.phases = append(p.cur.phases, store.Phase{Text: m.text})
		return true, nil
	}
	if d, ok := parse3014(m); ok {
		return true, p.end(d, n)
	}
	switch {
	case m.num == 3013 || reAbnormal.MatchString(m.text):
		// The statement failed: whatever it processed is no restore.
		if strings.Contains(m.text, "RESTORE") {
			p.st.Failed++
			p.st.Ignored[RuleFailed(firstNonZero(p.cur.failed, 3013))]++
			if len(p.echoes) > 0 {
				p.echoes = p.echoes[1:] // its statement is answered
			}
		}
		p.cur = statement{}
	case rePercent.MatchString(m.text):
		// Progress without a time says nothing about speed.
	case m.err:
		// An error raised by the statement (Msg 3201, 4305 ...): the 3013
		// line that ends it names no cause, so remember the first.
		if p.cur.failed == 0 {
			p.cur.failed = m.num
		}
		return false, nil
	default:
		if db, ok := databaseHint(m.text); ok {
			if p.cur.hint == "" {
				p.cur.hint = db
			}
			p.cur.phases = append(p.cur.phases, store.Phase{Text: m.text})
		} else if es := echoedAll(m.text); len(es) > 0 {
			if len(p.echoes) == 0 {
				p.cur = statement{}
			}
			for _, e := range es {
				p.echoes = append(p.echoes, queued{echo: e, line: n})
			}
		} else if last := p.lastEcho(); last != nil && (last.database != "" || last.from) && len(p.cur.phases) == 0 && reEchoMore.MatchString(m.text) {
			// The statement goes on over lines (FROM, WITH ... NORECOVERY).
			last.more(m.text)
		} else {
			return false, nil
		}
	}
	return true, nil
}

// end closes the statement at its 3014 line.
func (p *parser) end(d done3014, n int) error {
	cur := p.cur
	p.cur = statement{}
	if strings.HasPrefix(d.statement, "BACKUP") {
		p.st.Backups++
		return nil
	}
	e, byOrder, ok := p.pair(d, cur, n)
	if !ok {
		return nil
	}
	cur.echo = e
	if cur.recoveryStep(d) {
		p.recoveryStep(cur, d)
		return nil
	}
	db := unwrap.Name(firstOf(cur.database, cur.hint, cur.echo.database, p.opt.Database))
	var named string
	if db == "" {
		db, named = p.onlyDatabase(d)
	}
	switch {
	case db == "":
		p.reject(n, fmt.Sprintf("%s successfully processed %d pages: no database named (no \"Processed ... pages for database\" line before it); re-import with --database NAME", d.statement, d.pages))
		return nil
	case d.pages < 0:
		p.reject(n, fmt.Sprintf("%s: page count out of range", d.statement))
		return nil
	}
	inst := p.instance()
	if inst == "" {
		return store.Errorf(store.EINVALID, "messages: %s: %s", p.opt.File, needsInstance)
	}
	kind := kindOf(d.statement)
	if cur.echo.page && kind != store.KindLog {
		// A page restore prints "RESTORE DATABASE ... FILE=<name>" like a
		// file restore; only its statement says PAGE.
		kind = store.KindPage
	}
	kind = p.fullOrDiff(kind, db, cur.echo)
	if byOrder && cur.database == "" && cur.hint == "" {
		p.byOrder = append(p.byOrder, n)
	}
	if named != "" {
		cur.phases = append(cur.phases, store.Phase{Text: named})
	}
	p.named[strings.ToLower(db)] = db
	p.undated = append(p.undated, store.LogRestore{
		Instance:  inst,
		Database:  db,
		Kind:      kind,
		Has3014:   true,
		Statement: d.statement,
		Pages:     d.pages,
		Seconds:   d.seconds,
		MBps:      d.mbps,
		Phases:    cur.phases,
		Origin:    store.Origin{Source: "messages", File: p.opt.File, Line: n},
	})
	return nil
}

// instance names the instance of a restore ending now, and notes where the
// name came from.
func (p *parser) instance() string {
	name, src := p.opt.Instance, "option"
	if name == "" {
		name, src = p.strip.Server(), "sqlcmd_header"
	}
	if name == "" {
		name, src = p.opt.Fallback, "fallback"
	}
	if name != "" && p.st.Instance == "" {
		p.st.Instance, p.st.InstanceSource = name, src
	}
	return name
}

func (p *parser) reject(n int, reason string) {
	p.st.Rejects++
	p.sink.Reject(store.Reject{File: p.opt.File, Line: n, Reason: reason})
}
