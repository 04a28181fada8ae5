package messages

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/restorewatch/restorewatch/ingest/unwrap"
)

// queued is an echoed RESTORE statement waiting for its result, and the
// line that echoed it.
type queued struct {
	echo
	line int
}

// reStatementStart finds where a RESTORE statement starts in an echoed line.
var reStatementStart = regexp.MustCompile(`(?i)\bRESTORE\s+(?:DATABASE|LOG)\b`)

// echoedAll reads the RESTORE statements of one echoed line: a batch
// printed on one line ("RESTORE DATABASE A FROM ...; RESTORE DATABASE B
// FROM ...") is several statements, each waiting for its result.
func echoedAll(text string) []echo {
	var out []echo
	from := 0
	for _, l := range reStatementStart.FindAllStringIndex(text, -1) {
		if l[0] > from && strings.HasSuffix(strings.TrimSpace(text[from:l[0]]), ";") {
			if e, ok := echoed(strings.TrimSpace(text[from:l[0]])); ok {
				out = append(out, e)
			}
			from = l[0]
		}
	}
	if e, ok := echoed(strings.TrimSpace(text[from:])); ok {
		out = append(out, e)
	}
	return out
}

// lastEcho is the newest echoed statement still waiting, which a
// continuation line (FROM, WITH ... NORECOVERY) belongs to; nil when none.
func (p *parser) lastEcho() *echo {
	if len(p.echoes) == 0 {
		return nil
	}
	return &p.echoes[len(p.echoes)-1].echo
}

// pair gives the 3014 line ending at line n its echoed statement. A batch
// (sqlcmd -e, Invoke-Sqlcmd -Verbose, a script pasted above its output)
// echoes its statements and prints their results in the same order. When
// the engine named the database ("Processed ... pages for database"), the
// statement is the oldest waiting one of that database and kind, and the
// statements before it printed nothing (commented out, never run). When it
// did not (an empty backup, a client that drops 4035 lines), only the order
// names the restore: the oldest waiting statement, which must be of the
// same kind; byOrder says so. ok is false when the result cannot be paired:
// the line is rejected, and so is every restore of the batch that only the
// order named, since the order is then wrong.
func (p *parser) pair(d done3014, cur statement, n int) (e echo, byOrder, ok bool) {
	log := strings.HasPrefix(d.statement, "RESTORE LOG")
	if cur.database != "" {
		for i, q := range p.echoes {
			if q.log == log && (q.database == "" || strings.EqualFold(unwrap.Name(q.database), cur.database)) {
				p.echoes = p.echoes[i+1:]
				return q.echo, false, true
			}
		}
		return echo{}, false, true
	}
	if len(p.echoes) == 0 {
		if len(p.byOrder) > 0 && cur.hint == "" && p.opt.Database == "" {
			// More results than echoed statements: the order that
			// named the earlier ones is not the statements' order.
			p.unpair(fmt.Sprintf("the batch printed more results than it echoed statements (the one at line %d has none)", n))
		}
		return echo{}, false, true
	}
	q := p.echoes[0]
	p.echoes = p.echoes[1:]
	if q.log != log && q.database != "" {
		p.reject(n, fmt.Sprintf("%s successfully processed %d pages: names no database, and the statement echoed at line %d in its place is a %s of %q; "+
			"results and statements do not pair up in order, so this result is not imported (re-import with --database NAME if the file restores one database)",
			d.statement, d.pages, q.line, restoreWord(q.log), unwrap.Name(q.database)))
		p.unpair(fmt.Sprintf("the result at line %d does not pair with the statement echoed at line %d", n, q.line))
		p.echoes = nil
		return echo{}, false, false
	}
	return q.echo, q.database != "", true
}

// endBatch closes a batch (a completion stamp, another file, the end): a
// statement still waiting means results and statements did not pair up, and
// the restores only the order named are rejected.
func (p *parser) endBatch() {
	if len(p.echoes) > 0 && len(p.byOrder) > 0 {
		p.unpair(fmt.Sprintf("the statement echoed at line %d printed no result", p.echoes[0].line))
	}
	if len(p.echoes) > 0 {
		p.st.Ignored[RuleNoResult] += int64(len(p.echoes))
	}
	p.echoes, p.byOrder = nil, nil
}

// RuleNoResult counts echoed RESTORE statements that no result followed: a
// script without its output (Restore-DbaDatabase -OutputScriptOnly, a
// script pasted above nothing), output cut short, a statement commented out.
const RuleNoResult = "RESTORE statement echoed with no result after it (a script without its output, or output cut short): nothing to import"

// unpair rejects the held restores of this batch that only the order of the
// echoed statements named.
func (p *parser) unpair(why string) {
	if len(p.byOrder) == 0 {
		return
	}
	lines := p.byOrder
	p.byOrder = nil
	kept := p.undated[:0]
	for _, l := range p.undated {
		if !slices.Contains(lines, l.Origin.Line) {
			kept = append(kept, l)
			continue
		}
		p.reject(l.Origin.Line, fmt.Sprintf("%s successfully processed %d pages: no \"Processed ... pages for database\" line names its database, "+
			"and its place among the echoed statements (%q) cannot be trusted: %s; not imported (re-import with --database NAME if the file restores one database)",
			l.Statement, l.Pages, l.Database, why))
	}
	p.undated = kept
}

func restoreWord(log bool) string {
	if log {
		return "RESTORE LOG"
	}
	return "RESTORE DATABASE"
}

// onlyDatabase names the restore of an empty log backup ("RESTORE LOG
// successfully processed 0 pages", no "Processed" line, no echo) by the
// output's order: when every restore before it in this output was of one
// database, it continues that database's chain. It returns the name and the
// phase that says so, or "" when the output restored none or several.
func (p *parser) onlyDatabase(d done3014) (db, why string) {
	if d.statement != "RESTORE LOG" || d.pages != 0 || len(p.named) != 1 {
		return "", ""
	}
	for _, name := range p.named {
		db = name
	}
	return db, fmt.Sprintf("database named by the output's order: an empty log backup's restore after restores of %s only", db)
}
